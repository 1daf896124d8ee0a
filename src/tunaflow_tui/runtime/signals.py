"""Stop headless work cleanly on SIGINT (ctrl+c), SIGTERM and SIGHUP (the terminal went away).

Agents and test runs live in their own process groups, so a signal to tunaflow does not reach them:
left alone they would run on after tunaflow is gone. :func:`run_until_signalled` turns the first
of these signals into a cancellation of the work — each running turn then ends its agent's group
(SIGTERM, SIGKILL after a grace period) and keeps the reply so far as *interrupted*, a running test
run is stopped — and afterwards ends whatever group is still listed in
:data:`~tunaflow_tui.core.processes.LIVE_GROUPS`. A second signal while that happens sends
SIGKILL to every group at once instead of waiting; it never raises a traceback.
"""

from __future__ import annotations

import asyncio
import gc
import signal
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tunaflow_tui.core.processes import LIVE_GROUPS

_T = TypeVar("_T")

STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that stop the work (and everything it started)."""


@dataclass(frozen=True, slots=True)
class Outcome(Generic[_T]):
    """What the work returned, or the signal that stopped it."""

    result: _T | None
    stopped_by: signal.Signals | None = None

    @property
    def exit_code(self) -> int | None:
        """The shell's exit code for a process ended by that signal (128 + N), or None."""
        return None if self.stopped_by is None else 128 + int(self.stopped_by)


def stop_reason(sig: signal.Signals) -> str:
    """How a stop by ``sig`` is described in messages and records."""
    return "interrupted (ctrl+c)" if sig == signal.SIGINT else f"stopped by {sig.name}"


async def run_until_signalled(
    work: Coroutine[Any, Any, _T], *, on_stop: Callable[[signal.Signals], None] | None = None
) -> Outcome[_T]:
    """Run ``work`` until it returns, or until one of :data:`STOP_SIGNALS` stops it (see the module).

    ``on_stop`` is told the first signal at once (to say that tunaflow is stopping).
    """
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    received: list[signal.Signals] = []

    def handle(sig: signal.Signals) -> None:
        if received:  # asked again: no more grace periods
            LIVE_GROUPS.kill_all()
            return
        received.append(sig)
        if on_stop is not None:
            on_stop(sig)
        task.cancel(msg=stop_reason(sig))

    installed = []
    for sig in STOP_SIGNALS:
        try:
            loop.add_signal_handler(sig, handle, sig)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no such signal here
            continue
        installed.append(sig)
    try:
        try:
            result: _T | None = await task
        except asyncio.CancelledError:
            if not received:
                raise  # cancelled by someone else: not ours to swallow
            result = None
        # whatever is still running (a test command in a thread, an agent mid-start) ends too
        await asyncio.to_thread(LIVE_GROUPS.terminate_all)
        if received:
            # the stopped agents' pipe transports are released while the loop still runs: released
            # after it closed, each would print a traceback on the way out
            del task
            gc.collect()
            await asyncio.sleep(0)
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
    return Outcome(result, received[0] if received else None)
