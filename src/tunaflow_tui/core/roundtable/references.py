"""Whom a sequential answer responds to: the earlier speakers it names or quotes.

In sequential mode a seat reads the answers given before it; the user should see that it answers
them. A speaker counts when the answer names them (as a whole word, any case) or quotes them: a
quoted passage (in quotation marks, or a ``>`` line) of at least :data:`MIN_QUOTE_CHARS` characters
that appears in their answer, whitespace and case aside.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

MIN_QUOTE_CHARS = 12
_QUOTED = re.compile(r"[\"“«„「『]([^\"”»“」』\n]{" + str(MIN_QUOTE_CHARS) + r",})[\"”»“」』]")
_BLOCKQUOTE = re.compile(r"^\s*>\s?(.+)$", re.MULTILINE)


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def quoted_passages(text: str) -> list[str]:
    """Passages ``text`` quotes: in quotation marks, or on ``>`` lines."""
    found = [m.group(1) for m in _QUOTED.finditer(text)]
    found += [m.group(1) for m in _BLOCKQUOTE.finditer(text)]
    return [passage.strip() for passage in found if len(passage.strip()) >= MIN_QUOTE_CHARS]


def names_speaker(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` as a whole word (any case)."""
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE) is not None


def responds_to(answer: str, speaker: str, earlier: Mapping[str, str]) -> tuple[str, ...]:
    """The speakers of ``earlier`` (name → their answer) that ``answer`` names or quotes, in ``earlier``'s order.

    ``speaker`` (the answer's own author) is never listed.
    """
    quotes = [_norm(passage) for passage in quoted_passages(answer)]
    result: list[str] = []
    for name, their_text in earlier.items():
        if name.casefold() == speaker.casefold():
            continue
        theirs = _norm(their_text)
        if names_speaker(answer, name) or any(quote and quote in theirs for quote in quotes):
            result.append(name)
    return tuple(result)
