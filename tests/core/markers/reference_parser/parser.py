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
from dataclasses import dataclass, field

from tunaflow_tui.core.markers.marker_model import ImplComplete, Marker, ParseResult, SubtaskDone
from tunaflow_tui.core.markers.roles import may_emit

from .proposal import read_proposal
from .quotes import Fence, QuotedPositions, find_fences
from .scanner import (
    BLOCK_KINDS,
    SINGLE_KINDS,
    MarkerComment,
    find_marker_comments,
    remove_spans,
    scrub_markers,
)
from .verdict import read_consensus, read_verdict


@dataclass
class _Block:
    opener: MarkerComment
    closer: MarkerComment | None = None
    inner: list[MarkerComment] = field(default_factory=list)
    end: int = 0


def _inert(comment: MarkerComment) -> str:
    """A rejected marker, shown as inline code so it is visible and never live again."""
    return f"`` {comment.canonical} ``"


def _classify(text: str, comments: list[MarkerComment]) -> tuple[list[MarkerComment], list[Fence]]:
    """Split comments into live ones (quote rule applied) and the wrapper fences chosen."""
    quotes, fences = QuotedPositions(text), find_fences(text)
    in_code_span, on_quoted_line = quotes.in_code_span, quotes.on_quoted_line
    fi, nfences = 0, len(fences)
    live: list[MarkerComment] = []
    fenced: dict[int, list[MarkerComment]] = {}
    for c in comments:
        if in_code_span(c.start):
            continue
        if nfences:
            while fi < nfences and fences[fi].end <= c.start:
                fi += 1
            if fi < nfences and fences[fi].start <= c.start:
                if fences[fi].may_wrap:
                    fenced.setdefault(fi, []).append(c)
                continue
        if not on_quoted_line(c.start):
            live.append(c)
    taken = {c.kind for c in live if c.kind in BLOCK_KINDS and not c.closing}
    wrappers: list[Fence] = []
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
    for c in live:
        if c.kind in SINGLE_KINDS:
            items.append(c)
        elif not c.closing:
            if current is not None:
                if c.kind == current.opener.kind or not _alone_on_line(text, c):
                    current.inner.append(c)
                    continue
                current.end = c.start
            current = _Block(c, end=len(text))
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


def _build(text: str, block: _Block, accepted: bool) -> Marker:
    opener, closer = block.opener, block.closer
    body = text[opener.end : closer.start if closer else block.end]
    body = scrub_markers(body)
    reader = {"plan-proposal": read_proposal, "review-verdict": read_verdict}.get(opener.kind, read_consensus)
    return reader(body, accepted=accepted, raw=text[opener.start : block.end],
                  span=(opener.start, block.end), closed=closer is not None)  # fmt: skip


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


def _parse_markers(text: str, role: str | None) -> ParseResult:
    comments = find_marker_comments(text)
    if not comments:
        return ParseResult((), text)
    live, wrappers = _classify(text, comments)
    items, strays = _group(text, live)
    markers: list[Marker] = []
    edits: list[tuple[int, int, str]] = [(c.start, c.end, "") for c in strays]
    hidden_until = 0  # end of the last accepted block: markers before it vanish with the block
    allowed = {kind: may_emit(role, kind) for kind in (*BLOCK_KINDS, *SINGLE_KINDS)}  # once, not per marker
    for item in items:
        if isinstance(item, _Block):
            accepted = allowed[item.opener.kind]
            markers.append(_build(text, item, accepted))
            if accepted:
                edits.append((item.opener.start, item.end, ""))
                hidden_until = item.end
            else:
                edits.extend((c.start, c.end, _inert(c)) for c in [item.opener, *item.inner])
                if item.closer is not None:
                    edits.append((item.closer.start, item.closer.end, _inert(item.closer)))
            continue
        accepted = allowed[item.kind]
        raw, span = text[item.start : item.end], (item.start, item.end)
        if item.kind == "subtask-done":
            markers.append(SubtaskDone(index=item.number, accepted=accepted, raw=raw, span=span))
        else:
            markers.append(ImplComplete(accepted=accepted, raw=raw, span=span))
        if item.start >= hidden_until:
            edits.append((item.start, item.end, "" if accepted else _inert(item)))
    edits.sort()
    _collapse_wrappers(text, edits, wrappers)
    return ParseResult(tuple(markers), remove_spans(text, edits))
