"""The permission widgets, together."""
