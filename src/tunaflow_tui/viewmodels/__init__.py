"""Plain, immutable data that widgets display (no Textual, no database rows)."""
