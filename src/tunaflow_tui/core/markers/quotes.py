"""Where a marker is only quoted: fenced and indented code blocks, inline code spans, block quotes.

Fences (```` ``` ```` or ``~~~`` at the start of a line, any indentation, closed by a line of the
same character at least as long, or running to the end) are found by visiting only the lines that
start with a fence string. Inline code spans are found per line, only for lines that hold a marker
and two backticks (a run of N backticks closed by the next run of exactly N backticks on the same
line): by one regular expression on a line whose runs have few lengths, else by one sort of the runs
by length, which gives each run the next of its length; either keeps that linear however many
backticks a line holds. Block-quote lines and indented code blocks are decided per
line, only for lines that hold a marker and start with a blank or ``>``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate, pairwise
from typing import Final

#: Fence info strings whose fence may wrap a whole marker block the agent meant.
WRAPPER_INFOS: Final = frozenset({"", "markdown", "md"})
#: A run of backticks, written with a literal first: the regular expression engine then skips to the
#: next backtick in a tight loop (``(`+)`` is tried at every character of the line).
_BACKTICK_RUNS: Final = re.compile("(``*)")
#: Runs of at most this many backticks have at most this many lengths.
_FEW_LENGTHS: Final = 8
_LONG_RUN: Final = "`" * (_FEW_LENGTHS + 1)
#: A code span: a whole run of backticks (none just before it: the line starts past a newline), then
#: text and runs taken whole, up to the next whole run as long as the first. A run with no such run
#: after it is the last of its length, and the search passes over the rest of the line for it: once
#: per length at most, so only for lines without a run longer than _FEW_LENGTHS.
_SPAN: Final = re.compile(r"(`(?<!``)`*+)(?:[^`]++|`++)*?(?<!`)\1(?!`)")
_SPAN_OF: Final = re.Match.span


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


def inline_spans(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    """Append the code spans (``(start, end)`` of each, backticks included) of the line ``text[start:end]`` to ``out``.

    ``start`` is the start of a line (0, or just past a newline). A run of N backticks opens a span
    closed by the next run of exactly N; a run with no such run after it is literal, and the runs
    after it are looked at again. Two backticks make one span or none; a line without a run longer
    than _FEW_LENGTHS has its spans found by one regular expression; any other line has its runs
    split out and sorted by length, which puts the runs of each length in order, so no Python loop
    visits every run and none passes over the line more than once.
    """
    ticks = text.count("`", start, end)
    if ticks < 2:
        return
    if ticks == 2:  # one span, unless the two make one run
        first = text.find("`", start, end)
        second = text.find("`", first + 1, end)
        if second > first + 1:
            out.append((first, second + 1))
        return
    if text.find(_LONG_RUN, start, end) == -1:
        out.extend(map(_SPAN_OF, _SPAN.finditer(text, start, end)))
        return
    parts = _BACKTICK_RUNS.split(text[start:end])  # text, run, text, run, …, text
    count = len(parts) // 2
    offsets = list(accumulate(map(len, parts), initial=start))  # run k: offsets[2k+1] to offsets[2k+2]
    lengths = list(map(len, parts[1::2]))
    order = sorted(range(count), key=lengths.__getitem__)  # stable: each length's runs stay in order
    following = dict(pairwise(order))  # run -> the next run of its length, if any
    k = 0
    while k < count:
        closer = following.get(k, -1)
        if closer == -1 or lengths[closer] != lengths[k]:
            k += 1
            continue
        out.append((offsets[2 * k + 1], offsets[2 * closer + 2]))
        k = closer + 1


def _line_start(text: str, pos: int) -> int | None:
    """Start of the line holding ``pos`` if only spaces/tabs precede ``pos`` on it, else None."""
    left = pos
    while left > 0 and text[left - 1] in " \t":
        left -= 1
    return left if left == 0 or text[left - 1] == "\n" else None


def _fence_candidates(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every line that begins with ```` ``` ```` or ``~~~``, in order."""
    found: list[tuple[int, int]] = []
    for token in ("```", "~~~"):
        i = text.find(token)
        while i != -1:
            start = _line_start(text, i)
            nl = text.find("\n", i)
            end = len(text) if nl == -1 else nl
            if start is not None:
                found.append((start, end))
            i = text.find(token, end)
    found.sort()
    return found


def find_fences(text: str) -> tuple[Fence, ...]:
    """Every fenced code block of ``text``; only lines starting with a fence string are visited."""
    fences: list[Fence] = []
    open_fence: tuple[str, int, str, int, int] | None = None  # char, length, info, start, inner_start
    for start, end in _fence_candidates(text):
        line = text[start:end]
        if open_fence is not None:
            char, length, info, fstart, inner = open_fence
            if _closes(line, char, length):
                fences.append(Fence(fstart, end, inner, start, info))
                open_fence = None
            continue
        opened = _fence_open(line)
        if opened is not None:
            open_fence = (opened[0], opened[1], opened[2], start, min(end + 1, len(text)))
    if open_fence is not None:
        _, _, info, fstart, inner = open_fence
        fences.append(Fence(fstart, len(text), inner, len(text), info))
    return tuple(fences)


