"""ProjectOpener: the app's controller while the project opens, and a thin front for it afterwards.

``tunaflow PATH`` shows the window first and opens the project right after the first frame:
loading the settings, importing the workflow runtime and opening the database take longer than
drawing the app, and nobody should stare at a blank terminal meanwhile. Until the project is open
the status line says so; a message sent in that time is kept and sent as soon as the project is
ready, and every other action says that the project is still opening. Afterwards every call goes
to the :class:`~tunaflow_tui.controller.runtime_controller.RuntimeController`.

This module imports neither the runtime nor the settings: both load in a thread after the first
frame.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.views.chat import ListMessageSource, MessageSource

if TYPE_CHECKING:
    from tunaflow_tui.app import TunaflowApp
    from tunaflow_tui.controller.runtime_controller import RuntimeController
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.widgets.done_card import DoneCard
    from tunaflow_tui.widgets.plan_card import PlanProposalCard
    from tunaflow_tui.widgets.sidebar import Sidebar
    from tunaflow_tui.widgets.verdict_card import ReviewVerdictCard

OPENING_RECIPIENT = "the Architect, once the project is open"
STILL_OPENING = "The project is still opening; try again in a moment."

RuntimeOpener = Callable[[], "WorkflowRuntime"]
"""Loads the settings and opens the runtime (called in a thread; may raise)."""

Configure = Callable[["TunaflowApp", "WorkflowRuntime"], "tuple[str, ...]"]
"""Applies the loaded settings to the app (theme, keymap, mouse); returns the project notes."""


class _Closed(Exception):
    """The app was closed while the project was opening."""


class ProjectOpener:
    """Implements the app's ChatController and WorkflowControls; opens the project after the first frame.

    Args:
        name: The project's name, shown while it opens.
        open_runtime: Loads settings and opens the runtime; runs in a thread.
        configure: Applies the settings to the app once they are loaded; returns the notes to show.
        on_failure: Called on the event loop with the error text when the project cannot be opened
            (the command line exits with it); by default the error stays on the status line.
    """

    def __init__(self, name: str, open_runtime: RuntimeOpener, configure: Configure,
                 on_failure: Callable[[str], None] | None = None) -> None:
        self.name = name
        self._open_runtime = open_runtime
        self._configure = configure
        self._on_failure = on_failure
        self._app: TunaflowApp | None = None
        self._empty = ListMessageSource()
        self._queued: list[tuple[str, str]] = []
        self._opened = asyncio.Event()
        self._lock = threading.Lock()
        self._closed = False
        self.runtime: WorkflowRuntime | None = None
        self.inner: RuntimeController | None = None
        """The runtime controller, once the project is open."""
        self.error: str | None = None
        """Why the project could not be opened, if it could not."""

    # ------------------------------------------------------------------ state
    @property
    def app(self) -> TunaflowApp:
        """The app (after attach)."""
        assert self._app is not None, "the opener is not attached to an app"
        return self._app

    @property
    def is_open(self) -> bool:
        """True once the project is open and the runtime controller drives the app."""
        return self.inner is not None

    async def wait_opened(self, timeout: float = 30.0) -> None:
        """Wait until the project is open (or failed to open)."""
        await asyncio.wait_for(self._opened.wait(), timeout)

    def close(self) -> None:
        """Close the runtime (also one that is still being opened: it closes when it arrives)."""
        with self._lock:
            self._closed = True
            runtime, self.runtime = self.runtime, None
        if runtime is not None:
            runtime.close()

    def _refuse(self) -> bool:
        if self.inner is None:
            self.app.notify(self.error or STILL_OPENING, severity="warning")
            return True
        return False

    # ------------------------------------------------------------------ ChatController
    def attach(self, app: TunaflowApp) -> None:
        self._app = app

    def message_source(self, conversation_id: str) -> MessageSource:
        return self.inner.message_source(conversation_id) if self.inner is not None else self._empty

    def recipient(self, conversation_id: str) -> str:
        return self.inner.recipient(conversation_id) if self.inner is not None else OPENING_RECIPIENT

    def send(self, conversation_id: str, text: str) -> None:
        if self.inner is not None:
            self.inner.send(conversation_id, text)
            return
        if self.error is not None:
            self.app.notify(f"Not sent: {self.error}", severity="error")
            return
        self._queued.append((conversation_id, text))
        self.app.notify("The project is still opening: your message is sent as soon as it is ready.")
        self._show_opening()

    def retry(self, conversation_id: str, message_id: int) -> None:
        if not self._refuse() and self.inner is not None:
            self.inner.retry(conversation_id, message_id)

    # ------------------------------------------------------------------ WorkflowControls
    async def ready(self) -> None:
        self._show_opening()
        # after the first frame: the window is up before anything slow starts
        self.app.call_after_refresh(self._start_opening)

    def _start_opening(self) -> None:
        self.app.run_worker(self._open(), group="project", exit_on_error=False, description="open the project")

    def _show_opening(self) -> None:
        waiting = len(self._queued)
        suffix = f" — {waiting} message{'s' if waiting != 1 else ''} waiting to be sent" if waiting else ""
        self.app.set_status(f"⟳ Opening project {neutralize(self.name)}…{suffix}")

    def _open_in_thread(self) -> tuple[WorkflowRuntime, type[RuntimeController]]:
        runtime = self._open_runtime()
        # imported here, in the thread, so that the event loop never waits for the import
        from tunaflow_tui.controller.runtime_controller import RuntimeController

        with self._lock:
            if self._closed:
                runtime.close()
                raise _Closed
            self.runtime = runtime
        return runtime, RuntimeController

    async def _open(self) -> None:
        try:
            runtime, controller_class = await asyncio.to_thread(self._open_in_thread)
        except _Closed:
            self._opened.set()
            return
        except asyncio.CancelledError:
            self._opened.set()
            raise
        except Exception as exc:  # shown to the user, who can only quit
            self.error = f"Cannot open {self.name}: {neutralize(str(exc)) or type(exc).__name__}"
            self._queued.clear()
            self._opened.set()
            self.app.set_status(f"✗ {self.error}")
            if self._on_failure is not None:
                self._on_failure(self.error)
            else:
                self.app.notify(self.error, severity="error", timeout=30)
            return
        try:
            await self._attach(runtime, controller_class)
        finally:
            self._opened.set()

    async def _attach(self, runtime: WorkflowRuntime, controller_class: type[RuntimeController]) -> None:
        app = self.app
        notes = self._configure(app, runtime)
        inner = controller_class(runtime, notes=notes)
        inner.attach(app)
        cid = app.conversation_id
        await app.chat_view.reload(inner.message_source(cid))
        app.composer.recipient = inner.recipient(cid)
        self.inner = inner
        await inner.ready()
        queued, self._queued = self._queued, []
        for conversation_id, text in queued:
            inner.send(conversation_id, text)

    # ------------------------------------------------------------------ delegated actions
    def jump_to_decision(self, plan_id: int | None = None) -> None:
        if not self._refuse() and self.inner is not None:
            self.inner.jump_to_decision(plan_id)

    def open_workflow(self, *, focus_plan: int | None = None, documents: bool = False) -> None:
        if not self._refuse() and self.inner is not None:
            self.inner.open_workflow(focus_plan=focus_plan, documents=documents)

    def cancel_agent(self) -> None:
        if not self._refuse() and self.inner is not None:
            self.inner.cancel_agent()

    def proposal_decided(self, event: PlanProposalCard.Decided) -> None:
        if not self._refuse() and self.inner is not None:
            self.inner.proposal_decided(event)

    def verdict_decided(self, event: ReviewVerdictCard.Decided) -> None:
        if not self._refuse() and self.inner is not None:
            self.inner.verdict_decided(event)

    def done_requested(self, event: DoneCard.Requested) -> None:
        if not self._refuse() and self.inner is not None:
            self.inner.done_requested(event)

    def sidebar_selected(self, event: Sidebar.Selected) -> None:
        if not self._refuse() and self.inner is not None:
            self.inner.sidebar_selected(event)

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Wait until the project is open, no agent runs and every event has reached the screen."""
        await self.wait_opened(timeout)
        if self.inner is not None:
            await self.inner.wait_idle(timeout)

