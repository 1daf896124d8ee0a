"""Agent engines: turn a prompt into a stream of typed events. Never imports textual or rich."""
