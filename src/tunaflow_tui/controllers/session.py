"""ProjectSession: an open project in the app — its runtime and the small controllers that show it.

The session composes the controllers explicitly; each has one job and is handed only what it
needs:

- :class:`~tunaflow_tui.controllers.conversation.ConversationController` — sending, streaming replies;
- :class:`~tunaflow_tui.controllers.decision_controller.DecisionController` — cards, gate decisions, f2;
- :class:`~tunaflow_tui.controllers.outcomes.OutcomeController` — merge and worktree removal;
- :class:`~tunaflow_tui.controllers.panes.PaneController` — sidebar, branch pane, workflow view;
- :class:`~tunaflow_tui.controllers.project.ProjectController` — git set-up, interrupted steps, cancel;
- :class:`~tunaflow_tui.controllers.tools.ToolsController` — engines, native CLI, themes, context pack;
- :class:`~tunaflow_tui.controllers.search_controller.SearchController` — project search and opening a hit;
- :class:`~tunaflow_tui.controllers.branch_controller.BranchesController` — forking, talking in and adopting branches;
- :class:`~tunaflow_tui.controllers.follower.ExternalWrites` — what other processes write, shown as it lands;
- :class:`~tunaflow_tui.controllers.roundtable_controller.RoundtableController` — roundtables: set-up, rounds, seats;
- :class:`~tunaflow_tui.controllers.permission_docks.PermissionController` — agents' permission questions;
- :class:`~tunaflow_tui.controllers.status_controller.StatusController` and
  :class:`~tunaflow_tui.controllers.attention_controller.AttentionController` — the status line and the bell.

How an event travels: an engine's stream becomes runtime events (``runtime/events.py``); the
:class:`~tunaflow_tui.controllers.bridge.RuntimeBridge` posts each to the app as a
``RuntimeUpdate`` message; the app hands it to :meth:`ProjectSession.route`, which calls the
controller that owns it — in order, one at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from tunaflow_tui.controllers.attention_controller import AttentionController
from tunaflow_tui.controllers.branch_controller import BranchesController
from tunaflow_tui.controllers.bridge import RuntimeBridge, RuntimeUpdate
from tunaflow_tui.controllers.conversation import ConversationController
from tunaflow_tui.controllers.decision_controller import DecisionController
from tunaflow_tui.controllers.follower import ExternalWrites
from tunaflow_tui.controllers.native_cli import NativeCliController
from tunaflow_tui.controllers.outcomes import OutcomeController
from tunaflow_tui.controllers.panes import PaneController
from tunaflow_tui.controllers.permission_docks import PermissionController
from tunaflow_tui.controllers.project import ProjectController
from tunaflow_tui.controllers.search_controller import SearchController
from tunaflow_tui.controllers.sources import MessageSources, StoreMessageSource
from tunaflow_tui.controllers.status_controller import StatusController
from tunaflow_tui.controllers.tools import ToolsController
from tunaflow_tui.controllers.workers import Workers
from tunaflow_tui.runtime.events import (
    MemoryProgress,
    MessageActivity,
    MessageAdded,
    MessageDelta,
    MessageFinished,
    MessageStarted,
    NoticeRaised,
    PermissionAsked,
    PermissionSettled,
    PlanChanged,
    Progress,
    ProjectTestsRunning,
    RuntimeEvent,
    ToolActivity,
    UsageReported,
)
from tunaflow_tui.runtime.plans_in_flight import plan_to_name

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.roundtable_controller import RoundtableController
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

Route = Callable[[Any], Awaitable[None] | None]


class ProjectSession:
    """The app's controller on an open :class:`WorkflowRuntime`.

    Args:
        runtime: The project's runtime (its store, settings and workflow service).
        notes: Lines shown on the status line from the start, e.g. "demo engine plays every role".
        offer_git_init: Ask whether to initialise a git repository when the project has none.
    """

    def __init__(self, runtime: WorkflowRuntime, *, notes: tuple[str, ...] = (),
                 offer_git_init: bool = True) -> None:
        self.runtime = runtime
        self.store = runtime.store
        self.notes = tuple(notes)
        self._offer_git_init = offer_git_init
        self._app: AppPort | None = None
        self.sources = MessageSources(runtime.store)
        # the controllers, built on attach (they need the app)
        self.bridge: RuntimeBridge
        self.workers: Workers
        self.status: StatusController
        self.panes: PaneController
        self.conversation: ConversationController
        self.attention: AttentionController
        self.decisions: DecisionController
        self.outcomes: OutcomeController
        self.project: ProjectController
        self.native: NativeCliController
        self.tools: ToolsController
        self.search: SearchController
        self.branches: BranchesController
        self.follower: ExternalWrites
        self._roundtable: RoundtableController | None = None
        self.permissions: PermissionController
        self._routes: dict[type[RuntimeEvent], Route] = {}

    @property
    def session(self) -> ProjectSession:
        """This session (the app asks its controller for the open session)."""
        return self

    @property
    def is_open(self) -> bool:
        """Always: the session is made on an open runtime."""
        return True

    @property
    def error(self) -> str | None:
        """None: a session only exists for a project that opened."""
        return None

    @property
    def app(self) -> AppPort:
        """The app (after attach)."""
        assert self._app is not None, "the session is not attached to an app"
        return self._app

    # ------------------------------------------------------------------ composition
    def attach(self, app: AppPort) -> None:
        """Build the controllers on ``app`` and start listening to the runtime."""
        if self._app is app:
            return
        self._app = app
        runtime = self.runtime
        self.bridge = RuntimeBridge(app)
        self.workers = Workers(app, self.bridge, self._agents_changed, runtime.slots.waiting)
        self.panes = PaneController(app, runtime, self.sources, self.workers, lambda: self.roundtable)
        self.status = StatusController(app, self.notes, self.workers.agents_running, self.panes.live_hint,
                                       lambda cid, plan: plan_to_name(runtime.store, conversation_id=cid, plan_id=plan))
        self.conversation = ConversationController(app, runtime, self.sources, self.panes, self.workers)
        self.attention = AttentionController(app, self.panes, lambda: runtime.settings.ui)
        self.decisions = DecisionController(app, runtime, self.workers, self.attention,
                                            self.conversation.user_is_typing)
        self.outcomes = OutcomeController(app, runtime, self.workers)
        self.project = ProjectController(app, runtime, self.workers, self.status,
                                         offer_git_init=self._offer_git_init)
        self.native = NativeCliController(app, runtime, self.panes, self.workers)
        self.tools = ToolsController(app, runtime, self.workers, self.conversation_in_focus, self.native)
        self.search = SearchController(app, runtime, self.panes, self.workers)
        self.branches = BranchesController(app, runtime, self.panes, self.conversation, self.workers)
        self.follower = ExternalWrites(app, runtime, self.panes, self.conversation, self.decisions)
        self.permissions = PermissionController(app, runtime.permissions, self.panes, self.attention, self.workers,
                                                self.conversation.user_is_typing)
        self.panes.on_branch_shown = self.permissions.branch_shown
        self.decisions.questions = self.permissions
        self.permissions.on_queue_changed = self.decisions.show_queue
        self._routes = {
            MessageStarted: self._stream_started,
            MessageDelta: self.conversation.stream_delta,
            MessageActivity: self.conversation.stream_activity,
            ToolActivity: self.conversation.tool_used,
            MessageFinished: self._settled,
            MessageAdded: self._settled,
            NoticeRaised: self.status.notice,
            UsageReported: self.status.usage,
            Progress: self.status.progress,
            ProjectTestsRunning: self.status.tests_running,
            MemoryProgress: self.status.memory,
            PlanChanged: self._plan_changed,
            PermissionAsked: self.permissions.on_runtime_event,
            PermissionSettled: self.permissions.on_runtime_event,
        }
        runtime.subscribe(self.bridge.observe)

    @property
    def roundtable(self) -> RoundtableController:
        """The roundtables' controller, built on first use: its modules load with the first roundtable
        (or the first message sent), not when the project opens."""
        if self._roundtable is None:
            from tunaflow_tui.controllers.roundtable_controller import RoundtableController

            self._roundtable = RoundtableController(self.app, self.runtime, self.panes, self.workers,
                                                    self.conversation_in_focus)
        return self._roundtable

    async def ready(self) -> None:
        """The app is mounted: fill the sidebar, show what waits, and say what the user should know."""
        self.bridge.bind_loop()
        await self.panes.mount_sidebar()
        self.status.refresh()  # the notes stay on the status line (no toast repeating them)
        # a decision a stop left unrecorded joins the chat now (written in a thread: the loop stays live)
        await asyncio.to_thread(self.runtime.catch_up_records)
        # Embedding may have reported before the app listened (it starts with the runtime): catch up once.
        memory = await asyncio.to_thread(self.runtime.memory.state)
        self.status.memory(MemoryProgress(memory.embedded, memory.total, memory.running, memory.unavailable))
        await self.decisions.restore()
        await self.project.greet()
        await self.follower.start()  # from now on, what other processes write shows without a keystroke

    # ------------------------------------------------------------------ what the app asks of a controller
    def message_source(self, conversation_id: str) -> StoreMessageSource:
        """The messages of a conversation."""
        return self.conversation.message_source(conversation_id)

    def recipient(self, conversation_id: str) -> str:
        """Who receives the next message in that conversation."""
        return self.conversation.recipient(conversation_id)

    def send(self, conversation_id: str, text: str) -> None:
        """The user sent ``text`` (in a roundtable: to every seat, with the next round)."""
        if self.native.running_in(conversation_id):
            # a turn would resume the very session the CLI is writing: two writers on one transcript
            self.app.notify("Not sent: the native CLI is live in this conversation and writes its session. "
                            "End it (\"End native CLI\") or let it exit, then send.", severity="warning", timeout=8)
            return
        self.status.sent()
        if self.roundtable.is_roundtable(conversation_id):
            self.roundtable.moderate(conversation_id, text)
            return
        self.conversation.send(conversation_id, text)

    def retry(self, conversation_id: str, message_id: int) -> None:
        """The user asked to rerun a failed turn (a roundtable seat's: that seat runs again)."""
        record = self.store.get_message(message_id)
        if record is not None and self.roundtable.seats.rerun_message(record):
            return
        self.conversation.retry(conversation_id, message_id)

    # ------------------------------------------------------------------ runtime updates
    def hold_update(self, update: RuntimeUpdate) -> None:
        """Nothing waits for this session to open: the update is routed as any other."""
        self.workers.run_ui(self.route(update), "show what the runtime reported")

    async def route(self, update: RuntimeUpdate) -> None:
        """Hand a runtime update to the controller that owns it (one update at a time, in order)."""
        self.bridge.started(update)
        event = update.resolved
        try:
            handler = self._routes.get(type(event))
            if handler is not None:
                result = handler(event)
                if asyncio.iscoroutine(result):
                    await result
        except Exception as exc:  # one bad update must not stop the screen from following
            self.app.log.error(f"runtime event {event!r} failed: {exc!r}")
        finally:
            self.bridge.finished()

    async def _stream_started(self, event: MessageStarted) -> None:
        await self.conversation.stream_started(event)
        self.status.agent_started(event)  # after the pane has followed it: the line knows whether it shows
        if event.conversation_id.startswith("branch:"):
            await self.panes.live_changed(event.conversation_id, True)

    async def _settled(self, event: MessageFinished | MessageAdded) -> None:
        if isinstance(event, MessageFinished):
            self.status.agent_finished(event)
        await self.conversation.settled(event.conversation_id, event.message_id)
        if isinstance(event, MessageFinished) and event.conversation_id.startswith("branch:"):
            await self.panes.live_changed(event.conversation_id, False)

    async def _plan_changed(self, event: PlanChanged) -> None:
        plan = self.store.get_plan(event.plan_id)
        if plan is None:
            return
        await self.panes.plan_changed()
        await self.decisions.plan_changed(plan)

    # ------------------------------------------------------------------ agents
    def _agents_changed(self) -> None:
        if self._app is None:
            return
        self.status.refresh()
        if not self.workers.agents_running():
            self.workers.run_ui(self._announce_when_idle(), "announce")

    async def _announce_when_idle(self) -> None:
        await self.bridge.drained()  # a decision announced by the same work goes first
        finished = self.conversation.finished
        if finished is None or self.workers.agents_running():
            return
        self.conversation.finished = None
        conversation_id, who = finished
        self.attention.call(f"{who} finished.", decision=False, conversation_id=conversation_id)

    def agents_running(self) -> bool:
        """True while any agent work runs."""
        return self.workers.agents_running()

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Wait until no agent work runs and every runtime update has reached the screen."""
        await self.workers.wait_idle(timeout)

    def switch_engine(self) -> None:
        """Pick the engine of the branch in focus, else the Architect's (main)."""
        cid = self.conversation_in_focus()
        if cid.startswith("branch:"):
            self.branches.switch_engine(int(cid.removeprefix("branch:")))
        else:
            self.tools.switch_engine()

    def conversation_in_focus(self) -> str:
        """The branch in the pane when the pane has the focus, else the app's conversation."""
        return self.panes.branch_in_focus() or self.app.conversation_id
