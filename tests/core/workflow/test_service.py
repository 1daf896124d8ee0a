"""The workflow service persists every transition in the project database (real SQLite store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tunaflow_tui.core.proposal_editing import EditedProposal, EditedSubtask
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import (
    Accept,
    AcceptOverride,
    Approve,
    Decision,
    Hold,
    IllegalTransition,
    ImplementationReported,
    PendingDecision,
    ReviewFinished,
    ReviewStarted,
    Rework,
    SeatResult,
    Waiting,
    aggregate,
)
from tunaflow_tui.core.workflow.commands import ContinueAfterEscalation, RequestRevision, Resume
from tunaflow_tui.core.workflow.service import WorkflowService


def new_plan(service: WorkflowService, title: str = "Add OAuth", slug: str = "add-oauth") -> int:
    plan = service.create_plan_from_proposal(
        title=title, slug=slug, description="d", subtasks=[("Client", "x"), ("Callback", "y")]
    )
    return plan.id


def verdict(*verdicts: str | None) -> ReviewFinished:
    return ReviewFinished(aggregate([
        SeatResult(seat=f"seat{i}", engine="demo", verdict=v, error=None if v else "crashed",  # type: ignore[arg-type]
                   findings=("Missing test",))
        for i, v in enumerate(verdicts)
    ]))


def to_review(service: WorkflowService, plan_id: int) -> None:
    service.apply(plan_id, Approve(), actor="user")
    service.apply(plan_id, ImplementationReported(), actor="agent")


def test_new_proposal_waits_at_the_approval_gate(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = new_plan(service)
    plan = store.get_plan(plan_id)
    assert plan is not None and plan.phase == "approval" and plan.pending_decision == "approval"
    assert [e.type for e in store.list_plan_events(plan_id)] == ["proposal_received"]
    (pending,) = service.pending_decisions()
    assert (pending.plan_id, pending.plan_title, pending.kind) == (plan_id, "Add OAuth", PendingDecision.APPROVAL)


def test_apply_writes_fields_and_every_event(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = new_plan(service)
    plan = service.apply(plan_id, Approve(), actor="user")
    assert plan.phase == "dev" and plan.pending_decision is None
    events = store.list_plan_events(plan_id)
    assert [(e.type, e.actor) for e in events][-2:] == [("approved", "user"), ("dev_started", "system")]


def test_illegal_transition_leaves_database_untouched(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = new_plan(service)
    before_plan, before_events = store.get_plan(plan_id), store.list_plan_events(plan_id)
    with pytest.raises(IllegalTransition, match=f"cannot accept plan {plan_id}: it is in approval"):
        service.apply(plan_id, Accept(), actor="user")
    with pytest.raises(IllegalTransition, match="only the user may"):
        service.apply(plan_id, Approve(), actor="agent")
    assert store.get_plan(plan_id) == before_plan
    assert store.list_plan_events(plan_id) == before_events


def test_unknown_plan_is_a_lookup_error(store: Store) -> None:
    with pytest.raises(LookupError, match="no plan 42"):
        WorkflowService(store).apply(42, Approve(), actor="user")


def test_state_survives_reopening_the_store(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    with Store.open(project) as store:
        service = WorkflowService(store)
        plan_id = new_plan(service)
        to_review(service, plan_id)
        service.apply(plan_id, ReviewStarted(), actor="system")
        service.apply(plan_id, verdict("fail", None), actor="system")
        service.apply(plan_id, Hold(), actor="user")
    with Store.open(project) as store:
        service = WorkflowService(store)
        (held,) = service.pending_decisions()  # held: set aside, and still waiting for the user
        assert held.held and held.kind is Waiting.REVIEW
        plan = service.apply(plan_id, Resume(), actor="user")
        assert plan.phase == "review" and plan.pending_decision == "review"
        assert plan.pending_detail["verdict"] == "fail"
        assert service.failures_since_reset(plan_id) == 1
        (pending,) = service.pending_decisions()
        assert pending.kind is Waiting.REVIEW and not pending.held
        assert service.apply(plan_id, AcceptOverride(), actor="user").phase == "done"


def test_doom_loop_is_counted_from_stored_events(store: Store) -> None:
    service = WorkflowService(store, doom_threshold=2)
    plan_id = new_plan(service)
    to_review(service, plan_id)
    for expected in ("review", "escalated"):
        service.apply(plan_id, ReviewStarted(), actor="system")
        plan = service.apply(plan_id, verdict("fail"), actor="system")
        assert plan.phase == expected
        if expected == "review":
            service.apply(plan_id, Rework("fix it"), actor="user")
            service.apply(plan_id, ImplementationReported(), actor="agent")
    assert plan.pending_decision == "doom_loop" and service.failures_since_reset(plan_id) == 2
    assert service.pending_decisions()[0].kind is Waiting.DOOM_LOOP
    plan = service.apply(plan_id, ContinueAfterEscalation(), actor="user")
    assert plan.phase == "rework" and service.failures_since_reset(plan_id) == 0
    answer = [e for e in store.list_plan_events(plan_id) if e.type == "doom_loop_escalated"]
    assert [e.detail["answer"] for e in answer] == ["continue"]


def test_review_error_is_pending_but_never_counted(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = new_plan(service)
    to_review(service, plan_id)
    service.apply(plan_id, ReviewStarted(), actor="system")
    plan = service.apply(plan_id, verdict(None, None), actor="system")
    assert plan.pending_decision == "review_error"
    assert service.failures_since_reset(plan_id) == 0
    assert "retry review" in service.allowed(plan_id)


def test_pending_decisions_oldest_first(store: Store) -> None:
    service = WorkflowService(store)
    first = new_plan(service, "First", "first")
    second = new_plan(service, "Second", "second")
    assert [d.plan_id for d in service.pending_decisions()] == [first, second]
    service.apply(first, RequestRevision("more detail"), actor="user")
    service.receive_reproposal(first, subtasks=[("Only task", "z")], title="First, revised")
    decisions = service.pending_decisions()
    # the revised proposal was asked last: it waits behind the second plan's
    assert [(d.plan_id, d.plan_title) for d in decisions] == [(second, "Second"), (first, "First, revised")]
    assert decisions[1].detail["revision"] == 1
    plan = store.get_plan(first)
    assert plan is not None and [s.title for s in plan.subtasks] == ["Only task"]


def test_subtask_done_ticks_and_out_of_range_is_recorded_not_raised(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = new_plan(service)
    early = service.mark_subtask_done(plan_id, 1)
    assert [s.status for s in early.subtasks] == ["pending", "pending"]  # not in dev yet
    service.apply(plan_id, Approve(), actor="user")
    plan = service.mark_subtask_done(plan_id, 2)
    assert [s.status for s in plan.subtasks] == ["pending", "done"]
    plan = service.mark_subtask_done(plan_id, 7)
    assert [s.status for s in plan.subtasks] == ["pending", "done"]
    rejected = [e for e in store.list_plan_events(plan_id) if e.type == "marker_rejected"]
    assert len(rejected) == 2
    assert "has no subtask 7" in str(rejected[-1].detail["reason"])
    assert "it is in approval" in str(rejected[0].detail["reason"])


def test_rejected_marker_with_and_without_a_plan(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = new_plan(service)
    event = service.record_marker_rejected(plan_id, "review-verdict", "developer", "verdict: pass" * 100)
    assert event.detail["role"] == "developer" and len(str(event.detail["excerpt"])) == 500
    plan = store.get_plan(plan_id)
    assert plan is not None and plan.phase == "approval"
    service.record_marker_rejected(None, "plan-proposal", "user", "<!-- tunaflow:plan-proposal -->")
    (memo,) = store.list_memos(kind="marker_rejected")
    assert json.loads(memo.content)["role"] == "user"


def test_nothing_that_waits_for_the_user_is_left_out_of_pending_decisions(store: Store) -> None:
    service = WorkflowService(store)
    held = new_plan(service, "Held", "held")
    service.apply(held, Hold(), actor="user")
    to_start = new_plan(service, "No automatic review", "no-auto-review")
    to_review(service, to_start)  # implementation complete; automatic review is off, nothing started it
    working = new_plan(service, "Developer at work", "at-work")
    service.apply(working, Approve(), actor="user")
    found = {d.plan_id: d for d in service.pending_decisions(busy={working})}
    assert set(found) == {held, to_start}, "a plan an agent works on waits for the agent, not the user"
    assert found[held].held and found[held].kind is Waiting.APPROVAL
    assert found[held].decisions[0] is Decision.APPROVE and Decision.RESUME in found[held].decisions
    assert found[to_start].kind is Waiting.START_REVIEW and found[to_start].decisions[0] is Decision.START_REVIEW
    assert [d.plan_id for d in service.pending_decisions(busy={working})][-1] == held, "held plans come last"
    stranded = {d.plan_id: d for d in service.pending_decisions()}[working]
    assert stranded.kind is Waiting.INTERRUPTED and stranded.decisions[0] is Decision.RETRY_STEP


EDITED = EditedProposal(
    title="Add OAuth login",
    subtasks=(EditedSubtask("Callback", "y"), EditedSubtask("Client id from the environment", "x"),
              EditedSubtask("Tests")),
    description="Sign in with Google.",
    expected_outcome="A user logs in with Google.",
    constraints=("No new dependency",),
)


def test_an_edit_replaces_the_proposal_and_is_recorded_as_the_users(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = new_plan(service)
    plan = service.edit_proposal(plan_id, EDITED)
    assert plan.phase == "approval" and plan.pending_decision == "approval"
    assert EditedProposal.of(plan) == EDITED
    [event] = [e for e in store.list_plan_events(plan_id) if e.type == "plan_edited"]
    assert event.actor == "user"
    assert event.detail["before"] == {"title": "Add OAuth", "subtasks": ("Client", "Callback")}
    assert "subtask 3 added: “Tests”" in event.detail["changes"] and "description changed" in event.detail["changes"]
    assert store.get_plan(plan_id).pending_detail["subtask_count"] == 3  # type: ignore[union-attr]
    events = len(store.list_plan_events(plan_id))
    assert service.edit_proposal(plan_id, EDITED) == store.get_plan(plan_id), "an edit changing nothing"
    assert len(store.list_plan_events(plan_id)) == events, "… writes nothing"


def test_an_edit_after_approval_changes_nothing(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = new_plan(service)
    service.apply(plan_id, Approve(), actor="user")
    before = (store.get_plan(plan_id), store.list_plan_events(plan_id))
    with pytest.raises(IllegalTransition, match="cannot edit the proposal of plan"):
        service.edit_proposal(plan_id, EDITED)
    with pytest.raises(ValueError, match="needs a title"):
        service.edit_proposal(plan_id, EditedProposal("  "))
    assert (store.get_plan(plan_id), store.list_plan_events(plan_id)) == before
