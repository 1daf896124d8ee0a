"""What the workflow service writes, field by field: a plan's proposal, its history, the markers it refused.

Each test reads back what a user meets later — the plan card, the history, the export, a memo — from
the real store, not from what the service returned alone.
"""

from __future__ import annotations

import json
from types import MappingProxyType

import pytest

from tunaflow_tui.core.proposal_editing import EditedProposal, EditedSubtask
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import (
    Accept,
    Approve,
    IllegalTransition,
    ImplementationReported,
    PlanEventType,
    RequestRevision,
    ReviewFinished,
    ReviewStarted,
    Rework,
    SeatResult,
    aggregate,
)
from tunaflow_tui.core.workflow.service import WorkflowService


def _failed_review() -> ReviewFinished:
    return ReviewFinished(aggregate([SeatResult(seat="critic", engine="demo", verdict="fail",
                                                findings=("No test for the callback",))]))


def _in_review(service: WorkflowService, plan_id: int) -> None:
    service.apply(plan_id, Approve(), actor="user")
    service.apply(plan_id, ImplementationReported(), actor="agent")


def _events(store: Store, plan_id: int, type_: PlanEventType) -> list[dict[str, object]]:
    return [dict(e.detail) for e in store.list_plan_events(plan_id) if e.type == type_]


def test_a_proposal_keeps_every_field_the_architect_gave(store: Store) -> None:
    source = store.add_message("main", "assistant", "Here is the plan.")
    service = WorkflowService(store)
    plan = service.create_plan_from_proposal(
        title="Add OAuth", slug="add-oauth", description="Sign in with Google.",
        expected_outcome="A user logs in with Google.", constraints=["No new dependency"],
        non_goals=["No SSO"], subtasks=[("Client", "x"), ("Callback", "y")], source_message_id=source.id)
    stored = store.get_plan(plan.id)
    assert stored is not None and stored == plan
    assert (stored.description, stored.expected_outcome, stored.constraints, stored.non_goals) == (
        "Sign in with Google.", "A user logs in with Google.", ("No new dependency",), ("No SSO",))
    assert stored.source_message_id == source.id, "the plan links back to the message that proposed it"
    assert [s.title for s in stored.subtasks] == ["Client", "Callback"]
    assert stored.pending_detail["subtask_count"] == 2
    assert _events(store, plan.id, PlanEventType.PROPOSAL_RECEIVED) == [{"revision": 0, "subtask_count": 2}]
    bare = service.create_plan_from_proposal(title="Bare", slug="bare")
    assert (bare.description, bare.expected_outcome, bare.source_message_id) == ("", None, None)


