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
    """

    def __init__(self, app: AppPort, bridge: RuntimeBridge, on_agents_changed: Callable[[], None]) -> None:
        self._app = app
        self._bridge = bridge
        self._on_agents_changed = on_agents_changed

    def run_agent(self, work: Coroutine[Any, Any, object], what: str) -> None:
        """Run agent work in a worker; a failure becomes a notification naming ``what``."""

        async def guarded() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # shown to the user; the app goes on
                self._app.notify(f"Could not {what}: {neutralize(str(exc)) or type(exc).__name__}",
                                 severity="error", timeout=10)
            finally:
                # after this worker has finished, so it no longer counts as running
                self._app.call_later(self._on_agents_changed)

        self._app.run_worker(guarded(), group=AGENTS, exclusive=False, exit_on_error=False, description=what)
        self._on_agents_changed()

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
        return any(w.group == AGENTS and not w.is_finished for w in self._app.workers)

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Wait until no agent or UI work runs and every runtime update has reached the screen."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            busy = [w for w in self._app.workers if w.group in (AGENTS, UI) and not w.is_finished]
            if busy:
                await asyncio.wait_for(self._app.workers.wait_for_complete(busy), max(0.01, deadline - loop.time()))
                continue
            await asyncio.wait_for(self._bridge.drained(), max(0.01, deadline - loop.time()))
            await asyncio.sleep(0)
            if self._bridge.pending == 0 and not any(
                w.group in (AGENTS, UI) and not w.is_finished for w in self._app.workers
            ):
                return
        raise TimeoutError("agents still running")
