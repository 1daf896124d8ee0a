"""Numbers read out of an engine's decoded JSON, which may hold anything at any key."""

from __future__ import annotations


def as_int(value: object) -> int:
    """``value`` if it is an integer (a boolean is not), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def token_count(value: object) -> int:
    """A token count: a non-negative integer, else 0 (a negative or non-numeric count means nothing)."""
    return max(as_int(value), 0)
