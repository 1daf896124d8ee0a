"""CardPresenter: what a plan shows in the decision dock, decided in one place.

Every path that shows a plan — it moved, the user pressed f2, a palette command named a decision,
the app opened with decisions waiting — asks :meth:`CardPresenter.show`. A plan waiting for
approval shows its proposal card, one waiting on a review its verdict card, a finished plan its
merge offer; the doom loop, a stalled Developer and a failed worktree setup are asked in a dialog
(:meth:`ask`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from tunaflow_tui.controllers import plan_views
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.core.workflow import event_text as record
from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.core.workflow.event_text import USER_CANCELLED
from tunaflow_tui.core.workflow.phases import PendingDecision, Phase, PlanEventType
from tunaflow_tui.screens.decision_screen import DecisionScreen, dev_stalled_screen
from tunaflow_tui.screens.doom_loop import DoomLoopScreen
from tunaflow_tui.screens.worktree_setup_screen import WorktreeSetupScreen
from tunaflow_tui.viewmodels.plan_rows import DoneView
from tunaflow_tui.widgets.decision.decision_dock import PROPOSAL, WAY, card_is_pending, card_kind

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.core.storage.records import PlanEventRecord, PlanRecord
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.widgets.decision.decision_card import DecisionCard

CARD_QUESTIONS = frozenset({PendingDecision.APPROVAL, PendingDecision.REVIEW, PendingDecision.REVIEW_ERROR})
"""Pending decisions answered on a card in the dock."""

CONFLICT_QUESTIONS = frozenset({PendingDecision.MERGE_CONFLICT, PendingDecision.CONFLICT_UNRESOLVED})
"""Pending decisions about a merge conflict, answered on a conflict card naming the files."""

DIALOG_QUESTIONS = frozenset({PendingDecision.DOOM_LOOP, PendingDecision.DEV_STALLED, PendingDecision.SETUP_FAILED})
"""Pending decisions asked in a dialog."""

SETTLED_VERDICT: dict[str, Decision] = {
    Phase.DONE: Decision.ACCEPT,
    Phase.REWORK: Decision.REWORK,
    Phase.DEV: Decision.REWORK,
    Phase.DRAFTING: Decision.REDESIGN,
    Phase.APPROVAL: Decision.REDESIGN,
    Phase.ESCALATED: Decision.REWORK,
    Phase.ABANDONED: Decision.ABANDON,
}
"""What a verdict card says when its plan moved on without it (decided in the palette, elsewhere)."""

SETTLED_PROPOSAL: dict[str, Decision] = {
    Phase.DRAFTING: Decision.REVISE,
    Phase.ABANDONED: Decision.ABANDON,
}
"""Likewise for a proposal card (anything else past approval means it was approved)."""

Answered = Callable[["PlanRecord", str | None], None]
"""Told the plan and the user's answer to a dialog (None: left for later)."""


_OVERRIDDEN = frozenset({record.ACCEPTED_OVER_FAILED, record.ACCEPTED_PARTIAL})


def accepted_how(events: Sequence[PlanEventRecord]) -> str:
    """How a done plan was accepted when it was not over a complete pass (``accepted over a failed
    review``), the record's words without the reason; empty for a plain accept."""
    settling = [e for e in events if e.type in record.SETTLING_EVENTS]
    if not settling or settling[-1].type not in _OVERRIDDEN:
        return ""
    last = settling[-1]
    return neutralize(record.event_text(last.type, {**dict(last.detail), "reason": ""}) or "")


def done_view(plan: PlanRecord, events: Sequence[PlanEventRecord] = ()) -> DoneView:
    """A finished plan's merge offer, as the store says it is now (merged, worktree still there),
    saying how it was accepted when that was an override."""
    has_tree = bool(plan.worktree_path) and Path(plan.worktree_path or "").exists()
    merges = [e for e in events if e.type == PlanEventType.MERGED]
    merged = str(merges[-1].detail.get("kind") or "merged") if merges else None
    return DoneView(plan.id, neutralize(plan.title), plan.git_branch, plan.base_branch, has_tree, merged,
                    outcome=accepted_how(events))


