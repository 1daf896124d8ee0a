"""Closing the terminal (SIGHUP) or SIGTERM ends the app's agents and test runs before the app ends.

Agents and test runs live in their own process groups, so the hangup that ends the app never
reaches them: without this the agent of a closed terminal window ran on with parent pid 1, and the
next start put a second agent beside it. On either signal the agent workers are cancelled — each
running turn ends its agent's group (SIGKILL after the grace period for one that ignores SIGTERM)
and keeps its reply as *interrupted*, with the reason; a running test command is stopped — then
every group still listed is ended, and the app exits with 128 + the signal. A second signal kills
every group at once.

The process ends even when the app's own exit cannot: after its terminal is gone, a write that
failed leaves the app's output queue with nobody draining it, and the exit's last writes (mouse and
screen modes off) would wait on it forever — holding the project's ownership, so the next tunaflow
could not recover its work. A watchdog thread ends the agents' groups and the process
:data:`EXIT_GRACE_S` after the app was told to exit, and :data:`STOP_TIMEOUT_S` + that grace after the
signal in any case (should the event loop itself be stuck).

This module imports neither the runtime nor the storage: the controller passes in what it needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from tunaflow_tui.controllers.workers import AGENTS
from tunaflow_tui.core.processes import LIVE_GROUPS

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

HANGUP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGHUP, signal.SIGTERM)
STOP_TIMEOUT_S = 15.0
"""The most the app waits for its agent work to wind down before it ends the groups itself."""
EXIT_GRACE_S = 3.0
"""How long the app's own exit may take, once told, before the watchdog ends the process."""


def exit_anyway(code: int, after_s: float) -> threading.Timer:
    """End the agents' groups and the process with ``code`` in ``after_s`` seconds, unless it ended first."""

    def end() -> None:
        with contextlib.suppress(Exception):
            LIVE_GROUPS.kill_all()
        os._exit(code)

    timer = threading.Timer(after_s, end)
    timer.daemon = True  # a process that ends on its own does not wait for it
    timer.name = "tunaflow-exit-watchdog"
    timer.start()
    return timer


def hangup_reason(sig: signal.Signals) -> str:
    """What an interrupted reply says about this stop."""
    return "stopped: the terminal was closed (SIGHUP)" if sig == signal.SIGHUP else f"stopped by {sig.name}"


def install_hangup_handlers(app: AppPort, runtime: Callable[[], WorkflowRuntime | None]) -> None:
    """On SIGHUP or SIGTERM, stop the agents and test runs, then exit ``app`` (call on the app's loop)."""
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task[None]] = []

    def handle(sig: signal.Signals) -> None:
        if stopping:  # asked again: no more waiting
            LIVE_GROUPS.kill_all()
            return
        exit_anyway(128 + int(sig), STOP_TIMEOUT_S + EXIT_GRACE_S)
        stopping.append(loop.create_task(_stop(app, runtime(), sig)))

    for sig in HANGUP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, handle, sig)


async def _stop(app: AppPort, runtime: WorkflowRuntime | None, sig: signal.Signals) -> None:
    if runtime is not None:
        runtime.runner.stop_reason = hangup_reason(sig)
    workers = [w for w in app.workers if w.group == AGENTS and not w.is_finished]
    for worker in workers:
        worker.cancel()
    with contextlib.suppress(TimeoutError, Exception):
        async with asyncio.timeout(STOP_TIMEOUT_S):
            await app.workers.wait_for_complete(workers)
    await asyncio.to_thread(LIVE_GROUPS.terminate_all)
    if runtime is not None:
        from tunaflow_tui.runtime.recovery import record_interruption

        with contextlib.suppress(Exception):  # a courtesy: the interrupted step is resumable without it
            record_interruption(runtime, hangup_reason(sig))
    exit_anyway(128 + int(sig), EXIT_GRACE_S)
    app.exit(return_code=128 + int(sig))
