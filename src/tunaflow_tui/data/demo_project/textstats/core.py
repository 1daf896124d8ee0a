"""Counting words and lines."""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


def words(text: str) -> list[str]:
    """The words of ``text``, in order, lower-cased, without punctuation."""
    return [match.group(0).lower() for match in _WORD.finditer(text)]


def word_count(text: str) -> int:
    """How many words ``text`` contains."""
    return len(words(text))


def line_count(text: str) -> int:
    """How many lines ``text`` contains (a final line without a newline counts)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def average_word_length(text: str) -> float:
    """The mean length of the words in ``text``; 0.0 when there are none."""
    found = words(text)
    if not found:
        return 0.0
    return sum(len(word) for word in found) / len(found)
