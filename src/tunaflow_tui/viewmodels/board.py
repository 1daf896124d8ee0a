"""The workflow board: every plan in the group of the phase it is in, and the short marks of its row.

The groups, in the order the board shows them: what waits for you first (a question, a held plan,
an interrupted step), then the plans on their way (queued, in development, in review), then the
finished ones (done and abandoned). A plan the Architect is re-drafting has its own group.
"""

from __future__ import annotations

from dataclasses import dataclass

from tunaflow_tui.core.workflow.phases import Phase, Waiting
from tunaflow_tui.viewmodels.plan_rows import SUBTASK_DONE, PlanSummaryView

WAITING = "waiting"
DRAFTING = "drafting"
QUEUED = "queued"
DEV = "dev"
REVIEW = "review"
DONE = "done"

COLUMNS: tuple[tuple[str, str], ...] = (
    (WAITING, "Waiting for you"),
    (DRAFTING, "Drafting"),
    (QUEUED, "Queued"),
    (DEV, "Dev"),
    (REVIEW, "Review"),
    (DONE, "Done"),
)
"""(column, heading) in the board's order."""

_BY_PHASE = {
    Phase.CHAT: DRAFTING, Phase.DRAFTING: DRAFTING, Phase.APPROVAL: WAITING, Phase.DEV: DEV,
    Phase.REWORK: DEV, Phase.REVIEW: REVIEW, Phase.HELD: WAITING, Phase.ESCALATED: WAITING,
    Phase.DONE: DONE, Phase.ABANDONED: DONE,
}

_WAITING_MARKS = {
    Waiting.APPROVAL: "approve", Waiting.REVIEW: "verdict", Waiting.REVIEW_ERROR: "review error",
    Waiting.DOOM_LOOP: "failing", Waiting.DEV_STALLED: "stalled", Waiting.SETUP_FAILED: "setup failed",
    Waiting.START_REVIEW: "start review", Waiting.INTERRUPTED: "interrupted", Waiting.REVISION: "revision",
}


def column_of(plan: PlanSummaryView) -> str:
    """The group the plan stands in: the one the controller chose, else the one its phase and question say."""
    if plan.column:
        return plan.column
    if plan.pending and plan.phase not in (Phase.DONE, Phase.ABANDONED):
        return WAITING
    return column_for_phase(plan.phase)


def column_for_phase(phase: str) -> str:
    """The group a plan in ``phase`` stands in when nothing else is known of it."""
    try:
        return _BY_PHASE.get(Phase(phase), DRAFTING)
    except ValueError:  # a phase this version does not know
        return DRAFTING


@dataclass(frozen=True)
class BoardGroup:
    """One group of the board: its column, heading and plans (in the order they came)."""

    column: str
    heading: str
    plans: tuple[PlanSummaryView, ...]


def board_groups(plans: tuple[PlanSummaryView, ...]) -> tuple[BoardGroup, ...]:
    """The plans grouped by column, in the board's order; groups without plans are left out."""
    groups = []
    for column, heading in COLUMNS:
        members = tuple(plan for plan in plans if column_of(plan) == column)
        if members:
            groups.append(BoardGroup(column, heading, members))
    return tuple(groups)


def board_order(plans: tuple[PlanSummaryView, ...]) -> tuple[PlanSummaryView, ...]:
    """The plans in the order the board lists them."""
    return tuple(plan for group in board_groups(plans) for plan in group.plans)


def subtask_progress(plan: PlanSummaryView) -> str:
    """``2/3`` subtasks done; empty for a plan without subtasks."""
    if not plan.subtasks:
        return ""
    return f"{sum(task.status == SUBTASK_DONE for task in plan.subtasks)}/{len(plan.subtasks)}"


def row_mark(plan: PlanSummaryView) -> str:
    """The phase mark of the plan's row: ``dev 2/3``, ``review r1``, ``approve``, ``held``, ``queued``…"""
    column = column_of(plan)
    if column == WAITING:
        if plan.phase == Phase.HELD:
            return "held"
        waiting = plan.waiting or (plan.pending or "").replace(" ", "_")
        if waiting in _WAITING_MARKS:
            return _WAITING_MARKS[Waiting(waiting)]
        return (plan.pending or plan.phase).replace("_", " ")
    if column == QUEUED:
        return "queued"
    if column == DEV:
        progress = subtask_progress(plan)
        return f"{plan.phase} {progress}".strip()
    if column == REVIEW:
        return f"review r{plan.review_round}" if plan.review_round else "review"
    if column == DONE:
        if plan.phase == Phase.ABANDONED:
            return "abandoned"
        return "to merge" if plan.waiting == Waiting.MERGE else "done"
    return plan.phase
