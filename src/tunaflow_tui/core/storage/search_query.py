"""Turning whatever the user typed into a safe FTS5 match expression."""

from __future__ import annotations

import unicodedata

SNIPPET_START = "«"
SNIPPET_END = "»"


def fts_match_expression(text: str) -> str | None:
    """An FTS5 expression requiring every word of ``text`` (as a word or prefix); None if nothing to find.

    Each word is quoted as an FTS5 string, so quotes, ``AND``/``OR``/``NOT``, ``*``, ``^``, ``:``,
    parentheses and column filters are searched for literally instead of being parsed. Words without
    any letter or digit, and control characters, are dropped, since the tokenizer would index nothing for them.
    """
    # Control, format and lone-surrogate characters cannot be indexed and some cannot reach SQLite.
    cleaned = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Cs") else ch for ch in text)
    terms = [word for word in cleaned.split() if any(ch.isalnum() for ch in word)]
    if not terms:
        return None
    return " ".join('"' + word.replace('"', '""') + '"*' for word in terms)
