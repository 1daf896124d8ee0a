"""Row ids as typed by a person: whole numbers SQLite can hold (its INTEGER is 64-bit signed)."""

from __future__ import annotations

MAX_ROW_ID = 2**63 - 1
"""The largest id a row can have; a larger number names nothing (SQLite cannot even compare it)."""


def spelled_id(text: str) -> int | None:
    """The number ``text`` spells in ASCII digits (``3``, ``branch:3``, ``#3``), or None when it spells none."""
    digits = text.strip().removeprefix("branch:").removeprefix("#")
    return int(digits) if digits.isascii() and digits.isdigit() else None


def beyond_any_row(text: str | int) -> bool:
    """Whether ``text`` spells an id larger than any row can have."""
    number = text if isinstance(text, int) else spelled_id(text)
    return number is not None and number > MAX_ROW_ID
