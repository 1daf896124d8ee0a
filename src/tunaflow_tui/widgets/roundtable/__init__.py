"""The roundtable widgets, together."""
