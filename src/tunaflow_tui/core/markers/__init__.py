"""The marker protocol: find plan proposals, subtask completions, review verdicts and consensus
blocks in an agent's reply, scoped by the role that wrote it. Never imports textual or rich."""

from tunaflow_tui.core.markers.scanner import scrub_markers

__all__ = ["scrub_markers"]
