"""parse_markers: find the markers of one finished message, scoped by the writer's role.

The quote rule: a marker inside an inline code span, a fenced or indented code block, or on a
block-quote line is a quoted example and does nothing. One exception lets an agent wrap its whole
block in a fence: a fence whose info string is empty, ``markdown`` or ``md`` and that holds both the
opening and the closing marker of one block kind is a *wrapper*, and its markers count, but only if
the message has no unfenced block of that kind and no earlier wrapper for it. Everything else in a
fence is a quote.

Inside an open block, an opening marker of the same kind, or one that shares its line with other
text, is only mentioned and stays text. Single markers (``subtask-done``, ``impl-complete``) count
wherever they stand, inside a block too: no block carries them.
"""

from __future__ import annotations

import gc
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from typing import Final

from tunaflow_tui.core.markers.marker_model import Marker, ParseResult, impl_complete, subtask_done
from tunaflow_tui.core.markers.proposal import read_proposal
from tunaflow_tui.core.markers.quotes import Fence, QuotedLines, find_fences, inline_spans
from tunaflow_tui.core.markers.roles import may_emit
from tunaflow_tui.core.markers.scanner import (
    BLOCK_KINDS,
    SINGLE_KINDS,
    MarkerComment,
    find_marker_comments,
    remove_spans,
    scrub_known,
    scrub_markers,
)
from tunaflow_tui.core.markers.sections import LineMemo, shared_memo
from tunaflow_tui.core.markers.verdict import read_consensus, read_verdict


@dataclass(slots=True)
class _Block:
    opener: MarkerComment
    closer: MarkerComment | None = None
    inner: list[MarkerComment] = field(default_factory=list)
    end: int = 0


def _inert(comment: MarkerComment) -> str:
    """A rejected marker, shown as inline code so it is visible and never live again."""
    return f"`` {comment.canonical} ``"


def _classify(text: str, comments: list[MarkerComment]) -> tuple[list[MarkerComment], list[Fence]]:
    """Split comments into live ones (quote rule applied) and the wrapper fences chosen.

    One pass over the comments, in order: the line of each is found once (by position, never by
    cutting the text into lines). Outside a fence the quote rule's tests are taken cheapest first (a
    line starting with ``>`` is a quote line, any other first character but a blank makes it neither
    a quote line nor indented code): a line's code spans are worked out only when it holds two
    backticks, and its quote state only when it starts with a blank.
    """
    fences = find_fences(text)
    lines = QuotedLines(text)
    size = len(text)
    find, rfind, count = text.find, text.rfind, text.count
    line_start, line_end = 0, -1
    first = ""  # the first character of the current line
    bounds: list[int] | None = None  # where the current line's code spans start and end, once worked out
    fi, nfences = 0, len(fences)
    live: list[MarkerComment] = []
    fenced: dict[int, list[MarkerComment]] = {}
    for c in comments:
        pos = c[0]
        if pos > line_end:
            line_start = rfind("\n", line_end if line_end > 0 else 0, pos) + 1
            nl = find("\n", pos)
            line_end = size if nl == -1 else nl
            first = text[line_start]
            bounds = None
        if nfences:
            while fi < nfences and fences[fi].end <= pos:
                fi += 1
            if fi < nfences and fences[fi].start <= pos:  # quoted, unless the fence wraps a block
                if fences[fi].may_wrap:
                    if bounds is None:
                        ticks = count("`", line_start, line_end)
                        bounds = _code_bounds(text, line_start, line_end, ticks) if ticks > 1 else _NO_SPANS
                    if not bisect_right(bounds, pos) & 1:  # not in a code span
                        fenced.setdefault(fi, []).append(c)
                continue
        if first == ">":
            continue
        if pos > line_start:  # (a comment that starts its line is in no code span)
            if bounds is None:
                ticks = count("`", line_start, line_end)
                bounds = _code_bounds(text, line_start, line_end, ticks) if ticks > 1 else _NO_SPANS
            if bounds and bisect_right(bounds, pos) & 1:  # in a code span
                continue
        if first in " \t" and lines.line_quoted(line_start, line_end):
            continue
        live.append(c)
    wrappers: list[Fence] = []
    if not fenced:
        return live, wrappers
    taken = {c.kind for c in live if c.kind in BLOCK_KINDS and not c.closing}
    for fi, inside in fenced.items():
        opened: set[str] = set()
        wraps: set[str] = set()
        for c in inside:
            if c.kind in BLOCK_KINDS:
                if not c.closing:
                    opened.add(c.kind)
                elif c.kind in opened:
                    wraps.add(c.kind)
        chosen = wraps - taken
        if chosen:
            taken |= chosen
            wrappers.append(fences[fi])
            live.extend(inside)
    if wrappers:  # otherwise still in order
        live.sort(key=lambda c: c.start)
    return live, wrappers


