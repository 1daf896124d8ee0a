"""The `[workflow] doom_threshold` setting reaches the running workflow: the doom-loop question comes after that
many failed reviews, not after the default three."""

from __future__ import annotations

import pytest
from runtime_harness import Harness
from seeded_plans import seat, with_branches

from tunaflow_tui.core.workflow import (
    Approve,
    ImplementationReported,
    ReviewFinished,
    ReviewStarted,
    Rework,
    aggregate,
)
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _failed_reviews(rt: WorkflowRuntime, count: int) -> list[tuple[str, str | None]]:
    """A plan approved and reviewed ``count`` times with a failing verdict, reworked in between (no agent runs);
    the phase and pending question after each review."""
    service = rt.service
    plan_id = service.create_plan_from_proposal(title="Add mul", slug="add-mul", subtasks=[("mul", "")]).id
    with_branches(rt.store, plan_id, "add-mul")
    service.apply(plan_id, Approve(), actor="user")
    service.mark_subtask_done(plan_id, 1)
    seen: list[tuple[str, str | None]] = []
    for number in range(count):
        if number:
            service.apply(plan_id, Rework("still wrong"), actor="user")
        service.apply(plan_id, ImplementationReported(), actor="agent")
        service.apply(plan_id, ReviewStarted(), actor="system")
        plan = service.apply(plan_id, ReviewFinished(aggregate([seat("r", "fail", "still wrong")])), actor="agent")
        seen.append((plan.phase, plan.pending_decision))
    return seen


@pytest.mark.parametrize(("threshold", "reviews"), [(1, 1), (4, 4)])
def test_the_doom_loop_question_comes_after_the_configured_number_of_failed_reviews(
        harness: Harness, threshold: int, reviews: int) -> None:
    rt = WorkflowRuntime(harness.project, harness.settings(doom_threshold=threshold))
    try:
        seen = _failed_reviews(rt, reviews)
    finally:
        rt.close()
    assert seen[:-1] == [("review", "review")] * (reviews - 1), "below the threshold: the usual verdict question"
    assert seen[-1] == ("escalated", "doom_loop")
