"""What the app asks of the rest of tunaflow: the controller it is started with, and an open project's session.

The app (``app.py``) is typed against these Protocols, never against the classes that implement
them (``controllers/opener.py`` with ``controllers/session.py`` for a project, ``app.DemoChatController``
for the shell alone, the tests' controllers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.branch_controller import BranchesController
    from tunaflow_tui.controllers.bridge import RuntimeUpdate
    from tunaflow_tui.controllers.decision_controller import DecisionController
    from tunaflow_tui.controllers.native_cli import NativeCliController
    from tunaflow_tui.controllers.outcomes import OutcomeController
    from tunaflow_tui.controllers.panes import PaneController
    from tunaflow_tui.controllers.permission_docks import PermissionController
    from tunaflow_tui.controllers.project import ProjectController
    from tunaflow_tui.controllers.roundtable_controller import RoundtableController
    from tunaflow_tui.controllers.search_controller import SearchController
    from tunaflow_tui.controllers.workers import Workers
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.viewmodels.chat import MessageSource


class ChatController(Protocol):
    """What the app asks of the rest of tunaflow.  All methods are called on the event loop.

    ``attach`` is called once when the app is mounted, before anything else; keep the app to push
    results down (e.g. ``await app.chat_view.start_stream(view)``).  ``send`` and ``retry`` must
    return quickly: start a worker (``app.run_worker(..., exit_on_error=False)``) for the turn.
    ``ready`` is called once the app is mounted.

    ``session`` is the open project's :class:`SessionControls`: None while the project opens (then
    ``is_open`` is False, and ``error`` says why it could not open, if it could not) or in an app
    without a workflow; the plan, decision and pane keys then say that there is nothing to act on.
    """

    @property
    def session(self) -> SessionControls | None:
        """The open project's session (None while it opens, or without a workflow)."""
        ...

    @property
    def is_open(self) -> bool:
        """False while the project is still opening (or could not be opened)."""
        ...

    @property
    def error(self) -> str | None:
        """Why the project could not be opened, if it could not."""
        ...

    def attach(self, app: AppPort) -> None:
        """Remember the app; called once on mount."""
        ...

    async def ready(self) -> None:
        """The app is mounted (the first frame is on its way)."""
        ...

    def hold_update(self, update: RuntimeUpdate) -> None:
        """A runtime update that reached the app while no session is open (kept until one is)."""
        ...

    def message_source(self, conversation_id: str) -> MessageSource:
        """The messages of a conversation (``main`` or ``branch:{id}``)."""
        ...

    def recipient(self, conversation_id: str) -> str:
        """Who receives the next message in that conversation, e.g. ``Architect (claude)``."""
        ...

    def send(self, conversation_id: str, text: str) -> None:
        """The user sent ``text`` in that conversation."""
        ...

    def retry(self, conversation_id: str, message_id: int) -> None:
        """The user asked to rerun the failed turn that produced ``message_id``."""
        ...


class SessionControls(Protocol):
    """What the app asks of an open project's session (see ``controllers/session.py``)."""

    runtime: WorkflowRuntime
    branches: BranchesController
    decisions: DecisionController
    native: NativeCliController
    outcomes: OutcomeController
    panes: PaneController
    permissions: PermissionController
    project: ProjectController
    search: SearchController
    workers: Workers

    @property
    def roundtable(self) -> RoundtableController:
        """Roundtables: their set-up, rounds, seats and the pane's keys for them."""
        ...

    async def route(self, update: RuntimeUpdate) -> None:
        """Hand a runtime update to the controller that owns it."""
        ...