class CardPresenter:
    """Shows each plan's card (or dialog) as its state says.

    Args:
        app: The app.
        runtime: The project's runtime.
        answered: Called with a dialog's answer.
    """

    def __init__(self, app: AppPort, runtime: WorkflowRuntime, answered: Answered) -> None:
        self._app = app
        self._runtime = runtime
        self._answered = answered
        self._asking: set[int] = set()

    async def show(self, plan: PlanRecord) -> DecisionCard | None:
        """Bring the plan's card in line with its state; returns the card that asks something now.

        A card whose plan moved on without it (decided in the palette or another process) is
        marked with what happened.
        """
        dock = self._app.decision_dock
        pending = plan.pending_decision
        try:
            way = self._runtime.way_on(plan.id)
        except LookupError:
            return None
        if pending == PendingDecision.APPROVAL:
            return await dock.show_proposal(plan_views.proposal_view(plan))
        if pending in (PendingDecision.REVIEW, PendingDecision.REVIEW_ERROR):
            view = replace(plan_views.verdict_view(plan, way=way), title=neutralize(plan.title))
            return await dock.show_verdict(view)
        if pending in CONFLICT_QUESTIONS:  # held too: the card says so and keeps its keys
            events = self._runtime.store.list_plan_events(plan.id)
            return await dock.show_conflict(plan_views.way_view(plan, way, events))
        if plan.phase == Phase.DONE:
            return await dock.show_done(done_view(plan, self._runtime.store.list_plan_events(plan.id)))
        card = dock.card_for(plan.id)
        if plan.phase == Phase.ABANDONED:
            if card is not None:  # whatever the card said before (approved, a verdict), the plan ended here
                dock.mark_decided(plan.id, Decision.ABANDON)
            return None
        if way.asks_the_user and (pending is None or plan.phase == Phase.HELD):
            # a review to start, a step to resume, a held question: a card with the ways on
            return await dock.show_way(plan_views.way_view(plan, way))
        if card is not None and card_is_pending(card):
            if card_kind(card) == WAY:
                await dock.drop(plan.id)  # the plan moved on (or an agent works on it): nothing to take
            elif card_kind(card) == PROPOSAL:
                dock.mark_decided(plan.id, SETTLED_PROPOSAL.get(plan.phase, Decision.APPROVE))
            else:
                dock.mark_decided(plan.id, SETTLED_VERDICT.get(plan.phase, Decision.ACCEPT))
        return None

    async def show_queued(self, plan: PlanRecord) -> DecisionCard | None:
        """A plan waiting in the queue, when the user goes to it: a card saying where it stands in line, with
        its ways on (hold it, abandon it); None for any other plan. It goes when the plan starts."""
        try:
            way = self._runtime.way_on(plan.id)
        except LookupError:
            return None
        if plan.pending_decision is not None or Decision.HOLD not in way.decisions:
            return None
        return await self._app.decision_dock.show_way(plan_views.way_view(plan, way))

    def is_asking(self, plan_id: int) -> bool:
        """True while the plan's dialog is open."""
        return plan_id in self._asking

    def ask(self, plan: PlanRecord, *, arming: float = 0.0) -> None:
        """Ask the doom-loop, stalled-Developer or failed-setup question in a dialog (escape: later).

        ``arming``: a question that appears on its own ignores its keys for that long.
        """
        if plan.id in self._asking or plan.pending_decision not in DIALOG_QUESTIONS:
            return
        self._asking.add(plan.id)

        def answered(choice: str | None) -> None:
            self._asking.discard(plan.id)
            self._answered(plan, choice)

        screen: DecisionScreen
        if plan.pending_decision == PendingDecision.DOOM_LOOP:
            failures = plan_views.failure_history(self._runtime.store.list_plan_events(plan.id))
            screen = DoomLoopScreen(failures, self._runtime.service.doom_threshold, arming=arming)
        elif plan.pending_decision == PendingDecision.SETUP_FAILED:
            detail = dict(plan.pending_detail or {})
            screen = WorktreeSetupScreen(neutralize(plan.title), neutralize(str(detail.get("reason") or "")),
                                         neutralize(str(detail.get("command") or "")),
                                         neutralize(plan.worktree_path or ""), arming=arming)
        else:
            cancelled = (plan.pending_detail or {}).get("reason") == USER_CANCELLED
            screen = dev_stalled_screen(neutralize(plan.title), arming=arming, cancelled=cancelled)
        screen.plan_id = plan.id  # the keys it takes are this plan's (another plan's card does not give them up)
        self._app.push_screen(screen, answered)
