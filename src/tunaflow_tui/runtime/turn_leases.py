"""The leases this process holds for its turns: taken before anything is stored, renewed while the turn runs.

A turn (and the user message that asks for it) holds the conversation's lease from the database
(:mod:`tunaflow_tui.core.storage.leases`) for as long as it runs: a second process that wants to
answer, delete or adopt there is refused with a clear line instead of racing the writer. Inside
one process the lease is re-entrant — storing the user's message, then the reply's turn, then a
retry of a stale session all run under the one lease taken first. A heartbeat renews it every
:data:`~tunaflow_tui.core.storage.leases.HEARTBEAT_INTERVAL_S`; when renewing finds it lost (another
process judged this one gone and took over), ``on_lost`` is told so the turn can be stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.leases import HEARTBEAT_INTERVAL_S, TurnLease

LostLease = Callable[[TurnLease], None]
"""Told when the heartbeat finds a lease taken over by another process."""


class LeaseKeeper:
    """The conversation leases held by this process, with one heartbeat task each."""

    def __init__(self, store: Store, on_lost: LostLease | None = None,
                 interval_s: float = HEARTBEAT_INTERVAL_S) -> None:
        self._store = store
        self._on_lost = on_lost
        self._interval_s = interval_s
        self._held: dict[str, tuple[TurnLease, int, asyncio.Task[None]]] = {}

    def lease_of(self, conversation_id: str) -> TurnLease | None:
        """The lease this process holds in ``conversation_id``, if any."""
        held = self._held.get(conversation_id)
        return held[0] if held is not None else None

    @asynccontextmanager
    async def holding(self, conversation_id: str, role: str = "") -> AsyncIterator[TurnLease]:
        """Hold the lease of ``conversation_id`` for the block (re-entrant in this process).

        Raises :class:`~tunaflow_tui.core.storage.leases.TurnInProgress`, having taken nothing,
        while another live process holds it.
        """
        held = self._held.get(conversation_id)
        if held is not None:
            lease, count, task = held
            self._held[conversation_id] = (lease, count + 1, task)
            try:
                yield lease
            finally:
                lease, count, task = self._held[conversation_id]
                self._held[conversation_id] = (lease, count - 1, task)
            return
        lease = self._store.acquire_lease(conversation_id, role=role)
        task = asyncio.get_running_loop().create_task(self._beat(lease), name=f"lease {conversation_id}")
        self._held[conversation_id] = (lease, 1, task)
        try:
            yield lease
        finally:
            self._held.pop(conversation_id, None)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            with contextlib.suppress(Exception):  # a lease left behind is stale as soon as this process ends
                self._store.release_lease(lease)

    async def _beat(self, lease: TurnLease) -> None:
        while True:
            await asyncio.sleep(self._interval_s)
            try:
                kept = await asyncio.to_thread(self._store.renew_lease, lease)
            except Exception:  # a busy database: the next beat tries again (the TTL is far longer)
                continue
            if not kept:
                if self._on_lost is not None:
                    self._on_lost(lease)
                return
