"""The app's stream clock: when streamed text reaches the screen, and when the chat may grow.

Two costs differ by an order of magnitude.  Redrawing the last lines of a streaming answer in place
repaints a few rows.  Adding rows to it changes the height of the chat's content: Textual lays out
the whole chat, the view follows the new bottom, and every visible row is drawn again — tens of
milliseconds on a busy machine, during which a key the user types waits to show.  So text reaches
the screen on two beats: every :data:`FLUSH_INTERVAL` the rows already on screen are redrawn (a
line being written fills word by word), and at most every :data:`GROW_INTERVAL` the streaming
answers may add rows (the lines written meanwhile appear together).  Every streaming block of the
app is written in the same tick, so several parallel streams cost one layout per growth beat, not
one per block or per chunk.

While the user types, full garbage collections are held too (:mod:`tunaflow_tui.heap`): a full
pass is the other long pause a key can land in.  They run again once the typing pauses.
"""

from __future__ import annotations

import time
import weakref
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from tunaflow_tui.heap import hold_full_collections, release_full_collections

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer

FLUSH_INTERVAL = 1 / 6
"""Streamed text is redrawn at most this often (seconds), in the rows it already has."""

GROW_INTERVAL = 0.5
"""Streaming answers add rows to the chat at most this often (seconds).

Measured with ``bench/ui_streams.py`` (three answers at 200 chunks/s, a key every 30 ms): growing
on every flush (six layouts a second) kept a key waiting behind a layout often enough that its p95
reached hundreds of milliseconds on a loaded two-core machine; two growth beats a second leave the
composer's repaints free most of the time, and new lines still arrive twice a second.
"""

TYPING_GROW_INTERVAL = 1.5
"""While the user types, streaming answers add rows at most this often (seconds).

A growth beat's layout is the longest frame the app draws while answers stream; a key that arrives
during one waits for it.  With a key every 30 ms, two beats a second still held one key in ten or so
behind a layout; one beat every 1.5 s while the user types keeps that under one in twenty, and the
answers still move (their last rows are redrawn on every flush).
"""

TYPING_PAUSE = 1.0
"""Seconds after the last key during which the user counts as typing."""


class Flushable(Protocol):
    """A streaming block the clock writes to."""

    async def flush_pending(self, *, grow: bool) -> None:
        """Draw the collected text; add rows only if ``grow``."""


class StreamClock:
    """One timer per app that writes the collected text of every streaming block at once."""

    _clocks: ClassVar[weakref.WeakKeyDictionary[App[Any], StreamClock]] = weakref.WeakKeyDictionary()

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.waiting: dict[Flushable, None] = {}
        self.timer: Timer | None = None
        self._grown_at = 0.0
        self._typed_at = float("-inf")
        self._pause_timer: Timer | None = None

    @classmethod
    def of(cls, app: App[Any]) -> StreamClock:
        """The clock of ``app`` (created on first use)."""
        clock = cls._clocks.get(app)
        if clock is None:
            clock = cls._clocks[app] = cls(app)
        return clock

    def typed(self) -> None:
        """A key reached a composer: growth beats space out to :data:`TYPING_GROW_INTERVAL` and full
        garbage collections wait, until the typing pauses for :data:`TYPING_PAUSE`."""
        self._typed_at = time.monotonic()
        if self._pause_timer is None:
            hold_full_collections()
            self._pause_timer = self.app.set_timer(TYPING_PAUSE, self._typing_paused, name="typing-pause")

    def _typing_paused(self) -> None:
        left = self._typed_at + TYPING_PAUSE - time.monotonic()
        if left > 0:  # a key came meanwhile: look again when the pause after it ends
            self._pause_timer = self.app.set_timer(left, self._typing_paused, name="typing-pause")
            return
        self._pause_timer = None
        release_full_collections()

    def typed_within(self, seconds: float) -> bool:
        """Whether a key reached a composer in the last ``seconds``."""
        return time.monotonic() - self._typed_at < seconds

    def stop(self) -> None:
        """The app is closing: its timers go, and full collections run again if typing held them."""
        for timer in (self.timer, self._pause_timer):
            if timer is not None:
                timer.stop()
        self.timer = self._pause_timer = None
        release_full_collections()

    def may_grow(self, interval: float = GROW_INTERVAL) -> bool:
        """True if a growth beat is due: streaming blocks may add rows now (the beat is taken).

        Args:
            interval: The least time since the last beat.  The first chunk after a quiet spell passes
                :data:`FLUSH_INTERVAL`: a slow stream shows each of its lines at once, and several
                slow streams still lay out the chat at most that often.  While the user types
                (a key in the last :data:`TYPING_PAUSE` seconds) it is at least
                :data:`TYPING_GROW_INTERVAL`.
        """
        now = time.monotonic()
        if now - self._typed_at < TYPING_PAUSE:
            interval = max(interval, TYPING_GROW_INTERVAL)
        if now - self._grown_at < interval:
            return False
        self._grown_at = now
        return True

    def schedule(self, block: Flushable) -> None:
        """Write ``block``'s collected text on the next tick."""
        self.waiting[block] = None
        if self.timer is None:
            self.timer = self.app.set_interval(FLUSH_INTERVAL, self._tick, name="stream-flush")
        else:
            self.timer.resume()

    def forget(self, block: Flushable) -> None:
        """``block`` wrote its text itself (or went away)."""
        self.waiting.pop(block, None)

    async def _tick(self) -> None:
        blocks = list(self.waiting)
        self.waiting.clear()
        if not blocks:
            if self.timer is not None:
                self.timer.pause()
            return
        grow = self.may_grow()  # one beat for every block: one layout for all of them
        for block in blocks:
            await block.flush_pending(grow=grow)
