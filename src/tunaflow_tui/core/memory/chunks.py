"""Cutting a message into chunks of at most 800 characters for embedding, keeping their offsets.

Boundaries are chosen in order of preference: between paragraphs (a fenced code block counts as
one paragraph, so it stays whole wherever it fits), between sentences (or lines, inside code),
between words, and only then inside a word (text in scripts written without spaces, long URLs,
base64). A cut inside a word never separates a character from the marks, joiners or Hangul
jamo that complete it. Neighbouring pieces are packed greedily up to the limit; a paragraph too
long for one chunk is cut on its own, without borrowing from its neighbours.

Each chunk's text is exactly ``message[chunk.start:chunk.end]`` (stripped of surrounding
whitespace), so a hit can point back into its message. Deterministic, and linear in the length of
the message.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass

MAX_CHUNK_CHARS = 800
_MIN_CHUNK_CHARS = 16

_FENCE_OPEN = re.compile(r"[ ]{0,3}(`{3,}|~{3,})")
_FENCE_CLOSE = re.compile(r"[ ]{0,3}(`{3,}|~{3,})[ \t\r]*$")
# A sentence ends after its terminator and any closing quotes/brackets, before whitespace (Latin
# scripts) or straight away (CJK full stops). A line break ends a sentence too (lists, headings).
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)|[。！？]+[\"'”’」』)\]]*|\n")
_LINE_END = re.compile(r"\n")
_WORD_END = re.compile(r"\s+")
# Where a cut inside a long word reads best: after punctuation or a separator.
_SOFT_BREAKS = frozenset("/\\-_=&?,;:.|、，。；：")
_JOINERS = frozenset("\u200d\u034f\u2060")


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a message: its text and where it sits (``message[start:end] == text``)."""

    index: int
    start: int
    end: int
    text: str


Span = tuple[int, int]


def split_into_chunks(text: str, max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """The chunks of ``text``, each at most ``max_chars`` characters, in order; [] for blank text."""
    if max_chars < _MIN_CHUNK_CHARS:
        raise ValueError(f"max_chars must be at least {_MIN_CHUNK_CHARS}")
    spans: list[Span] = []
    _pack(text, _blocks(text), max_chars, spans, _split_block)
    return [Chunk(i, start, end, text[start:end]) for i, (start, end) in enumerate(spans)]


def _trimmed(text: str, start: int, end: int) -> Span | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _lines(text: str) -> Iterator[Span]:
    """(start, end) of each line, end excluding the newline."""
    pos, size = 0, len(text)
    while pos < size:
        newline = text.find("\n", pos)
        end = size if newline < 0 else newline
        yield pos, end
        pos = end + 1


def _closes(text: str, start: int, end: int, fence: str) -> bool:
    """Whether the line is a closing fence for ``fence`` (same character, at least as long)."""
    match = _FENCE_CLOSE.match(text, start, end)
    return match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)


def _blocks(text: str) -> Iterator[tuple[int, int, bool]]:
    """Paragraphs and fenced code blocks as (start, end, is_code), trimmed, in order."""
    para_start: int | None = None
    fence = ""
    fence_start = 0
    for start, end in _lines(text):
        if fence:
            if _closes(text, start, end, fence):
                yield fence_start, end, True
                fence = ""
            continue
        opener = _FENCE_OPEN.match(text, start, end)
        if opener:
            if para_start is not None:
                yield para_start, start, False
                para_start = None
            fence, fence_start = opener.group(1), start
        elif text[start:end].strip():
            if para_start is None:
                para_start = start
        elif para_start is not None:
            yield para_start, start, False
            para_start = None
    if fence:  # an unclosed fence runs to the end, as in Markdown
        yield fence_start, len(text), True
    elif para_start is not None:
        yield para_start, len(text), False


def _units(text: str, start: int, end: int, pattern: re.Pattern[str]) -> Iterator[tuple[int, int, bool]]:
    """The trimmed pieces of ``text[start:end]`` between the ends ``pattern`` finds."""
    piece_start = start
    for match in pattern.finditer(text, start, end):
        cut = match.end()
        span = _trimmed(text, piece_start, cut)
        if span:
            yield span[0], span[1], False
        piece_start = cut
    span = _trimmed(text, piece_start, end)
    if span:
        yield span[0], span[1], False


Splitter = Callable[[str, int, int, bool, int, list[Span]], None]


def _pack(text: str, pieces: Iterator[tuple[int, int, bool]], max_chars: int, out: list[Span],
          split: Splitter) -> None:
    """Greedily join consecutive pieces into spans of at most ``max_chars``; ``split`` takes the oversized."""
    current: Span | None = None
    for piece in pieces:
        trimmed = _trimmed(text, piece[0], piece[1])
        if trimmed is None:
            continue
        start, end = trimmed
        if end - start > max_chars:
            if current:
                out.append(current)
                current = None
            split(text, start, end, piece[2], max_chars, out)
        elif current is None:
            current = (start, end)
        elif end - current[0] <= max_chars:
            current = (current[0], end)
        else:
            out.append(current)
            current = (start, end)
    if current:
        out.append(current)


def _split_block(text: str, start: int, end: int, is_code: bool, max_chars: int, out: list[Span]) -> None:
    """An oversized paragraph by sentences, or an oversized code block by lines."""
    pattern = _LINE_END if is_code else _SENTENCE_END
    _pack(text, _units(text, start, end, pattern), max_chars, out, _split_sentence)


def _split_sentence(text: str, start: int, end: int, _is_code: bool, max_chars: int, out: list[Span]) -> None:
    """An oversized sentence or line by words."""
    _pack(text, _units(text, start, end, _WORD_END), max_chars, out, _split_word)


def _is_continuation(ch: str) -> bool:
    """Whether ``ch`` belongs to the character before it (a mark, joiner, selector or Hangul jamo)."""
    code = ord(ch)
    return (unicodedata.category(ch) in ("Mn", "Mc", "Me") or ch in _JOINERS
            or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF or 0x1F3FB <= code <= 0x1F3FF
            or 0x1160 <= code <= 0x11FF or 0xD7B0 <= code <= 0xD7FF)


def _safe_cut(text: str, lo: int, cut: int, max_back: int) -> int:
    """Move ``cut`` left, at most ``max_back``, so it splits no cluster; prefer just after punctuation."""
    floor = max(lo + 1, cut - max_back)
    for pos in range(cut, floor - 1, -1):
        if text[pos - 1] in _SOFT_BREAKS and not _is_continuation(text[pos]):
            return pos
    pos = cut
    while pos > floor and (_is_continuation(text[pos]) or text[pos - 1] in _JOINERS):
        pos -= 1
    return pos


def _split_word(text: str, start: int, end: int, _is_code: bool, max_chars: int, out: list[Span]) -> None:
    """An oversized word (or run of unspaced script) cut into pieces of at most ``max_chars``."""
    pos = start
    while end - pos > max_chars:
        cut = _safe_cut(text, pos, pos + max_chars, max_chars // 4)
        out.append((pos, cut))
        pos = cut
    out.append((pos, end))
