"""Engine turns that run in the background and write no message (summaries of long conversations).

Such a turn still starts an agent's process group, so it is treated like any other: the group is
recorded in the running-process registry while it lives (a crash of tunaflow leaves it findable as a
leftover), and it is ended on a timeout or a cancellation instead of being left to finish on its own.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tunaflow_tui.agents.agent_events import EngineError, FinalMessage, ProcessStarted
from tunaflow_tui.core.processes import ProcessIdentity

if TYPE_CHECKING:
    from tunaflow_tui.agents.base import Engine, TurnRequest
    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.runtime.shared_guard import SharedGitGuard


async def quiet_answer(
    store: Store, engine: Engine, request: TurnRequest, *, label: str, timeout_s: float,
    guard: SharedGitGuard | None = None,
) -> str | None:
    """The final text of one turn of ``engine``; None when it failed, errored or ran past ``timeout_s``.

    The turn's process groups are recorded under ``label`` while they run; on a timeout or a
    cancellation the turn is cancelled (its process group ended) before this returns or re-raises.
    With ``guard``, git's shared hooks and configuration are put back after the turn if it changed them.
    """
    shared = await guard.before() if guard is not None else None
    try:
        return await _answer(store, engine, request, label=label, timeout_s=timeout_s)
    finally:
        if guard is not None:
            await guard.after(shared, f"The {label}", None)


async def _answer(store: Store, engine: Engine, request: TurnRequest, *, label: str, timeout_s: float) -> str | None:
    turn = engine.start(request)
    recorded: list[int] = []
    answer: str | None = None
    finished = False
    try:
        async with asyncio.timeout(timeout_s):
            async for event in turn:
                if isinstance(event, ProcessStarted):
                    identity = ProcessIdentity(event.pid, event.pgid, event.start_ticks)
                    recorded.append(store.record_process("agent", identity, label=label).id)
                elif isinstance(event, FinalMessage):
                    answer = event.text
                elif isinstance(event, EngineError):
                    answer = None
                    break
        finished = True
    except TimeoutError:
        answer = None
    finally:
        if not finished:
            await turn.cancel()
        for record_id in recorded:
            store.forget_process(record_id)
    return answer
