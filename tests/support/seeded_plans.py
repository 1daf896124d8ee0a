"""Plans put in a given state through the workflow service and the store: no agent turn runs."""

from __future__ import annotations

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import (
    Approve,
    ImplementationReported,
    ReviewFinished,
    ReviewStarted,
    SeatResult,
    aggregate,
)
from tunaflow_tui.core.workflow.service import WorkflowService

PLAN_TITLE = "Add a word frequency report"


def with_branches(store: Store, plan_id: int, slug: str) -> tuple[int, int]:
    """The plan's implementation and review branches, as approval and the first review create them."""
    impl = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                               kind="implementation", label=f"Implement: {slug}")
    review = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                 mode="roundtable", kind="review", label=f"Review: {slug}")
    store.update_plan(plan_id, impl_branch_id=impl.id, review_branch_id=review.id)
    return impl.id, review.id


def seat(name: str, verdict: str | None, *findings: str, engine: str = "demo", error: str | None = None) -> SeatResult:
    """One review seat's answer (``verdict`` None: the seat errored)."""
    return SeatResult(seat=name, engine=engine, verdict=verdict, findings=tuple(findings),  # type: ignore[arg-type]
                      error=error if verdict is None else None)


def reviewed(store: Store, seats: list[SeatResult], *, title: str = PLAN_TITLE,
             slug: str = "word-frequency", branches: bool = True) -> int:
    """A plan approved, implemented and reviewed once with ``seats``: its verdict waits for the user."""
    service = WorkflowService(store)
    plan_id = service.create_plan_from_proposal(title=title, slug=slug,
                                                subtasks=[("Count words", ""), ("Format the report", "")]).id
    if branches:
        with_branches(store, plan_id, slug)
    service.apply(plan_id, Approve(), actor="user")
    service.mark_subtask_done(plan_id, 1)
    service.apply(plan_id, ImplementationReported(), actor="agent")
    service.apply(plan_id, ReviewStarted(), actor="system")
    service.apply(plan_id, ReviewFinished(aggregate(seats)), actor="agent")
    return plan_id