def test_a_reproposal_counts_its_new_subtasks(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = service.create_plan_from_proposal(title="Add OAuth", slug="add-oauth", subtasks=[("Client", "")]).id
    service.apply(plan_id, RequestRevision("split it"), actor="user")
    plan = service.receive_reproposal(plan_id, subtasks=[("Client", ""), ("Callback", ""), ("Tests", "")])
    assert plan.pending_detail["subtask_count"] == 3
    assert _events(store, plan_id, PlanEventType.PROPOSAL_RECEIVED)[-1] == {"revision": 1, "subtask_count": 3}


def test_the_review_round_is_stored_and_counted_on_from_the_store(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = service.create_plan_from_proposal(title="Add OAuth", slug="add-oauth").id
    _in_review(service, plan_id)
    for _ in range(2):
        service.apply(plan_id, ReviewStarted(), actor="system")
        service.apply(plan_id, _failed_review(), actor="agent")
        if service.state(plan_id).review_round == 1:
            service.apply(plan_id, Rework("add the test"), actor="user")
            service.apply(plan_id, ImplementationReported(), actor="agent")
    plan = store.get_plan(plan_id)
    assert plan is not None and plan.review_round == 2, "the second review is round 2"
    assert [e["round"] for e in _events(store, plan_id, PlanEventType.REVIEW_STARTED)] == [1, 2]
    state = service.state(plan_id)
    assert (state.review_round, state.failures_since_reset) == (2, 2), "both read from the store"


def test_the_doom_threshold_is_at_least_one_and_one_escalates_at_the_first_failure(store: Store) -> None:
    with pytest.raises(ValueError) as refused:
        WorkflowService(store, doom_threshold=0)
    assert str(refused.value) == "doom_threshold must be at least 1"
    service = WorkflowService(store, doom_threshold=1)
    assert service.doom_threshold == 1
    plan_id = service.create_plan_from_proposal(title="Add OAuth", slug="add-oauth").id
    _in_review(service, plan_id)
    service.apply(plan_id, ReviewStarted(), actor="system")
    service.check(plan_id, _failed_review(), actor="agent")
    plan = service.apply(plan_id, _failed_review(), actor="agent")
    assert (plan.phase, plan.pending_decision) == ("escalated", "doom_loop")


def test_check_refuses_what_apply_would_refuse_and_writes_nothing(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = service.create_plan_from_proposal(title="Add OAuth", slug="add-oauth").id
    before = (store.get_plan(plan_id), store.list_plan_events(plan_id))
    service.check(plan_id, Approve(), actor="user")
    with pytest.raises(IllegalTransition) as not_yet:
        service.check(plan_id, Accept(), actor="user")
    assert str(not_yet.value).startswith(f"cannot accept plan {plan_id}: it is in approval")
    with pytest.raises(IllegalTransition, match="only the user may, not the agent"):
        service.check(plan_id, Approve(), actor="agent")
    with pytest.raises(LookupError, match="there is no plan 99"):
        service.check(99, Approve(), actor="user")
    assert (store.get_plan(plan_id), store.list_plan_events(plan_id)) == before, "a check writes nothing"


def test_an_occurrence_is_recorded_with_its_actor_and_plain_detail(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = service.create_plan_from_proposal(title="Add OAuth", slug="add-oauth").id
    other = service.create_plan_from_proposal(title="Other", slug="other").id
    detail = {"command": ("pytest", "-q"), "exit": 0, "seats": MappingProxyType({"critic": "pass"})}
    event = service.record(plan_id, PlanEventType.TESTS_RAN, "system", detail)  # read-only parts kept as JSON
    service.record(plan_id, PlanEventType.MERGED, "user")
    history = service.events(plan_id)
    assert isinstance(history, tuple) and history == store.list_plan_events(plan_id)
    assert [(e.type, e.actor) for e in history] == [
        ("proposal_received", "agent"), ("tests_ran", "system"), ("merged", "user")]
    assert history[1] == event and event.detail == {"command": ("pytest", "-q"), "exit": 0, "seats": {"critic": "pass"}}
    assert not history[2].detail
    assert [e.type for e in service.events(other)] == ["proposal_received"], "each plan has its own history"


def test_an_edit_writes_every_changed_field_and_names_a_bad_one(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = service.create_plan_from_proposal(title="Add OAuth", slug="add-oauth", subtasks=[("Client", "")]).id
    edited = EditedProposal("Add OAuth login", (EditedSubtask("Client"),), non_goals=("No SSO",),
                            constraints=("No new dependency",))
    plan = service.edit_proposal(plan_id, edited)
    stored = store.get_plan(plan_id)
    assert stored == plan and stored is not None
    assert (stored.title, stored.non_goals, stored.constraints) == ("Add OAuth login", ("No SSO",),
                                                                   ("No new dependency",))
    for bad, message in ((EditedProposal(" "), "the plan needs a title"),
                         (EditedProposal("Add OAuth", (EditedSubtask("  "),)), "every subtask needs a title")):
        with pytest.raises(ValueError) as refused:
            service.edit_proposal(plan_id, bad)
        assert str(refused.value) == message
    assert store.get_plan(plan_id) == stored


def test_a_refused_marker_outside_a_plan_is_kept_whole_as_a_memo(store: Store) -> None:
    service = WorkflowService(store)
    service.record_marker_rejected(None, "plan-proposal", "user", "## Title: Café au lait")
    service.record_marker_rejected(None, "review-verdict", "developer", "verdict: pass", "not a reviewer")
    first, second = store.list_memos(kind="marker_rejected")
    assert json.loads(first.content) == {"kind": "plan-proposal", "role": "user",
                                         "excerpt": "## Title: Café au lait", "reason": ""}
    assert "Café au lait" in first.content, "searchable as written, not as \\u escapes"
    assert json.loads(second.content)["reason"] == "not a reviewer"


def test_a_refused_marker_on_a_plan_is_its_latest_event(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = service.create_plan_from_proposal(title="Add OAuth", slug="add-oauth").id
    service.apply(plan_id, Approve(), actor="user")
    event = service.record_marker_rejected(plan_id, "plan-proposal", "developer", "## Title: Again")
    assert event == store.list_plan_events(plan_id)[-1]
    assert (event.type, event.actor) == ("marker_rejected", "system")
    assert dict(event.detail) == {"kind": "plan-proposal", "role": "developer", "excerpt": "## Title: Again",
                                  "reason": ""}


def test_a_subtask_marker_refused_names_the_marker_and_who_sent_it(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = service.create_plan_from_proposal(title="Add OAuth", slug="add-oauth",
                                                subtasks=[("Client", ""), ("Callback", "")]).id
    service.mark_subtask_done(plan_id, 1, actor="user")  # at the approval gate: refused
    service.apply(plan_id, Approve(), actor="user")
    service.mark_subtask_done(plan_id, 3)  # no such subtask
    plan = service.mark_subtask_done(plan_id, 2)
    assert [s.status for s in plan.subtasks] == ["pending", "done"]
    refused = _events(store, plan_id, PlanEventType.MARKER_REJECTED)
    assert [(e["kind"], e["role"], e["excerpt"]) for e in refused] == [
        ("subtask-done", "user", "<!-- tunaflow:subtask-done:1 -->"),
        ("subtask-done", "agent", "<!-- tunaflow:subtask-done:3 -->"),
    ]
    assert refused[1]["reason"] == f"plan {plan_id} has no subtask 3 (it has 2)"
    assert _events(store, plan_id, PlanEventType.SUBTASK_DONE) == [{"index": 2}]
