"""DecisionController: the gates — cards arriving, the user's decisions, and f2 walking the queue.

Every plan waiting for the user is one queue, whichever plan it is about, and so is every agent's open
permission question: f2 walks them together oldest first (plans on hold last), one per press, round
again after the last. A card that arrives takes
the focus unless the user is typing or is on another plan's card that still has keys (then the
dock's hint points to the key that reaches it); a card that took the focus on its own ignores its
keys for a moment, so a key typed for something else never decides a plan. A decision names a
:class:`~tunaflow_tui.core.workflow.decision_words.Decision`; the runtime applies it in a worker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from tunaflow_tui.controllers.cards import DIALOG_QUESTIONS, CardPresenter
from tunaflow_tui.core.proposal_editing import EditedProposal, proposal_to_editable_text
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.core.workflow.phases import PendingDecision, Phase, Waiting
from tunaflow_tui.keyhints import app_key
from tunaflow_tui.screens.confirm import ConfirmDecisionScreen
from tunaflow_tui.screens.proposal_editor import ProposalEditorScreen
from tunaflow_tui.screens.workflow import WorkflowScreen
from tunaflow_tui.screens.worktree_setup_screen import OPEN_SHELL, open_shell
from tunaflow_tui.viewmodels.decision_queue import QueuedDecision
from tunaflow_tui.widgets.decision.arming import ARMING_SECONDS, ArmedCard
from tunaflow_tui.widgets.decision.decision_card import DecisionCard
from tunaflow_tui.widgets.decision.decision_dock import PROPOSAL, card_has_keys, card_kind, card_plan_id

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.attention_controller import AttentionController
    from tunaflow_tui.controllers.workers import Workers
    from tunaflow_tui.core.storage.records import PlanRecord
    from tunaflow_tui.core.workflow.service import WaitingDecision
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.widgets.decision.decision_card import DecisionRequested

_TITLE_IN_QUESTION = 40
"""Characters of a plan's title in a confirmation's frame (it must fit an 80-column dialog)."""

_Place = tuple[bool, datetime, int, int]
"""Where a decision or question is in the queue: (held, waiting since, kind, id) — the order f2 walks.
``kind`` is :data:`_PLAN` (the id a plan's) or :data:`_QUESTION` (an agent's permission question's)."""
_PLAN, _QUESTION = 0, 1
_T = TypeVar("_T")


class OpenQuestions(Protocol):
    """The agents' open permission questions, as f2 walks them beside the plans' decisions."""

    def open_questions(self) -> list[tuple[datetime, int]]:
        """(asked at, request id) of every question still waiting, oldest first."""
        ...

    def focused_question(self) -> int | None:
        """The open question whose card has the keys, if one has."""
        ...

    def asker_of(self, request_id: int) -> str:
        """The role of the agent that asks the question (``Architect``), as the dock names it."""
        ...

    def show_question(self, request_id: int) -> None:
        """Show the question's card and give it the keys."""
        ...

WAITING_TEXT: dict[str, str] = {
    PendingDecision.APPROVAL: "waits for your approval",
    PendingDecision.REVIEW: "has a review verdict for you",
    PendingDecision.REVIEW_ERROR: "has a review error to look at",
    PendingDecision.DOOM_LOOP: "keeps failing review",
    PendingDecision.DEV_STALLED: "has a Developer that stopped",
    PendingDecision.SETUP_FAILED: "has a worktree setup that failed",
    PendingDecision.MERGE_CONFLICT: "no longer merges into its base: resolve the conflict with the Developer, or leave it",
    PendingDecision.CONFLICT_UNRESOLVED: "still has merge conflicts its Developer did not resolve",
    Waiting.START_REVIEW: "is implemented and waits for you to start the review",
}


def decision_text(plan: PlanRecord) -> str:
    """What a desktop notification says about a pending decision (the title is made inert later)."""
    if plan.pending_decision is None and plan.phase == Phase.DONE:
        return f"Plan “{plan.title}” is done: merge it when you are ready."
    if plan.pending_decision is None and plan.phase == Phase.REVIEW:
        return f"Plan “{plan.title}” {WAITING_TEXT[Waiting.START_REVIEW]}."
    what = WAITING_TEXT.get(plan.pending_decision or "", "needs a decision")
    return f"Plan “{plan.title}” {what}."


class DecisionController:
    """Shows what waits for the user and applies what they decide.

    Args:
        app: The app.
        runtime: The project's runtime.
        workers: Where decisions run (they start agents).
        attention: Calls the user back when a decision waits and they look elsewhere.
        user_is_typing: Whether the user is writing in the composer right now.
    """

    def __init__(self, app: AppPort, runtime: WorkflowRuntime, workers: Workers,
                 attention: AttentionController, user_is_typing: Callable[[], bool]) -> None:
        self._app = app
        self._runtime = runtime
        self._store = runtime.store
        self._workers = workers
        self._attention = attention
        self._user_is_typing = user_is_typing
        self.cards = CardPresenter(app, runtime, self._answered)
        self._known: dict[int, tuple[object, ...]] = {}
        self.questions: OpenQuestions | None = None
        """The agents' open permission questions: f2 walks them with the decisions, oldest first."""
        self._walked: _Place | None = None
        """Where f2 is in the queue: the place of the decision or question it reached last."""
        self._come_back = False
        """From outside the cards, f2 comes back to the decision it reached last (False: that one was a
        question left for later, and f2 goes on to the next)."""

    # ------------------------------------------------------------------ plans moving
    async def restore(self) -> None:
        """On open: every waiting decision's card (held ones first, then oldest to newest: the newest
        nearest the composer), finished plans' merge offers, held plans."""
        queue = self._runtime.waiting()
        for waiting in [w for w in queue if w.held] + [w for w in queue if not w.held]:
            plan = self._store.get_plan(waiting.plan_id)
            if plan is not None:
                self._known[plan.id] = self._state_key(plan)
                await self.cards.show(plan)
        for plan in self._store.list_plans():
            if plan.phase == Phase.DONE and plan.worktree_path:
                await self.cards.show(plan)
            elif plan.phase == Phase.HELD and plan.pending_decision == PendingDecision.APPROVAL:
                # held proposals come back as held cards: still approvable, never focused
                await self.cards.show(plan)
        self._show_queue(queue)

    def show_queue(self) -> None:
        """Tell the dock what waits now (an agent's question was asked or settled)."""
        self._show_queue()

    def _show_queue(self, queue: tuple[WaitingDecision, ...] | None = None) -> tuple[WaitingDecision, ...]:
        """Tell the dock what waits — the plans' decisions and the agents' open questions — in the order f2
        walks it, and what f2 reaches from outside the cards (it counts them and names them)."""
        if queue is None:
            queue = self._runtime.waiting()
        entries: list[tuple[_Place, QueuedDecision]] = [(_place(w), QueuedDecision(w.plan_id, w.held))
                                                        for w in queue]
        if self.questions is not None:
            entries += [((False, asked, _QUESTION, request_id),
                         QueuedDecision(None, question=request_id, asker=self.questions.asker_of(request_id)))
                        for asked, request_id in self.questions.open_questions()]
        entries.sort(key=lambda pair: pair[0])
        target = self._next_place(entries, on=None)[1] if entries else None
        self._app.decision_dock.set_queue(tuple(entry for _, entry in entries), target)
        return queue

    def _keys_elsewhere(self, plan_id: int) -> str | None:
        """What has the keys now, when it is not ``plan_id``'s and still decides something: another plan's
        card or dialog, or an agent's open question (``Plan 2``); None when nothing else holds them."""
        screen = self._app.screen
        asking = getattr(screen, "plan_id", None)
        if isinstance(asking, int) and asking != plan_id:
            return f"Plan {asking}"
        holder = self._keys_holder()
        if holder is None:
            return None
        if isinstance(holder, DecisionCard):
            other = card_plan_id(holder)
            return holder.keys_owner() if other != plan_id and card_has_keys(holder) else None
        view = getattr(holder, "view", None)
        return "an agent's question" if getattr(view, "is_open", False) else None

    def _waiting(self, plan: PlanRecord) -> Waiting | None:
        try:
            return self._runtime.way_on(plan.id).waiting
        except LookupError:
            return None

    def _state_key(self, plan: PlanRecord) -> tuple[object, ...]:
        return (plan.pending_decision, plan.review_round, plan.revision, plan.phase, self._waiting(plan))

    async def plan_changed(self, plan: PlanRecord) -> None:
        """A plan moved: its card follows, and a decision that just became pending is announced
        (a review waiting to be started too: nothing else will start it)."""
        key = self._state_key(plan)
        is_new = self._known.get(plan.id) != key and plan.phase != Phase.HELD and (
            plan.pending_decision is not None or plan.phase == Phase.DONE or key[-1] == Waiting.START_REVIEW)
        self._known[plan.id] = key
        card = await self.cards.show(plan)
        self._show_queue()
        if is_new and plan.pending_decision in DIALOG_QUESTIONS:
            holder = self._keys_elsewhere(plan.id)
            if holder is None:
                self.cards.ask(plan, arming=ARMING_SECONDS)
            else:  # a dialog would take the keys from the card (or question) the user is on
                self._tell_it_waits(plan.id, holder)
        if is_new:
            self._attention.call(decision_text(plan), decision=True)
            if card is not None:
                self._app.call_after_refresh(self._offer_focus, card)

    def _tell_it_waits(self, plan_id: int, holder: str) -> None:
        jump = app_key(self._app, "decision.jump", "f2")
        self._app.notify(f"Plan {plan_id} waits for you too; the keys stay with {holder} until you move "
                         f"({jump} walks the decisions).", timeout=8)

    def _offer_focus(self, card: DecisionCard) -> None:
        """Focus a card that just arrived, unless the user is typing: then the dock's hint points to f2.

        A card focused this way ignores its keys for a moment (see widgets/decision/arming.py), so a key the
        user was already typing cannot decide anything.
        """
        if not card.is_attached:
            return
        plan_id = card_plan_id(card)
        holder = self._keys_elsewhere(plan_id) if plan_id is not None else None
        if holder is not None:  # the user is deciding on another plan: its keys stay where they are
            self._app.decision_dock.refresh_hint()
            self._tell_it_waits(plan_id or 0, holder)
            return
        if self._user_is_typing():
            self._app.decision_dock.refresh_hint()
            jump = app_key(self._app, "decision.jump", "f2")
            self._app.notify(f"A {card.CARD_NAME} is waiting: {jump} focuses it when you are ready.", timeout=8)
            return
        card.focus_on_its_own(ARMING_SECONDS)
        card.scroll_visible(animate=False)

    @staticmethod
    def _focus_card(card: DecisionCard) -> None:
        """Focus a card the user asked for: its keys act at once."""
        if card.is_attached:
            card.arm()
            card.focus()
            # after the refresh: a held card opens on focus, and its top (the title) comes into view
            card.app.call_after_refresh(card.scroll_visible, animate=False, top=True)

    # ------------------------------------------------------------------ reaching a decision
    def jump_to_decision(self, plan_id: int | None = None) -> None:
        """f2: the next decision or agent's permission question in the queue (or that plan's card); with
        none, the newest finished plan's merge offer.

        The queue is walked oldest first, plans on hold last, whichever kind each one is: from the card
        that has the keys, or from the one f2 reached last, to the one after it; after the last, round to
        the first again.
        """
        queue = pendings = self._show_queue()
        if plan_id is not None:
            plan = self._store.get_plan(plan_id)
            if plan is None:
                return
            if plan.phase == Phase.HELD or plan.pending_decision is None:
                self._workers.run_ui(self._show_and_focus(plan), "show the plan")
                return
            pendings = tuple(p for p in pendings if p.plan_id == plan_id)
        places: list[tuple[_Place, WaitingDecision | None]] = [(_place(w), w) for w in pendings]
        if plan_id is None and self.questions is not None:
            places += [((False, asked, _QUESTION, request_id), None)
                       for asked, request_id in self.questions.open_questions()]
        places.sort(key=lambda pair: pair[0])
        if not places:
            done = self._app.decision_dock.newest_done() if plan_id is None else None
            if done is not None:  # nothing to decide: the newest finished plan's merge offer
                self._focus_card(done)
                return
            self._app.notify("Nothing is waiting for you.")
            return
        place, target = self._next_place(places, on=self._place_with_keys(places))
        self._walked, self._come_back = place, True
        self._show_queue(queue)
        if target is None:
            if self.questions is not None:
                self.questions.show_question(place[3])
            return
        plan = self._store.get_plan(target.plan_id)
        if plan is not None:
            self._workers.run_ui(self._show_and_focus(plan), "show the decision")

    def _place_with_keys(self, places: Sequence[tuple[_Place, WaitingDecision | None]]) -> _Place | None:
        """The place in the queue of the card (a plan's, or an agent's question) that has the keys now."""
        question = self.questions.focused_question() if self.questions is not None else None
        focused = self._app.decision_dock.focused_card()
        on = card_plan_id(focused) if focused is not None else None
        for place, waiting in places:
            if (waiting is None and place[3] == question) or (waiting is not None and waiting.plan_id == on):
                return place
        return None

    def _next_place(self, places: Sequence[tuple[_Place, _T]], *, on: _Place | None) -> tuple[_Place, _T]:
        """Where f2 goes, across decisions and questions alike: from the card at place ``on`` (it has the
        keys) to the one after it; from elsewhere back to the one f2 reached last (or the one after, once
        that one was decided or its question left for later); the first one when f2 has not walked yet or
        walked past the last."""
        if on is not None:
            return next((pair for pair in places if pair[0] > on), places[0])
        if self._walked is None:
            return places[0]
        walked = self._walked
        if self._come_back:
            return next((pair for pair in places if pair[0] >= walked), places[0])
        return next((pair for pair in places if pair[0] > walked), places[0])

    def _keys_holder(self) -> ArmedCard | None:
        """The card (a plan's, or an agent's question) the focus is on or inside, if any."""
        focused = self._app.focused
        if focused is None:
            return None
        return next((node for node in focused.ancestors_with_self if isinstance(node, ArmedCard)), None)

    async def _show_and_focus(self, plan: PlanRecord) -> None:
        while isinstance(self._app.screen, WorkflowScreen):
            self._app.pop_screen()
        if plan.pending_decision in DIALOG_QUESTIONS and plan.phase != Phase.HELD:
            self.cards.ask(plan)
            return
        card = await self.cards.show(plan) or await self.cards.show_queued(plan)
        if card is None:
            self._app.notify(f"“{neutralize(plan.title)}” is in {plan.phase}; nothing to decide now.")
            return
        self._app.call_after_refresh(self._focus_card, card)

    async def card_for(self, questions: frozenset[str], *, held_too: bool = False) -> DecisionCard | None:
        """The newest card waiting on one of ``questions``, shown, armed and focused (for the palette)."""
        plans = [p for p in self._store.list_plans() if p.pending_decision in questions
                 and (held_too or p.phase != Phase.HELD)]
        if not plans:
            what = ("plan waiting for approval" if PendingDecision.APPROVAL in questions
                    else "review waiting for your decision")
            self._app.notify(f"There is no {what}.", severity="warning")
            return None
        plan = max(plans, key=lambda p: (p.phase != Phase.HELD, p.updated_at, p.id))
        card = await self.cards.show(plan)
        if card is not None:
            self._focus_card(card)  # chosen in the palette: the user means this card
        return card

    def _plan_offering(self, decision: Decision) -> PlanRecord | None:
        """The plan whose card has the keys when it offers ``decision`` now; otherwise the first in the
        queue that does (oldest first, held ones last), then the plans waiting for a slot (their cards offer
        hold and abandon too), in their order."""
        offering = [w.plan_id for w in self._runtime.waiting() if decision in w.decisions]
        for queued in self._runtime.queued_plans():
            try:
                if decision in self._runtime.way_on(queued.plan_id).decisions:
                    offering.append(queued.plan_id)
            except LookupError:  # gone meanwhile (another process)
                continue
        focused = self._app.decision_dock.focused_card()
        on = card_plan_id(focused) if focused is not None else None
        chosen = on if on in offering else offering[0] if offering else None
        return self._store.get_plan(chosen) if chosen is not None else None

    def decide_by_name(self, decision: Decision) -> None:
        """A palette command: the plan whose card has the keys (else the first in the queue) that offers
        ``decision`` shows its card and takes it, as if its key was pressed (a deliberate act is confirmed
        first, as on the card)."""

        async def work() -> None:
            plan = self._plan_offering(decision)
            if plan is None:
                self._app.notify(f"No plan waits for “{decision.label}” now.", severity="warning")
                return
            card: Any = await self.cards.show(plan) or await self.cards.show_queued(plan)
            if card is not None:
                self._focus_card(card)  # chosen in the palette: the user means this card
            if decision is Decision.REVISE and card is not None and card_kind(card) == PROPOSAL:
                card.action_request_revision()
            elif decision is Decision.EDIT:
                self.edit_plan(plan.id)
            else:
                self.decide(plan.id, decision)

        self._workers.run_ui(work(), f"{decision.label.lower()}")

    # ------------------------------------------------------------------ applying decisions
    def requested(self, event: DecisionRequested) -> None:
        """A card asked for a decision; a card that no longer shows the plan as it is decides nothing."""
        if event.plan_id is None:
            return
        plan = self._store.get_plan(event.plan_id)
        if plan is None:
            self._app.notify("That plan no longer exists.", severity="warning")
            return
        stale = (event.revision is not None and plan.revision + 1 != event.revision) or (
            event.round_no is not None and plan.review_round != event.round_no)
        if stale:
            self._app.notify("That card is out of date: the plan moved on. Nothing was decided.",
                             severity="warning")
            self._workers.run_ui(self.cards.show(plan), "show the plan")
            return
        if event.decision is Decision.EDIT:
            self.edit_plan(event.plan_id)
            return
        seats = (event.seat.lower(),) if event.seat else ()
        self.decide(event.plan_id, event.decision, feedback=event.feedback, seats=seats)

    def edit_plan(self, plan_id: int) -> None:
        """Open the plan's proposal in the editor; the saved edit replaces it (recorded as the user's edit),
        and the card waits for the approval of the edited plan."""
        plan = self._store.get_plan(plan_id)
        if plan is None or plan.pending_decision != PendingDecision.APPROVAL:
            self._app.notify("Only a plan waiting for approval can be edited.", severity="warning")
            return

        def saved(edited: EditedProposal | None) -> None:
            if edited is None or edited == EditedProposal.of(plan):
                self._app.notify("The plan was not changed.")
                return
            self._workers.run_ui(self._save_edit(plan_id, edited), "save the edited plan")

        self._app.push_screen(ProposalEditorScreen(proposal_to_editable_text(plan, guide=False), revision=plan.revision + 1), saved)

    async def _save_edit(self, plan_id: int, edited: EditedProposal) -> None:
        try:
            plan = await self._runtime.edit_proposal(plan_id, edited)
        except ValueError as exc:  # e.g. a subtask without a title: said, and the plan stays as it was
            self._app.notify(f"The plan was not changed: {neutralize(str(exc))}", severity="error")
            return
        card = await self.cards.show(plan)
        if card is not None:
            self._focus_card(card)
        jump = app_key(self._app, "decision.jump", "f2")
        self._app.notify(f"Plan edited. Approve it on its card ({jump} reaches it).")

    def decide(self, plan_id: int, decision: Decision, *, feedback: str = "", seats: tuple[str, ...] = ()) -> None:
        """Apply a gate decision; a deliberate act (accepting over a failed or incomplete review,
        abandoning) first asks for a confirmation in the words of the plan's way on."""
        try:
            way = self._runtime.way_on(plan_id)
        except LookupError:
            self._app.notify("That plan no longer exists.", severity="warning")
            return
        text = way.confirm.get(decision)
        if text is None:
            self._apply(plan_id, decision, feedback=feedback, seats=seats)
            return

        def confirmed(reason: str | None) -> None:
            if reason is None:
                self._app.notify(f"Nothing was decided: {decision.label.lower()} was cancelled.")
                self._ask_again(plan_id)
                return
            self._apply(plan_id, decision, feedback=feedback, seats=seats, reason=reason)

        plan = self._store.get_plan(plan_id)
        title = " ".join(plan.title.split()) if plan is not None else ""
        title = title if len(title) <= _TITLE_IN_QUESTION else title[: _TITLE_IN_QUESTION - 1] + "…"
        # several plans can wait at once: the question names the one it decides, as every card does
        named = f"Plan {plan_id} “{neutralize(title)}”" if title else f"Plan {plan_id}"
        self._app.push_screen(ConfirmDecisionScreen(f"{decision.label}: {named}?", neutralize(text), decision.label),
                              confirmed)

    def _ask_again(self, plan_id: int) -> None:
        """A dialog question whose answer was not confirmed comes back."""
        plan = self._store.get_plan(plan_id)
        if plan is not None and plan.pending_decision in DIALOG_QUESTIONS and plan.phase != Phase.HELD:
            self.cards.ask(plan)

    def _apply(self, plan_id: int, decision: Decision, *, feedback: str = "", seats: tuple[str, ...] = (),
               reason: str = "") -> None:
        """Apply a gate decision in a worker; if it is refused the card goes back to pending."""

        async def work() -> None:
            plan = self._store.get_plan(plan_id)
            try:
                if plan is not None and plan.phase == Phase.HELD and decision in (Decision.APPROVE, Decision.REVISE):
                    await self._runtime.decide(plan_id, Decision.RESUME)
                await self._runtime.decide(plan_id, decision, feedback=feedback, seats=seats, reason=reason)
            except Exception:
                current = self._store.get_plan(plan_id)
                if current is not None and current.pending_decision is not None:
                    self._app.decision_dock.mark_decided(
                        plan_id, Decision.HOLD if current.phase == Phase.HELD else None)
                raise

        self._workers.run_agent(work(), f"{decision} the plan", plan_id=plan_id)

    def _answered(self, plan: PlanRecord, choice: str | None) -> None:
        if choice == OPEN_SHELL:
            self._shell_then_ask_again(plan.id)
            return
        if choice:
            self.decide(plan.id, Decision(choice))
        else:
            if self._walked is not None and self._walked[2:] == (_PLAN, plan.id):
                self._come_back = False  # the next f2 goes on to the next decision, not back to this one
                self._show_queue()
            jump = app_key(self._app, "decision.jump", "f2")
            self._app.notify(f"Left for later: {jump} walks the decisions and comes back to it.")

    def _shell_then_ask_again(self, plan_id: int) -> None:
        """A failed worktree setup: the terminal goes to a shell in the worktree, then the question comes back."""
        plan = self._store.get_plan(plan_id)
        if plan is None or not plan.worktree_path:
            return
        error = open_shell(self._app, Path(plan.worktree_path), project=self._runtime.project_dir,
                           branch=plan.git_branch or "")
        if error:
            self._app.notify(neutralize(error), severity="warning", timeout=12)
        current = self._store.get_plan(plan_id)
        if current is not None and current.pending_decision == PendingDecision.SETUP_FAILED:
            self.cards.ask(current)


def _place(waiting: WaitingDecision) -> _Place:
    """Where a decision stands in the queue."""
    return (waiting.held, waiting.since, _PLAN, waiting.plan_id)
