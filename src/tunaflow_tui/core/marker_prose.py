"""ProseStream: a reply streaming into the chat, with a marker block's fields told in words.

:class:`~tunaflow_tui.core.markers.MarkerStream` keeps marker comments off the screen but lets a
block's contents through as they are (``title: …``, ``subtasks:``, ``verdict: fail``, ``scores: …``),
which reads as raw fields until the reply ends and the block becomes a card. ProseStream holds a
block's contents back from the chat and says instead what is being written: ``drafting a plan…
(3 subtasks so far)``, ``reviewing…``. Text outside blocks streams as before; the finished message
is shown from the store, as it always was.
"""

from __future__ import annotations

from dataclasses import dataclass

from tunaflow_tui.core.counting import counted
from tunaflow_tui.core.markers import MarkerStream
from tunaflow_tui.core.markers.proposal import read_proposal
from tunaflow_tui.core.markers.scanner import BLOCK_KINDS, find_marker_comments

_WRITING = {"plan-proposal": "drafting a plan…", "review-verdict": "reviewing…", "consensus": "weighing the reviews…"}
_WRITTEN = {"plan-proposal": "plan drafted", "review-verdict": "verdict written", "consensus": "reviews weighed"}


@dataclass(frozen=True, slots=True)
class StreamStep:
    """What one chunk of a reply changes on screen."""

    text: str
    """Display-safe text to append to the message (never a marker, never a block's contents)."""
    activity: str | None
    """The line saying what the agent is writing now; ``None``: unchanged."""


class ProseStream:
    """Display filter for one streamed reply (see the module docstring).

    Args:
        role: The writer's role (passed to :class:`MarkerStream`).
    """

    def __init__(self, role: str | None = None) -> None:
        self._markers = MarkerStream(role)
        self._raw: list[str] = []
        self._raw_length = 0
        self._scanned = 0
        """Raw characters up to the end of the last marker comment found."""
        self._removed = 0
        """Characters of marker comments dropped before :attr:`_scanned`."""
        self._shown = 0
        """Characters of marker-free text handed out so far."""
        self._ranges: list[tuple[str, int, int | None]] = []
        """Blocks in marker-free coordinates: (kind, start, end or None while open)."""
        self._block_text = ""
        self._activity = ""
        self._done = 0
        """Blocks fully handed out (closed, and their closing described)."""
        self._describing = -1
        """The block the activity line is about."""

    @property
    def markers_seen(self) -> int:
        """How many marker comments were dropped so far."""
        return self._markers.markers_seen

    @property
    def activity(self) -> str:
        """The current activity line (empty outside a block)."""
        return self._activity

    def feed(self, chunk: str) -> StreamStep:
        """Add a chunk of the reply; return what changes on screen."""
        seen = self._markers.markers_seen
        visible = self._markers.feed(chunk)
        self._raw.append(chunk)
        self._raw_length += len(chunk)
        if self._markers.markers_seen != seen:
            self._scan()
        return self._split(visible)

    def finish(self) -> StreamStep:
        """End the reply: the text held back until now, and the last activity line."""
        visible = self._markers.finish()
        self._scan()
        return self._split(visible)

    def _scan(self) -> None:
        """Find the marker comments since the last one, and the blocks they open and close."""
        raw = "".join(self._raw)
        self._raw = [raw]
        for comment in find_marker_comments(raw[self._scanned :]):
            start, end = comment.start + self._scanned, comment.end + self._scanned
            at = start - self._removed
            self._removed += end - start
            if comment.kind in BLOCK_KINDS:
                open_block = self._ranges and self._ranges[-1][2] is None
                if not comment.closing and not open_block:
                    self._ranges.append((comment.kind, at, None))
                elif comment.closing and open_block and self._ranges[-1][0] == comment.kind:
                    kind, begun, _ = self._ranges[-1]
                    self._ranges[-1] = (kind, begun, at)
            self._scanned = end

    def _split(self, visible: str) -> StreamStep:
        """Hand out the part of ``visible`` outside blocks; the inside feeds the activity line."""
        start, stop = self._shown, self._shown + len(visible)
        self._shown = stop
        before = self._activity
        pieces: list[str] = []
        position = start
        for index in range(self._done, len(self._ranges)):
            kind, begun, ended = self._ranges[index]
            if begun > stop:
                break
            if begun > position:
                pieces.append(visible[position - start : begun - start])
                position = begun
            if index != self._describing:  # a block begins
                self._describing, self._block_text = index, ""
                self._activity = self._describe(kind, closed=False)
            until = stop if ended is None else min(ended, stop)
            if until > position:
                inside = visible[position - start : until - start]
                self._block_text += inside
                position = until
                if "\n" in inside:
                    self._activity = self._describe(kind, closed=False)
            if ended is None or ended > stop:
                break
            self._activity = self._describe(kind, closed=True)
            self._done = index + 1
        pieces.append(visible[position - start :])
        return StreamStep("".join(pieces), self._activity if self._activity != before else None)

    def _describe(self, kind: str, *, closed: bool) -> str:
        if kind != "plan-proposal":
            return _WRITTEN[kind] if closed else _WRITING[kind]
        subtasks = len(read_proposal(self._block_text, accepted=True, raw="", span=(0, 0), closed=closed).subtasks)
        if closed:
            return _WRITTEN[kind] + (f" ({counted(subtasks, 'subtask')})" if subtasks else "")
        return _WRITING[kind] + (f" ({counted(subtasks, 'subtask')} so far)" if subtasks else "")
