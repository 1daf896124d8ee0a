"""RuntimeBridge: runtime events become Textual messages posted to the app.

The runtime reports what happens through plain events (``runtime/events.py``). The bridge wraps
each in a :class:`RuntimeUpdate` and posts it to the app, whose message queue hands them, in order,
to the session's controllers — so a delta never overtakes the start of its message, and an
update that fails to draw never stops the next. Consecutive text deltas of one message that are
still waiting in the queue are merged into one update: a fast stream costs one redraw per
loop turn, not one per chunk.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING

from textual.message import Message

from tunaflow_tui.runtime.events import MessageDelta, RuntimeEvent

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort


class RuntimeUpdate(Message, bubble=False):
    """One runtime event on its way to the controllers (deltas of one message may be merged)."""

    def __init__(self, event: RuntimeEvent) -> None:
        super().__init__()
        self.event = event
        self.handled = False
        self.extra_text: list[str] = []
        """Text of deltas merged into this one while it waited in the queue."""

    @property
    def resolved(self) -> RuntimeEvent:
        """The event with any merged delta text appended."""
        event = self.event
        if self.extra_text and isinstance(event, MessageDelta):
            return MessageDelta(event.conversation_id, event.message_id, event.text + "".join(self.extra_text))
        return event


class RuntimeBridge:
    """Posts runtime events to the app as :class:`RuntimeUpdate` messages and counts them through."""

    def __init__(self, app: AppPort) -> None:
        self._app = app
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = threading.get_ident()
        self._last: RuntimeUpdate | None = None
        self._posted = 0
        self._handled = 0
        self._drained = asyncio.Event()
        self._drained.set()

    def bind_loop(self) -> None:
        """Remember the app's event loop: events from other threads are handed over to it."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()

    def observe(self, event: RuntimeEvent) -> None:
        """The runtime's observer: post ``event`` to the app (from any thread)."""
        if self._loop is not None and threading.get_ident() != self._loop_thread:
            self._loop.call_soon_threadsafe(self._post, event)
        else:
            self._post(event)

    def _post(self, event: RuntimeEvent) -> None:
        last = self._last
        if (isinstance(event, MessageDelta) and last is not None and not last.handled
                and isinstance(last.event, MessageDelta) and last.event.message_id == event.message_id):
            last.extra_text.append(event.text)
            return
        update = RuntimeUpdate(event)
        self._last = update
        self._posted += 1
        self._drained.clear()
        if not self._app.post_message(update):
            self._done()  # the app is closing: nothing will handle it

    def started(self, update: RuntimeUpdate) -> None:
        """The app began handling ``update``: later deltas start a new update."""
        update.handled = True

    def finished(self) -> None:
        """The app finished handling an update."""
        self._done()

    def _done(self) -> None:
        self._handled += 1
        if self._handled >= self._posted:
            self._drained.set()

    @property
    def pending(self) -> int:
        """Updates posted and not handled yet."""
        return self._posted - self._handled

    async def drained(self) -> None:
        """Wait until every update posted so far has been handled."""
        while self.pending > 0:
            await self._drained.wait()
            if self.pending > 0:
                self._drained.clear()