def _indent_width(line: str) -> int:
    """Columns of leading blanks (a tab advances to the next multiple of 4)."""
    body = line.lstrip(" ")
    if not body.startswith("\t"):  # spaces only (the usual indent): count them at once
        return len(line) - len(body)
    return len(line[: len(line) - len(line.lstrip(" \t"))].expandtabs(4))  # blanks only: tab stops of 4


def _starts_list_item(line: str) -> bool:
    stripped = line.lstrip(" \t")
    if stripped[:2] in ("- ", "* ", "+ ", "• ") or stripped in ("-", "*", "+"):
        return True
    digits = len(stripped) - len(stripped.lstrip("0123456789"))
    return 0 < digits <= 9 and stripped[digits : digits + 1] in (".", ")")


class QuotedLines:
    """Answers "is this line a block-quote line or inside an indented code block?".

    A block-quote line starts (after at most 3 spaces) with ``>``. An indented code block is a run
    of lines indented 4 columns or more that a blank line separates from the text above, unless
    the nearest less-indented line above starts a list item (then it continues that item). A line
    indented right under a paragraph continues the paragraph. Lines must come in order; every
    line is looked at a bounded number of times, so the work stays linear.
    """

    def __init__(self, text: str) -> None:
        """Nothing is computed until asked."""
        self._text = text
        self._line_start = -1
        self._line_end = -1
        self._answer = False
        # the last indented line decided: its start, whether a blank line lies above it within
        # its run, and whether the run hangs under a list item (None: no line above the run)
        self._last_start = -1
        self._last_blank = False
        self._last_list: bool | None = None

    def line_quoted(self, start: int, end: int) -> bool:
        """True if the line ``text[start:end]`` is a block-quote line or in an indented code block.

        Lines must be asked about in order (each after the line last asked about, or it again).
        """
        if end != self._line_end:
            self._line_start, self._line_end = start, end
            self._answer = self._decide(self._text[start:end])
        return self._answer

    def _decide(self, line: str) -> bool:
        # (:func:`_indent_width` below, with an indent of spaces only counted in place)
        body = line.lstrip(" ")
        if (len(line) - len(body) if body[:1] != "\t" else _indent_width(line)) < 4:
            return body.lstrip(" \t").startswith(">")
        text = self._text
        start = pos = self._line_start
        saw_blank = False
        under_list: bool | None = None
        while pos > 0:
            if pos == self._last_start:
                saw_blank = saw_blank or self._last_blank
                under_list = self._last_list
                break
            prev_start = text.rfind("\n", 0, pos - 1) + 1
            prev = text[prev_start : pos - 1]
            body = prev.lstrip(" ")
            if not body.strip():
                saw_blank = True
            elif (len(prev) - len(body) if body[:1] != "\t" else _indent_width(prev)) < 4:
                under_list = _starts_list_item(prev)
                break
            pos = prev_start
        self._last_start, self._last_blank, self._last_list = start, saw_blank, under_list
        if under_list is None:
            return True
        return saw_blank and not under_list


class QuotedPositions:
    """Answers, for increasing positions, whether the line of each quotes it: in an inline code span,
    on a block-quote line or in an indented code block.

    The line of a position is found once and shared by both questions; its code spans and its quote
    state are worked out only when asked, once per line.
    """

    def __init__(self, text: str) -> None:
        """Nothing is computed until asked."""
        self._text = text
        self._size = len(text)
        self._start = 0
        self._end = -1  # index of the current line's "\n" (or len(text))
        self._starts: list[int] | None = None
        self._spans: list[tuple[int, int]] = []
        self._lines = QuotedLines(text)

    def _enter(self, pos: int) -> None:
        text = self._text
        self._start = text.rfind("\n", self._end if self._end > 0 else 0, pos) + 1
        nl = text.find("\n", pos)
        self._end = self._size if nl == -1 else nl
        self._starts = None

    def in_code_span(self, pos: int) -> bool:
        """True if ``pos`` lies inside an inline code span of its line (positions must not decrease)."""
        if pos > self._end:
            self._enter(pos)
        starts = self._starts
        if starts is None:
            self._spans = []
            inline_spans(self._text, self._start, self._end, self._spans)
            starts = self._starts = [a for a, _ in self._spans]
        if not starts:
            return False
        k = bisect_right(starts, pos) - 1
        return k >= 0 and pos < self._spans[k][1]

    def on_quoted_line(self, pos: int) -> bool:
        """True if ``pos`` lies on a block-quote line or in an indented code block."""
        if pos > self._end:
            self._enter(pos)
        return self._lines.line_quoted(self._start, self._end)
