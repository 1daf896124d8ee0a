"""Workers: where the app's background work runs, and how its failures reach the user.

Agent turns and gate decisions run in the ``agents`` worker group: they take seconds to minutes
and may overlap (main and a branch streaming at once). Short UI work — mounting a card, opening a
dialog — runs in the ``ui`` group so a palette command never waits on it. A failure in either
becomes a toast that says what could not be done; it never takes the app down.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from tunaflow_tui.core.terminal_text import neutralize

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.bridge import RuntimeBridge

AGENTS = "agents"
"""Worker group of everything that runs agents (turns and decisions)."""

UI = "ui"
"""Worker group of short UI work started from keys and the palette."""


class Workers:
    """Starts and tracks the app's background work.

    Args:
        app: The app the workers run in.
        bridge: The runtime bridge (``wait_idle`` also waits until its updates reached the screen).
        on_agents_changed: Called on the event loop whenever agent work starts or ends.
        queued_plans: The plans waiting here for a free place (``[workflow] max_parallel_plans``): the
            work started for such a plan waits, nothing runs for it, so it is not agent work until
            its place comes (nothing to cancel, nothing to wait for before quitting or in ``wait_idle``).
    """

    def __init__(self, app: AppPort, bridge: RuntimeBridge, on_agents_changed: Callable[[], None],
                 queued_plans: Callable[[], frozenset[int]] = frozenset) -> None:
        self._app = app
        self._bridge = bridge
        self._on_agents_changed = on_agents_changed
        self._queued_plans = queued_plans
        self._plan_of: dict[str, int] = {}
        self._count = 0

    def run_agent(self, work: Coroutine[Any, Any, object], what: str, *, plan_id: int | None = None) -> None:
        """Run agent work in a worker; a failure becomes a notification naming ``what``.

        ``plan_id`` names the plan the work is for: while that plan waits in the queue, the worker
        does not count as agent work.
        """

        async def guarded() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # shown to the user; the app goes on
                self._app.notify(f"Could not {what}: {neutralize(str(exc)) or type(exc).__name__}",
                                 severity="error", timeout=10)
            finally:
                self._plan_of.pop(name, None)
                # after this worker has finished, so it no longer counts as running
                self._app.call_later(self._on_agents_changed)

        self._count += 1
        name = f"agent-work-{self._count}"
        if plan_id is not None:
            self._plan_of[name] = plan_id
        self._app.run_worker(guarded(), name=name, group=AGENTS, exclusive=False, exit_on_error=False,
                             description=what)
        self._on_agents_changed()

    def _waiting_in_queue(self, worker: Any) -> bool:
        plan_id = self._plan_of.get(worker.name) if worker.name else None
        return plan_id is not None and plan_id in self._queued_plans()

    def _busy(self, groups: tuple[str, ...]) -> list[Any]:
        return [w for w in self._app.workers
                if w.group in groups and not w.is_finished and not self._waiting_in_queue(w)]

    def run_ui(self, work: Coroutine[Any, Any, object], what: str = "update the screen") -> None:
        """Run short UI work without blocking the key or command that asked for it."""

        async def guarded() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._app.notify(f"Could not {what}: {neutralize(str(exc)) or type(exc).__name__}",
                                 severity="error", timeout=10)

        self._app.run_worker(guarded(), group=UI, exit_on_error=False, description=what)

    def agents_running(self) -> bool:
        """True while any agent work runs."""
        return bool(self._busy((AGENTS,)))

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Wait until no agent or UI work runs and every runtime update has reached the screen."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            busy = self._busy((AGENTS, UI))
            if busy:  # looked at again and again: work may start waiting in the queue meanwhile
                # (polled, not awaited: cancelling a wait on a worker would cancel the worker itself)
                await asyncio.sleep(0.02)
                continue
            await asyncio.wait_for(self._bridge.drained(), max(0.01, deadline - loop.time()))
            await asyncio.sleep(0)
            if self._bridge.pending == 0 and not self._busy((AGENTS, UI)):
                return
        raise TimeoutError("agents still running")
