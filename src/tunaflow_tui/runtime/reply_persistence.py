"""When a streaming reply's text is written to the database: soon, whatever arrives next, but not per chunk.

A reply that streams in is stored while it streams, so a crash keeps what the user already read.
Writing on every chunk would rewrite the whole message many times a second; writing only when the
next chunk arrives loses the paragraph an agent finished before a long tool call. So writes are
driven by a timer on the event loop:

* a finished block (a paragraph break, or text followed by a tool call) is written
  :data:`BLOCK_DELAY_S` after the previous write at the latest — at once if that is already past;
* text without a finished block is written :data:`STALE_DELAY_S` after it arrived;
* never more than one write per :data:`BLOCK_DELAY_S`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

BLOCK_DELAY_S = 0.5
"""The most a finished block waits to be stored (and the least time between two writes)."""
STALE_DELAY_S = 3.0
"""The most any unsaved text waits to be stored."""


class ReplyPersister:
    """Calls ``write`` (which stores the reply so far) on the schedule described in the module docstring.

    Must be used from the event loop's thread. ``close()`` cancels a pending write: the caller
    stores the final state itself.
    """

    def __init__(self, write: Callable[[], None], *, block_delay: float = BLOCK_DELAY_S,
                 stale_delay: float = STALE_DELAY_S) -> None:
        self._write = write
        self._block_delay = block_delay
        self._stale_delay = stale_delay
        self._loop = asyncio.get_running_loop()
        self._last_write = self._loop.time()
        self._unsaved_since: float | None = None
        self._block_done = False
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    def changed(self, *, block_done: bool) -> None:
        """Something to store arrived; ``block_done`` when it finished a block."""
        if self._closed:
            return
        now = self._loop.time()
        if self._unsaved_since is None:
            self._unsaved_since = now
        self._block_done = self._block_done or block_done
        self._schedule(now)

    def close(self) -> None:
        """Stop: no write happens after this."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _due(self, now: float) -> float:
        assert self._unsaved_since is not None
        due = self._unsaved_since + self._stale_delay
        if self._block_done:
            due = min(due, max(now, self._last_write + self._block_delay))
        return max(due, self._last_write + self._block_delay)

    def _schedule(self, now: float) -> None:
        due = self._due(now)
        if self._timer is not None:
            if self._timer.when() <= due:
                return
            self._timer.cancel()
        self._timer = self._loop.call_at(due, self._fire)

    def _fire(self) -> None:
        self._timer = None
        if self._closed or self._unsaved_since is None:
            return
        self._unsaved_since = None
        self._block_done = False
        self._last_write = self._loop.time()
        try:
            self._write()
        except Exception:  # e.g. the database is busy: try again later (the end of the turn writes anyway)
            self._unsaved_since = self._last_write
            self._schedule(self._last_write)