_NO_SPANS: Final[list[int]] = []


def _code_bounds(text: str, start: int, end: int, ticks: int) -> list[int]:
    """Where the code spans of the line ``text[start:end]`` (holding ``ticks`` backticks, two or more)
    start and end, in order (never change the list): a position lies in one if an odd number of them are
    at or before it (two spans never touch: two runs of backticks side by side are one run)."""
    if ticks == 2:  # one span, unless the two make one run
        first = text.find("`", start, end)
        second = text.find("`", first + 1, end)
        return [first, second + 1] if second > first + 1 else _NO_SPANS
    spans: list[tuple[int, int]] = []
    inline_spans(text, start, end, spans)
    return list(chain.from_iterable(spans))


def _alone_on_line(text: str, comment: MarkerComment) -> bool:
    """True if only blanks share the comment's lines with it."""
    left = comment.start
    while left > 0 and text[left - 1] in " \t":
        left -= 1
    if left > 0 and text[left - 1] != "\n":
        return False
    right, size = comment.end, len(text)
    while right < size and text[right] in " \t\r":
        right += 1
    return right == size or text[right] == "\n"


def _group(text: str, live: list[MarkerComment]) -> tuple[list[_Block | MarkerComment], list[MarkerComment]]:
    """Group live comments into blocks and single markers; also return stray closing markers.

    While a block is open, an opening marker of the same kind or one not alone on its line is
    text of that block; an opening marker of another kind alone on its line ends the block
    unclosed and opens its own. Single markers are items wherever they stand.
    """
    items: list[_Block | MarkerComment] = []
    strays: list[MarkerComment] = []
    current: _Block | None = None
    size = len(text)
    for c in live:
        if c.kind in SINGLE_KINDS:
            items.append(c)
        elif not c.closing:
            if current is not None:
                if c.kind == current.opener.kind or not _alone_on_line(text, c):
                    current.inner.append(c)
                    continue
                current.end = c.start
            current = _Block(c, None, [], size)
            items.append(current)
        elif current is not None:
            if c.kind == current.opener.kind:
                current.closer, current.end = c, c.end
                current = None
            else:
                current.inner.append(c)
        else:
            strays.append(c)
    return items, strays


def _build(text: str, block: _Block, accepted: bool, memo: LineMemo) -> Marker:
    opener, closer = block.opener, block.closer
    body = text[opener.end : closer.start if closer else block.end]
    if block.inner:  # the markers the block only mentions, as they stand in its body
        shift = opener.end
        body = scrub_known(body, [(c.start - shift, c.end - shift) for c in block.inner])
    elif "<!--" in body:  # (a body without a comment has nothing to scrub)
        body = scrub_markers(body)
    raw, span, closed = text[opener.start : block.end], (opener.start, block.end), closer is not None
    if opener.kind == "plan-proposal":
        return read_proposal(body, accepted=accepted, raw=raw, span=span, closed=closed, memo=memo,
                             revises=opener.number or None)
    if opener.kind == "review-verdict":
        return read_verdict(body, accepted=accepted, raw=raw, span=span, closed=closed, memo=memo)
    return read_consensus(body, accepted=accepted, raw=raw, span=span, closed=closed, memo=memo)


