"""RuntimeController: the app's controller on a WorkflowRuntime — turns, events, cards, panes.

The runtime runs on the app's event loop inside Textual workers (group ``agents``); its events
arrive through an observer, are queued, and one pump applies them to the widgets in order, so a
delta never overtakes the start of its message. A failing step becomes a notification or an error
card; it never takes the app down.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from tunaflow_tui.controller import plan_views
from tunaflow_tui.controller.actions import PaletteActions
from tunaflow_tui.controller.git_offer import (
    INIT_GIT_COMMAND,
    NOT_GIT_NOTE,
    git_declined,
    initialise_repository,
    remember_git_declined,
)
from tunaflow_tui.controller.sources import StoreMessageSource, message_view, speaker_label
from tunaflow_tui.controller.view_panes import ViewPanes
from tunaflow_tui.core.attention import AttentionGate, Whereabouts, desktop_notification, is_elsewhere
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.runtime.events import (
    MessageAdded,
    MessageDelta,
    MessageFinished,
    MessageStarted,
    NoticeRaised,
    PlanChanged,
    Progress,
    RuntimeEvent,
    ToolActivity,
)
from tunaflow_tui.runtime.runtime import WorkflowRuntime
from tunaflow_tui.screens.decision import dev_stalled_screen
from tunaflow_tui.screens.doom_loop import DoomLoopScreen
from tunaflow_tui.screens.git_init import git_init_screen
from tunaflow_tui.screens.workflow import WorkflowScreen
from tunaflow_tui.views.chat import MessageView, ToolLineView
from tunaflow_tui.views.plans import APPROVED, HELD, REVISION_REQUESTED
from tunaflow_tui.widgets.arming import ARMING_SECONDS
from tunaflow_tui.widgets.chat_view import ChatView
from tunaflow_tui.widgets.decision_dock import card_is_pending
from tunaflow_tui.widgets.done_card import DoneCard, DoneView
from tunaflow_tui.widgets.plan_card import PlanProposalCard
from tunaflow_tui.widgets.sidebar import Sidebar
from tunaflow_tui.widgets.verdict_card import ReviewVerdictCard

if TYPE_CHECKING:
    from tunaflow_tui.app import TunaflowApp

AGENTS = "agents"
"""Worker group of everything that runs agents (turns and decisions)."""

SEVERITY = {"info": "information", "warning": "warning", "error": "error"}
PROPOSAL_DECISIONS = {APPROVED: "approve", REVISION_REQUESTED: "revise", HELD: "hold"}
SETTLED_TEXT = {"done": "accept", "rework": "rework", "dev": "rework", "drafting": "redesign",
                "approval": "redesign", "escalated": "rework", "abandoned": "abandoned"}
TYPING_PAUSE = 1.5
"""Seconds after a key in the composer during which the user counts as typing: a card arriving then
leaves the cursor where it is."""


class RuntimeController(PaletteActions, ViewPanes):
    """Implements the app's ChatController and WorkflowControls on a :class:`WorkflowRuntime`.

    Args:
        runtime: The project's runtime (its store, settings and workflow service).
        notes: Lines shown under the chat from the start, e.g. "demo engine plays every role".
        offer_git_init: Ask whether to initialise a git repository when the project has none.
    """

    def __init__(self, runtime: WorkflowRuntime, *, notes: tuple[str, ...] = (),
                 offer_git_init: bool = True) -> None:
        self.runtime = runtime
        self.offer_git_init = offer_git_init
        self._attention = AttentionGate()
        self._finished: tuple[str, str] | None = None
        self.store = runtime.store
        self.notes = tuple(notes)
        self._app: TunaflowApp | None = None
        self._queue: asyncio.Queue[RuntimeEvent] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = threading.get_ident()
        self._tools: dict[int, tuple[ToolLineView, ...]] = {}
        self._sources: dict[str, StoreMessageSource] = {}
        self._known: dict[int, tuple[object, ...]] = {}
        self._modal_for: set[int] = set()
        self._send_lock = asyncio.Lock()
        self._branch_cid: str | None = None
        self._progress = ""
        self._told_branch: set[str] = set()
        self._sent_at = 0.0
        runtime.subscribe(self._observe)

    # ------------------------------------------------------------------ ChatController
    @property
    def app(self) -> TunaflowApp:
        """The app (after attach)."""
        assert self._app is not None, "the controller is not attached to an app"
        return self._app

    def attach(self, app: TunaflowApp) -> None:
        self._app = app

    def message_source(self, conversation_id: str) -> StoreMessageSource:
        source = self._sources.get(conversation_id)
        if source is None:
            source = StoreMessageSource(self.store, conversation_id, self._tools)
            self._sources[conversation_id] = source
        return source

    def recipient(self, conversation_id: str) -> str:
        if conversation_id != "main":
            return "nobody (this branch is read-only here)"
        name = self.runtime.settings.roles.architect
        return f"Architect ({name})"

    def send(self, conversation_id: str, text: str) -> None:
        self._sent_at = time.monotonic()  # what was typed for this message is done with
        self.run_agent(self._send(conversation_id, text), "send a message")

    def retry(self, conversation_id: str, message_id: int) -> None:
        self.run_agent(self._retry(message_id), "retry the turn")

    async def _send(self, conversation_id: str, text: str) -> None:
        if self._send_lock.locked():
            self.app.notify("The Architect is still answering; your message goes next.")
        async with self._send_lock:
            await self.runtime.send_user_message(text, conversation_id)

    async def _retry(self, message_id: int) -> None:
        record = self.store.get_message(message_id)
        if record is None:
            self.app.notify("That message no longer exists.", severity="warning")
            return
        await self.runtime.retry_message(record)

    # ------------------------------------------------------------------ workers
    def run_agent(self, work: Coroutine[Any, Any, object], what: str) -> None:
        """Run agent work in a worker; a failure becomes a notification, never a crash."""

        async def guarded() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # shown to the user; the app goes on
                self.app.notify(f"Could not {what}: {neutralize(str(exc)) or type(exc).__name__}",
                                severity="error", timeout=10)
            finally:
                # after this worker has finished, so it no longer counts as running
                self.app.call_later(self._refresh_status)
                self.app.call_later(self._announce_when_idle)

        self.app.run_worker(guarded(), group=AGENTS, exclusive=False, exit_on_error=False, description=what)
        self._refresh_status()

    def agents_running(self) -> bool:
        """True while any agent work runs."""
        return any(w.group == AGENTS and not w.is_finished for w in self.app.workers)

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Wait until no agent work runs and every event has reached the screen (for tests and scripts)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            workers = [w for w in self.app.workers if w.group == AGENTS and not w.is_finished]
            if workers:
                await self.app.workers.wait_for_complete(workers)
                continue
            await self._queue.join()
            await asyncio.sleep(0)
            if not any(w.group == AGENTS and not w.is_finished for w in self.app.workers) and self._queue.empty():
                return
        raise TimeoutError("agents still running")

    # ------------------------------------------------------------------ start
    async def ready(self) -> None:
        app = self.app
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        await app.query_one("#sidebar").mount(Sidebar(plan_views.sidebar_sections(self.store), id="project-sidebar"))
        app.run_worker(self._pump(), group="ui-events", exit_on_error=False, description="runtime events")
        self._refresh_status()  # the notes stay on the status line (no toast repeating them)
        newest_first = self.runtime.service.pending_decisions()
        for pending in reversed(newest_first):
            plan = self.store.get_plan(pending.plan_id)
            if plan is not None:
                await self._show_plan(plan, announce=False)
        for plan in self.store.list_plans():
            if plan.phase == "done" and plan.worktree_path:
                await self._show_done(plan, focus=False)
            elif plan.phase == "held" and plan.pending_decision == "approval":
                # held proposals come back as held cards: still approvable, never focused
                await self._show_plan(plan, announce=False)
        interrupted = self.runtime.interrupted_plans()
        if interrupted:
            run = interrupted[0]
            app.notify(
                f"Plan “{neutralize(run.plan_title)}”: the {run.role or 'agent'} step was interrupted. "
                "Press ctrl+p and choose “Resume interrupted step” (or “Retry interrupted step”).",
                severity="warning", timeout=20,
            )
        elif newest_first:
            app.notify("A decision is waiting for you (f2 jumps to it).", timeout=8)
        if self.offer_git_init and not self.runtime.is_git and not git_declined(self.runtime.project_dir):
            app.push_screen(git_init_screen(neutralize(self.runtime.project_dir.name)), self._git_answered)

    # ------------------------------------------------------------------ a project without git
    def _git_answered(self, choice: str | None) -> None:
        if choice != "init":
            remember_git_declined(self.runtime.project_dir)
            self.app.notify(f"{NOT_GIT_NOTE} Not asked again: ctrl+p “{INIT_GIT_COMMAND}” sets git up later.",
                            severity="warning", timeout=12)
            return
        self.run_ui(self._initialise_git())

    def initialise_git(self) -> None:
        """Set up git for a project without it (the palette's command; asked on open until declined)."""
        if self.runtime.is_git:
            self.app.notify("The project is already a git repository.")
            return
        self.run_ui(self._initialise_git())

    async def _initialise_git(self) -> None:
        project = self.runtime.project_dir
        try:
            await asyncio.to_thread(initialise_repository, project)
        except Exception as exc:  # shown; the project stays as it was
            self.app.notify(f"Could not initialise git: {neutralize(str(exc)) or type(exc).__name__}",
                            severity="error", timeout=12)
            return
        finally:
            self.runtime.refresh_git()
        self.notes = tuple(note for note in self.notes if note != NOT_GIT_NOTE)
        self._refresh_status()
        self.app.notify("Initialised a git repository and committed the current files: each plan now "
                        "gets its own branch and worktree, merged when you accept it.", timeout=10)

    # ------------------------------------------------------------------ attention
    def whereabouts(self) -> Whereabouts:
        """Where the user is looking: the window, the screen, and the conversation in focus."""
        app = self.app
        on_main = app.screen is app.screen_stack[0]
        watching = None
        focused = app.screen.focused if on_main else None
        if focused is not None:
            pane = app.workspace.pane
            if self._branch_cid is not None and (focused is pane or pane in focused.ancestors):
                watching = self._branch_cid
            elif any(node.id == "chat-column" for node in focused.ancestors_with_self):
                watching = app.conversation_id
        return Whereabouts(app_focused=bool(app.app_focus), on_main_screen=on_main, watching=watching)

    def call_attention(self, text: str, *, decision: bool, conversation_id: str | None = None) -> bool:
        """Ring the bell (and send a desktop notification if enabled) when the user is elsewhere.

        Returns whether a signal was given.
        """
        if not is_elsewhere(self.whereabouts(), conversation_id):
            return False
        if not self._attention.allow(time.monotonic(), decision=decision):
            return False
        ui = self.runtime.settings.ui
        if ui.bell:
            self.app.bell()
        if ui.notify_desktop:
            driver = self.app._driver
            if driver is not None:
                # through the driver, like the bell: written as is, between frames
                driver.write(desktop_notification(text))
        return True

    def _announce_when_idle(self) -> None:
        if self._app is None:
            return

        async def work() -> None:
            await self._queue.join()  # a decision announced by the same work goes first
            if self._finished is None or self.agents_running():
                return
            conversation_id, who = self._finished
            self._finished = None
            self.call_attention(f"{who} finished.", decision=False, conversation_id=conversation_id)

        self.app.run_worker(work(), group="attention", exit_on_error=False)

    # ------------------------------------------------------------------ events
    def _observe(self, event: RuntimeEvent) -> None:
        if self._loop is not None and threading.get_ident() != self._loop_thread:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, event)
        else:
            self._queue.put_nowait(event)

    async def _pump(self) -> None:
        while True:
            event = await self._queue.get()
            try:
                await self._handle(event)
            except Exception as exc:  # one bad update must not stop the screen from following
                self.app.log.error(f"runtime event {event!r} failed: {exc!r}")
            finally:
                self._queue.task_done()

    def _chats(self, conversation_id: str) -> list[ChatView]:
        chats = []
        if conversation_id == self.app.conversation_id:
            chats.append(self.app.chat_view)
        body = self.app.workspace.pane.body
        if self._branch_cid == conversation_id and isinstance(body, ChatView) and body.is_attached:
            chats.append(body)
        return chats

    async def _handle(self, event: RuntimeEvent) -> None:
        if isinstance(event, MessageDelta):
            for chat in self._chats(event.conversation_id):
                block = chat.block_for(event.message_id)
                if block is not None and block.is_streaming:
                    await block.append(event.text)
        elif isinstance(event, MessageStarted):
            await self._started(event)
        elif isinstance(event, ToolActivity):
            tools = self._tools.get(event.message_id, ())
            line = ToolLineView(event.name, event.summary)
            if not tools or tools[-1] != line:
                self._tools[event.message_id] = (*tools, line)
                for chat in self._chats(event.conversation_id):
                    block = chat.block_for(event.message_id)
                    if block is not None:
                        await block.show_tools(self._tools[event.message_id])
        elif isinstance(event, MessageFinished | MessageAdded):
            await self._settled(event.conversation_id, event.message_id)
        elif isinstance(event, NoticeRaised):
            self.app.notify(neutralize(event.text), severity=SEVERITY.get(event.level, "information"),  # type: ignore[arg-type]
                            timeout=10 if event.level != "info" else 5)
        elif isinstance(event, Progress):
            self._progress = neutralize(event.text)
            self._refresh_status()
        elif isinstance(event, PlanChanged):
            plan = self.store.get_plan(event.plan_id)
            if plan is not None:
                await self._plan_changed(plan)

    async def _started(self, event: MessageStarted) -> None:
        view = MessageView(event.message_id, "assistant",
                           speaker_label("assistant", event.role, event.engine, event.model), "", "streaming")
        cid = event.conversation_id
        if cid.startswith("branch:") and cid != self._branch_cid:
            await self._load_branch_if_free(cid)
        for chat in self._chats(cid):
            if chat.block_for(event.message_id) is None:
                await chat.start_stream(view)

    async def _settled(self, conversation_id: str, message_id: int) -> None:
        record = self.store.get_message(message_id)
        if record is None:
            return
        if record.role == "assistant" and record.status != "streaming":
            self._finished = (conversation_id, speaker_label("assistant", record.persona, None, None))
        view = message_view(record, self._tools.get(message_id, ()))
        for chat in self._chats(conversation_id):
            block = chat.block_for(message_id)
            if block is not None:
                await block.finish(view)
            else:
                await chat.add_message(view)

    def _refresh_status(self) -> None:
        if self._app is None:
            return
        try:
            running = self.agents_running()
            text = f"⟳ {self._progress}" if running and self._progress else "  ·  ".join(self.notes)
            self.app.set_status(text)
        except Exception:  # the status line is not mounted yet (or any more)
            return

    # ------------------------------------------------------------------ plans and cards
    async def _plan_changed(self, plan: PlanRecord) -> None:
        self._refresh_sidebar()
        self._refresh_workflow()
        if self._branch_cid is not None:
            self._refresh_branch_header()
        await self._show_plan(plan, announce=True)

    async def _show_plan(self, plan: PlanRecord, *, announce: bool) -> None:
        """Bring the plan's card or question in line with its state; announce a new pending decision."""
        dock = self.app.decision_dock
        pending = plan.pending_decision
        held = plan.phase == "held"
        key = (pending, plan.review_round, plan.revision, held)
        is_new = pending is not None and not held and self._known.get(plan.id) != key
        self._known[plan.id] = key
        focus_target = None
        if pending == "approval":
            card = await dock.show_proposal(plan_views.proposal_view(plan))
            focus_target = card
        elif pending in ("review", "review_error"):
            focus_target = await dock.show_verdict(plan_views.verdict_view(plan))
        elif plan.phase == "done":
            if not isinstance(dock.card_for(plan.id), DoneCard):
                focus_target = await self._show_done(plan, focus=False)
                is_new = announce
        else:
            card = dock.card_for(plan.id)
            if card is not None and card_is_pending(card):
                # decided somewhere else (the palette, another process): show what happened
                decided = APPROVED if isinstance(card, PlanProposalCard) else SETTLED_TEXT.get(plan.phase, "decided")
                dock.mark_decided(plan.id, decided)
            if pending in ("doom_loop", "dev_stalled") and is_new and plan.id not in self._modal_for:
                self._ask_in_modal(plan, arming=ARMING_SECONDS)
        if is_new:
            if announce:
                self.call_attention(_decision_text(plan), decision=True)
            if focus_target is not None:
                self.app.call_after_refresh(self._offer_focus, focus_target)

    def user_is_typing(self) -> bool:
        """True while the composer holds text or a key reached it shortly (and after the last send)."""
        composer = self.app.composer
        if composer.text:
            return True
        typed = composer.input.last_key_at
        return typed is not None and typed > self._sent_at and time.monotonic() - typed < TYPING_PAUSE

    def _offer_focus(self, card: Any) -> None:
        """Focus a card that just arrived, unless the user is typing: then the dock's hint points to f2.

        A card focused this way ignores its keys for a moment (see widgets/arming.py), so a key the
        user was already typing cannot decide anything.
        """
        if not card.is_attached:
            return
        if self.user_is_typing():
            self.app.decision_dock.refresh_hint()
            self.app.notify(f"A {card.CARD_NAME} is waiting: f2 focuses it when you are ready.", timeout=8)
            return
        card.focus_on_its_own(ARMING_SECONDS)
        card.scroll_visible(animate=False)

    def _focus_card(self, card: Any) -> None:
        """Focus a card the user asked for: its keys act at once."""
        if card.is_attached:
            card.arm()
            card.focus()
            card.scroll_visible(animate=False)

    async def _show_done(self, plan: PlanRecord, *, focus: bool) -> DoneCard:
        view = DoneView(plan.id, neutralize(plan.title), plan.git_branch, plan.base_branch,
                        bool(plan.worktree_path), None)
        card = await self.app.decision_dock.show_done(view)
        if focus:
            self.app.call_after_refresh(self._focus_card, card)
        return card

    def _ask_in_modal(self, plan: PlanRecord, *, arming: float = 0.0) -> None:
        """Doom loop and a stalled Developer are asked in a modal; escape leaves them for later (f2).

        ``arming``: a question that appears on its own ignores its keys for that long.
        """
        self._modal_for.add(plan.id)

        def answered(choice: str | None) -> None:
            self._modal_for.discard(plan.id)
            if choice:
                self.run_agent(self.runtime.decide(plan.id, choice), f"apply “{choice}”")
            else:
                self.app.notify("Left for later: f2 brings the question back.")

        if plan.pending_decision == "doom_loop":
            failures = plan_views.failure_history(self.store.list_plan_events(plan.id))
            screen = DoomLoopScreen(failures, self.runtime.service.doom_threshold, arming=arming)
        else:
            screen = dev_stalled_screen(neutralize(plan.title), arming=arming)
        self.app.push_screen(screen, answered)

    def jump_to_decision(self, plan_id: int | None = None) -> None:
        pendings = self.runtime.service.pending_decisions()
        if plan_id is not None:
            plan = self.store.get_plan(plan_id)
            if plan is None:
                return
            if plan.phase == "held" or plan.pending_decision is None:
                self.run_agent(self._show_and_focus(plan), "show the plan")
                return
            pendings = tuple(p for p in pendings if p.plan_id == plan_id)
        if not pendings:
            self.app.notify("Nothing is waiting for you.")
            return
        plan = self.store.get_plan(pendings[0].plan_id)
        if plan is not None:
            self.run_agent(self._show_and_focus(plan), "show the decision")

    async def _show_and_focus(self, plan: PlanRecord) -> None:
        while isinstance(self.app.screen, WorkflowScreen):
            self.app.pop_screen()
        if plan.pending_decision in ("doom_loop", "dev_stalled") and plan.phase != "held":
            if plan.id not in self._modal_for:
                self._ask_in_modal(plan)
            return
        dock = self.app.decision_dock
        card: Any = None
        if plan.pending_decision == "approval":
            card = await dock.show_proposal(plan_views.proposal_view(plan))
        elif plan.pending_decision in ("review", "review_error"):
            card = await dock.show_verdict(plan_views.verdict_view(plan))
        elif plan.phase == "done":
            card = await self._show_done(plan, focus=False)
        if card is None:
            self.app.notify(f"“{neutralize(plan.title)}” is in {plan.phase}; nothing to decide now.")
            return
        self.app.call_after_refresh(self._focus_card, card)

    # ------------------------------------------------------------------ decisions from cards
    def proposal_decided(self, event: PlanProposalCard.Decided) -> None:
        if event.plan_id is None:
            return
        decision = PROPOSAL_DECISIONS.get(event.decision)
        if decision is not None:
            self.decide(event.plan_id, decision, feedback=event.feedback or "")

    def verdict_decided(self, event: ReviewVerdictCard.Decided) -> None:
        seats = (event.seat.lower(),) if event.seat else ()
        self.decide(event.plan_id, event.decision, seats=seats)

    def decide(self, plan_id: int, decision: str, *, feedback: str = "", seats: tuple[str, ...] = ()) -> None:
        """Apply a gate decision in a worker; if it is refused the card goes back to pending."""

        async def work() -> None:
            plan = self.store.get_plan(plan_id)
            try:
                if plan is not None and plan.phase == "held" and decision in ("approve", "revise"):
                    await self.runtime.decide(plan_id, "resume")
                await self.runtime.decide(plan_id, decision, feedback=feedback, seats=seats)
            except Exception:
                current = self.store.get_plan(plan_id)
                if current is not None and current.pending_decision is not None:
                    self.app.decision_dock.mark_decided(plan_id, HELD if current.phase == "held" else None)
                raise

        self.run_agent(work(), f"{decision} the plan")

    def done_requested(self, event: DoneCard.Requested) -> None:
        if event.action == "merge":
            self.merge_plan(event.plan_id)
        else:
            self.remove_worktree(event.plan_id)


def _decision_text(plan: PlanRecord) -> str:
    """What a desktop notification says about a pending decision (the title is made inert later)."""
    what = {"approval": "waits for your approval", "review": "has a review verdict for you",
            "review_error": "has a review error to look at", "doom_loop": "keeps failing review",
            "dev_stalled": "has a Developer that stopped"}.get(plan.pending_decision or "", "needs a decision")
    return f"Plan “{plan.title}” {what}."
