"""ProjectOpener: the app's controller while the project opens.

``tunaflow PATH`` shows the window first and opens the project right after the first frame:
loading the settings, importing the workflow runtime and opening the database take longer than
drawing the app, and nobody should stare at a blank terminal meanwhile. Until the project is open
the status line says so; a message sent in that time is kept and sent as soon as the project is
ready, and every other action says that the project is still opening. Once open, the app talks to
the :class:`~tunaflow_tui.controllers.session.ProjectSession` (``opener.session``).

This module imports neither the runtime nor the settings: both load in a thread after the first
frame.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from tunaflow_tui.controllers.hangup import install_hangup_handlers
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.heap import freeze_loaded
from tunaflow_tui.viewmodels.chat import ListMessageSource, MessageSource

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.bridge import RuntimeUpdate
    from tunaflow_tui.controllers.session import ProjectSession
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

OPENING_RECIPIENT = "the Architect, once the project is open"
STILL_OPENING = "The project is still opening; try again in a moment."

RuntimeOpener = Callable[[], "WorkflowRuntime"]
"""Loads the settings and opens the runtime (called in a thread; may raise)."""

Configure = Callable[["WorkflowRuntime"], "tuple[str, ...]"]
"""Applies the loaded settings to the app (theme, keymap, mouse); returns the project notes."""


class _Closed(Exception):
    """The app was closed while the project was opening."""


class ProjectOpener:
    """The app's ChatController while the project opens (after the first frame).

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
        self._app: AppPort | None = None
        self._empty = ListMessageSource()
        self._queued: list[tuple[str, str]] = []
        self._early: list[RuntimeUpdate] = []  # runtime updates that came before the session took over
        self._opened = asyncio.Event()
        self._lock = threading.Lock()
        self._closed = False
        self.runtime: WorkflowRuntime | None = None
        self.session: ProjectSession | None = None
        """The open project's session, once it is open."""
        self.error: str | None = None
        """Why the project could not be opened, if it could not."""

    # ------------------------------------------------------------------ state
    @property
    def app(self) -> AppPort:
        """The app (after attach)."""
        assert self._app is not None, "the opener is not attached to an app"
        return self._app

    @property
    def is_open(self) -> bool:
        """True once the project is open and the runtime controller drives the app."""
        return self.session is not None

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

    # ------------------------------------------------------------------ ChatController
    def attach(self, app: AppPort) -> None:
        self._app = app

    def message_source(self, conversation_id: str) -> MessageSource:
        return self.session.message_source(conversation_id) if self.session is not None else self._empty

    def recipient(self, conversation_id: str) -> str:
        return self.session.recipient(conversation_id) if self.session is not None else OPENING_RECIPIENT

    def send(self, conversation_id: str, text: str) -> None:
        """Send through the session; while the project opens the message is queued, sent once it is open."""
        if self.session is not None:
            self.session.send(conversation_id, text)
            return
        if self.error is not None:
            self.app.notify(f"Not sent: {self.error}", severity="error")
            return
        self._queued.append((conversation_id, text))
        self.app.notify("The project is still opening: your message is sent as soon as it is ready.")
        self._show_opening()

    def retry(self, conversation_id: str, message_id: int) -> None:
        """Rerun a failed turn (there is none to rerun while the project opens)."""
        if self.session is not None:
            self.session.retry(conversation_id, message_id)
        else:
            self.app.notify(self.error or STILL_OPENING, severity="warning")

    # ------------------------------------------------------------------ opening
    async def ready(self) -> None:
        """The first frame is up: install the hang-up handlers and start opening the project."""
        install_hangup_handlers(self.app, lambda: self.runtime)
        self._show_opening()
        # after the first frame: the window is up before anything slow starts
        self.app.call_after_refresh(self._start_opening)

    def _start_opening(self) -> None:
        self.app.run_worker(self._open(), group="project", exit_on_error=False, description="open the project")

    def _show_opening(self) -> None:
        waiting = len(self._queued)
        suffix = f" — {waiting} message{'s' if waiting != 1 else ''} waiting to be sent" if waiting else ""
        self.app.set_status(f"⟳ Opening project {neutralize(self.name)}…{suffix}")

    def _open_in_thread(self) -> tuple[WorkflowRuntime, type[ProjectSession]]:
        runtime = self._open_runtime()
        # imported here, in the thread, so that the event loop never waits for the import
        from tunaflow_tui.controllers.session import ProjectSession

        with self._lock:
            if self._closed:
                runtime.close()
                raise _Closed
            self.runtime = runtime
        return runtime, ProjectSession

    async def _open(self) -> None:
        try:
            runtime, session_class = await asyncio.to_thread(self._open_in_thread)
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
            await self._attach(runtime, session_class)
        finally:
            self._opened.set()

    async def _attach(self, runtime: WorkflowRuntime, session_class: type[ProjectSession]) -> None:
        app = self.app
        notes = self._configure(runtime)
        session = session_class(runtime, notes=notes)
        session.attach(app)
        cid = app.conversation_id
        await app.chat_view.reload(session.message_source(cid))
        app.composer.recipient = session.recipient(cid)
        while self._early:  # in order; any that arrive meanwhile join the end of the list
            await session.route(self._early.pop(0))
        self.session = session
        await session.ready()
        queued, self._queued = self._queued, []
        for conversation_id, text in queued:
            session.send(conversation_id, text)
        freeze_loaded("project open")  # the runtime, the store and the conversation are loaded

    @property
    def held_updates(self) -> int:
        """Runtime updates held until the project is open (see :meth:`hold_update`)."""
        return len(self._early)

    def hold_update(self, update: RuntimeUpdate) -> None:
        """A runtime update that reached the app while the project opens: routed once it is open.

        The runtime talks from the moment the session is attached, before the conversation is
        loaded; dropping what it says then would lose a stream's start and leave the update counted
        as pending for ever.
        """
        self._early.append(update)

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Wait until the project is open, no agent runs and every event has reached the screen."""
        await self.wait_opened(timeout)
        if self.session is not None:
            await self.session.wait_idle(timeout)
