"""The leases this process holds for its turns: taken before anything is stored, renewed while the turn runs.

A turn (and the user message that asks for it) holds the conversation's lease from the database
(:mod:`tunaflow_tui.core.storage.leases`) for as long as it runs: a second process that wants to
answer, delete or adopt there is refused with a clear line instead of racing the writer. Inside
one process the lease is shared — storing the user's message, then the reply's turn, a retry of a
stale session, the seats of a review round all run under the one lease taken first. A heartbeat renews it every
:data:`~tunaflow_tui.core.storage.leases.HEARTBEAT_INTERVAL_S`; when renewing finds it lost (another
process judged this one gone and took over), ``on_lost`` is told so the turn can be stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.leases import HEARTBEAT_INTERVAL_S, TurnLease

LostLease = Callable[[TurnLease], None]
"""Told when the heartbeat finds a lease taken over by another process."""


@dataclass(slots=True)
class _Held:
    lease: TurnLease
    task: asyncio.Task[None]
    users: int = 0


class LeaseKeeper:
    """The conversation leases held by this process, with one heartbeat task each."""

    def __init__(self, store: Store, on_lost: LostLease | None = None,
                 interval_s: float = HEARTBEAT_INTERVAL_S) -> None:
        self._store = store
        self._on_lost = on_lost
        self._interval_s = interval_s
        self._held: dict[str, _Held] = {}

    def lease_of(self, conversation_id: str) -> TurnLease | None:
        """The lease this process holds in ``conversation_id``, if any."""
        held = self._held.get(conversation_id)
        return held.lease if held is not None else None

    @asynccontextmanager
    async def holding(self, conversation_id: str, role: str = "") -> AsyncIterator[TurnLease]:
        """Hold the lease of ``conversation_id`` for the block (shared by this process's turns there).

        Turns of one process in one conversation (a message and its reply, the seats of a review
        round) share the lease; the last of them to end gives it up. Raises
        :class:`~tunaflow_tui.core.storage.leases.TurnInProgress`, having taken nothing, while
        another live process holds it.
        """
        held = self._held.get(conversation_id)
        if held is None:
            lease = self._store.acquire_lease(conversation_id, role=role)
            task = asyncio.get_running_loop().create_task(self._beat(lease), name=f"lease {conversation_id}")
            held = self._held[conversation_id] = _Held(lease, task)
        held.users += 1
        try:
            yield held.lease
        finally:
            held.users -= 1
            if held.users == 0 and self._held.get(conversation_id) is held:
                del self._held[conversation_id]
                held.task.cancel()
                # given up before the loop runs anything else: a turn of this process starting meanwhile
                # (the next seat of a review round) takes it anew instead of finding it still held
                with contextlib.suppress(Exception):  # a lease left behind is stale once this process ends
                    self._store.release_lease(held.lease)
                with contextlib.suppress(asyncio.CancelledError):
                    await held.task

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
