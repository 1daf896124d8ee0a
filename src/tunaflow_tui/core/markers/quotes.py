"""Where a marker is only quoted: fenced code blocks and inline code spans.

One pass over the lines finds fences (```` ``` ```` or ``~~~``, any indentation, closed by a line of
the same character at least as long, or running to the end). Inline code spans are found per line
(a run of N backticks closed by the next run of exactly N backticks on the same line); a table of
"next run of the same length" keeps that linear however many backticks a line holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: Fence info strings whose fence may wrap a whole marker block the agent meant.
WRAPPER_INFOS: Final = frozenset({"", "markdown", "md"})


@dataclass(frozen=True, slots=True)
class Fence:
    """A fenced code block: whole span, the span between its fence lines, and its info word."""

    start: int
    end: int
    inner_start: int
    inner_end: int
    info: str

    @property
    def may_wrap(self) -> bool:
        """True if the info string is empty, ``markdown`` or ``md``."""
        return self.info in WRAPPER_INFOS


@dataclass(frozen=True, slots=True)
class QuoteMap:
    """The fences and inline code spans of a text (both sorted by position)."""

    fences: tuple[Fence, ...]
    code_spans: tuple[tuple[int, int], ...]


def _lines(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each line, the end excluding its ``\\n`` (a ``\\r`` stays in the line)."""
    bounds: list[tuple[int, int]] = []
    pos = 0
    size = len(text)
    while pos <= size:
        nl = text.find("\n", pos)
        if nl == -1:
            bounds.append((pos, size))
            break
        bounds.append((pos, nl))
        pos = nl + 1
    return bounds


def _fence_open(line: str) -> tuple[str, int, str] | None:
    """``(char, length, info)`` if ``line`` opens a fence."""
    stripped = line.lstrip(" \t")
    if not stripped.startswith(("```", "~~~")):
        return None
    char = stripped[0]
    length = len(stripped) - len(stripped.lstrip(char))
    info = stripped[length:].strip()
    if char == "`" and "`" in info:
        return None
    word = info.split(maxsplit=1)[0].casefold() if info else ""
    return char, length, word.strip("{}.")


def _closes(line: str, char: str, length: int) -> bool:
    stripped = line.strip()
    return len(stripped) >= length and stripped == char * len(stripped)


def _inline_spans(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    """Append the code spans of the line ``text[start:end]`` to ``out``."""
    runs: list[tuple[int, int]] = []
    i = text.find("`", start, end)
    while i != -1:
        j = i
        while j < end and text[j] == "`":
            j += 1
        runs.append((i, j - i))
        i = text.find("`", j, end)
    if len(runs) < 2:
        return
    next_same: list[int] = [-1] * len(runs)
    last_seen: dict[int, int] = {}
    for k in range(len(runs) - 1, -1, -1):
        length = runs[k][1]
        next_same[k] = last_seen.get(length, -1)
        last_seen[length] = k
    k = 0
    while k < len(runs):
        closer = next_same[k]
        if closer == -1:
            k += 1
            continue
        out.append((runs[k][0], runs[closer][0] + runs[closer][1]))
        k = closer + 1


def map_quotes(text: str) -> QuoteMap:
    """Find every fence and inline code span of ``text`` in one linear pass."""
    fences: list[Fence] = []
    spans: list[tuple[int, int]] = []
    lines = _lines(text)
    open_fence: tuple[str, int, str, int, int] | None = None  # char, length, info, start, inner_start
    for start, end in lines:
        line = text[start:end]
        if open_fence is not None:
            char, length, info, fstart, inner = open_fence
            if _closes(line, char, length):
                fences.append(Fence(fstart, end, inner, start, info))
                open_fence = None
            else:
                _inline_spans(text, start, end, spans)
            continue
        opened = _fence_open(line)
        if opened is not None:
            open_fence = (opened[0], opened[1], opened[2], start, min(end + 1, len(text)))
            continue
        _inline_spans(text, start, end, spans)
    if open_fence is not None:
        _, _, info, fstart, inner = open_fence
        fences.append(Fence(fstart, len(text), inner, len(text), info))
    return QuoteMap(tuple(fences), tuple(spans))
