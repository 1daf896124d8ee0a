"""Counted nouns as people write them: "1 file", "3 files" — never a noun with "(s)" stuck to it."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``noun`` for one, ``many`` (default: ``noun`` + "s") for any other count, without the number."""
    return noun if count == 1 else (many or noun + "s")


def counted(count: int, noun: str, many: str | None = None) -> str:
    """The count and its noun: ``counted(1, "file")`` is "1 file", ``counted(2, "file")`` "2 files"."""
    return f"{count} {plural(count, noun, many)}"
