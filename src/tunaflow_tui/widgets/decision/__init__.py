"""The decision widgets, together."""