def _collapse_wrappers(text: str, edits: list[tuple[int, int, str]], wrappers: list[Fence]) -> None:
    """Remove a wrapper fence entirely when nothing but removed markers was inside it."""
    for fence in wrappers:
        inside = [e for e in edits if e[0] < fence.end and e[1] > fence.start]
        if not inside or any(e[2] or e[0] < fence.start or e[1] > fence.end for e in inside):
            continue
        pos, residue = fence.inner_start, []
        for start, end, _ in inside:
            residue.append(text[pos:start])
            pos = max(pos, end)
        residue.append(text[pos : fence.inner_end])
        if "".join(residue).strip():
            continue
        for e in inside:
            edits.remove(e)
        edits.append((fence.start, fence.end, ""))
    edits.sort()


def parse_markers(text: str, role: str | None = None) -> ParseResult:
    """Find every marker in a finished message, in order, and the text to display.

    ``role`` is the writer's role (architect, developer, reviewer, verifier, synthesizer, user);
    ``None`` accepts every marker. Total and linear: never raises on any ``str``.

    The cyclic garbage collector is paused while a message is parsed: a dense reply makes tens of
    thousands of small records, none of them in a reference cycle (reference counting frees them), and
    every few hundred of them would otherwise start a collection that walks the whole heap of the app.
    """
    if not gc.isenabled():
        return _parse_markers(text, role)
    gc.disable()
    try:
        return _parse_markers(text, role)
    finally:
        gc.enable()


_KIND: Final = itemgetter(2)  # a comment's kind


def _singles(
    text: str, live: list[MarkerComment], allowed: dict[str, bool]
) -> tuple[list[Marker], list[tuple[int, int, str]]]:
    """The markers of a reply whose live comments are all single markers, and the edits of its text."""
    markers: list[Marker] = []
    edits: list[tuple[int, int, str]] = []
    done_ok, complete_ok = allowed["subtask-done"], allowed["impl-complete"]
    for comment in live:
        start, end, kind, _, number = comment
        if kind == "subtask-done":
            markers.append(subtask_done(number, done_ok, text[start:end], (start, end)))
            edits.append((start, end, "" if done_ok else _inert(comment)))
        else:
            markers.append(impl_complete(complete_ok, text[start:end], (start, end)))
            edits.append((start, end, "" if complete_ok else _inert(comment)))
    return markers, edits


def _parse_markers(text: str, role: str | None) -> ParseResult:
    comments = find_marker_comments(text)
    if not comments:
        return ParseResult((), text)
    live, wrappers = _classify(text, comments)
    allowed = {kind: may_emit(role, kind) for kind in (*BLOCK_KINDS, *SINGLE_KINDS)}  # once, not per marker
    if not wrappers and BLOCK_KINDS.isdisjoint(map(_KIND, live)):  # single markers only, in order
        markers, edits = _singles(text, live, allowed)
        return ParseResult(tuple(markers), remove_spans(text, edits))
    items, strays = _group(text, live)
    markers = []
    edits = [(c.start, c.end, "") for c in strays]
    hidden_until = 0  # end of the last accepted block: markers before it vanish with the block
    memo = shared_memo()  # what the blocks' readers read in each distinct line, shared by them all
    for item in items:
        if isinstance(item, _Block):
            accepted = allowed[item.opener.kind]
            markers.append(_build(text, item, accepted, memo))
            if accepted:
                edits.append((item.opener.start, item.end, ""))
                hidden_until = item.end
            else:
                edits.extend((c.start, c.end, _inert(c)) for c in [item.opener, *item.inner])
                if item.closer is not None:
                    edits.append((item.closer.start, item.closer.end, _inert(item.closer)))
            continue
        start, end, kind = item[0], item[1], item[2]
        accepted = allowed[kind]
        if kind == "subtask-done":
            markers.append(subtask_done(item.number, accepted, text[start:end], (start, end)))
        else:
            markers.append(impl_complete(accepted, text[start:end], (start, end)))
        if start >= hidden_until:
            edits.append((start, end, "" if accepted else _inert(item)))
    edits.sort()
    _collapse_wrappers(text, edits, wrappers)
    return ParseResult(tuple(markers), remove_spans(text, edits))
