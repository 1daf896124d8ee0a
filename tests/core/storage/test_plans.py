"""Plans: creation, updates, subtasks, slugs and the event history."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.storage import StorageError, Store
from tunaflow_tui.core.workflow import PendingDecision, Phase, PlanEventType


def _plan(store: Store, slug: str = "login-fix") -> int:
    source = store.add_message("main", "assistant", "proposal")
    plan = store.create_plan(
        title="Fix login", slug=slug, description="The login page 500s", expected_outcome="login works",
        constraints=["no new deps"], non_goals=["redesign"], subtasks=[("Repro", "write a test"),
                                                                        ("Fix", "patch handler")],
        source_message_id=source.id)
    return plan.id


def test_create_and_get_plan(store: Store) -> None:
    plan = store.get_plan(_plan(store))
    assert plan is not None
    assert (plan.title, plan.slug, plan.phase, plan.revision, plan.review_round) == (
        "Fix login", "login-fix", "approval", 0, 0)
    assert plan.constraints == ("no new deps",) and plan.non_goals == ("redesign",)
    assert plan.expected_outcome == "login works"
    assert [(s.index, s.title, s.details, s.status) for s in plan.subtasks] == [
        (1, "Repro", "write a test", "pending"), (2, "Fix", "patch handler", "pending")]
    assert plan.pending_detail == {}
    assert plan.project_id == store.project.id
    assert store.get_plan(plan.id + 100) is None


def test_update_plan_fields(store: Store) -> None:
    plan_id = _plan(store)
    branch = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                 mode="chat", kind="implementation", label="impl")
    plan = store.update_plan(
        plan_id, phase="held", held_from="approval", pending_decision="approval",
        pending_detail={"findings": [{"severity": "high", "text": "x"}], "round": 2},
        revision=1, review_round=2, impl_branch_id=branch.id, base_branch="main",
        git_branch="tunaflow/login-fix", worktree_path="/tmp/wt", constraints=["a", "b"], title="Fix login v2")
    assert (plan.phase, plan.held_from, plan.pending_decision) == ("held", "approval", "approval")
    assert plan.pending_detail["round"] == 2
    assert plan.pending_detail["findings"][0]["severity"] == "high"  # type: ignore[index]
    assert (plan.revision, plan.review_round, plan.impl_branch_id) == (1, 2, branch.id)
    assert plan.constraints == ("a", "b") and plan.title == "Fix login v2"
    assert store.get_plan(plan_id) == plan
    cleared = store.update_plan(plan_id, held_from=None, pending_decision=None, pending_detail={})
    assert (cleared.held_from, cleared.pending_decision, dict(cleared.pending_detail)) == (None, None, {})


def test_update_plan_refuses_bad_input(store: Store) -> None:
    plan_id = _plan(store)
    with pytest.raises(ValueError, match="cannot update"):
        store.update_plan(plan_id, project_id=7)
    with pytest.raises(ValueError, match="phase"):
        store.update_plan(plan_id, phase="shipping")
    with pytest.raises(ValueError, match="unknown plan"):
        store.update_plan(999, title="x")
    with pytest.raises(ValueError, match="JSON"):
        store.update_plan(plan_id, pending_detail={"x": object()})
    assert store.get_plan(plan_id).phase == "approval"  # type: ignore[union-attr]


def test_slugs_are_unique(store: Store) -> None:
    first = _plan(store)
    assert store.slug_taken("login-fix")
    assert not store.slug_taken("login-fix-2")
    with pytest.raises(ValueError, match="taken"):
        _plan(store)
    second = _plan(store, slug="login-fix-2")
    with pytest.raises(ValueError, match="taken"):
        store.update_plan(second, slug="login-fix")
    assert store.update_plan(first, slug="login-fix").slug == "login-fix"  # its own slug is fine
    assert [p.id for p in store.list_plans()] == [first, second]


def test_subtasks_tick_and_are_replaced_on_revision(store: Store) -> None:
    plan_id = _plan(store)
    plan = store.set_subtask_status(plan_id, 2, "done")
    assert [s.status for s in plan.subtasks] == ["pending", "done"]
    plan = store.set_subtask_status(plan_id, 1, "failed")
    assert [s.status for s in plan.subtasks] == ["failed", "done"]
    with pytest.raises(ValueError, match="no subtask 3"):
        store.set_subtask_status(plan_id, 3, "done")
    with pytest.raises(ValueError, match="status"):
        store.set_subtask_status(plan_id, 1, "skipped")
    plan = store.replace_subtasks(plan_id, [("A", "a"), ("B", "b"), ("C", "c")])
    assert [(s.index, s.title, s.status) for s in plan.subtasks] == [
        (1, "A", "pending"), (2, "B", "pending"), (3, "C", "pending")]
    assert store.list_plans()[0].subtasks == plan.subtasks


def test_plan_events_in_order(store: Store) -> None:
    plan_id = _plan(store)
    a = store.add_plan_event(plan_id, PlanEventType.APPROVED, "user")
    b = store.add_plan_event(plan_id, PlanEventType.REVIEW_FAILED, "system", {"round": 1, "seats": ["claude", "codex"]})
    assert a.detail == {} and a.actor == "user"
    assert a.type == "approved"
    assert b.detail["seats"] == ("claude", "codex")
    assert store.list_plan_events(plan_id) == (a, b)
    assert b.created_at >= a.created_at
    with pytest.raises(ValueError, match="actor"):
        store.add_plan_event(plan_id, PlanEventType.APPROVED, "robot")
    with pytest.raises(ValueError, match="unknown plan"):
        store.add_plan_event(777, PlanEventType.APPROVED, "user")
    assert store.list_plan_events(777) == ()


def test_only_known_event_types_reach_a_plan_history(store: Store) -> None:
    plan_id = _plan(store)
    for typo in ("aproved", "created", "APPROVED", "", "approved "):
        with pytest.raises(ValueError, match="type must be one of"):
            store.add_plan_event(plan_id, typo, "user")  # type: ignore[arg-type]
    assert store.list_plan_events(plan_id) == ()
    # the text of a member is that member (a history read back compares equal to the enum)
    event = store.add_plan_event(plan_id, "held", "user")  # type: ignore[arg-type]
    assert event.type == PlanEventType.HELD


def test_phases_and_pending_decisions_are_their_enums(store: Store) -> None:
    plan_id = _plan(store)
    with pytest.raises(ValueError, match="phase"):
        store.update_plan(plan_id, phase="finished")
    with pytest.raises(ValueError, match="pending_decision"):
        store.update_plan(plan_id, pending_decision="approve")
    plan = store.update_plan(plan_id, phase=Phase.REVIEW, pending_decision=PendingDecision.REVIEW)
    assert (plan.phase, plan.pending_decision) == ("review", "review")


def test_subtasks_and_events_are_written_with_the_plan_or_not_at_all(store: Store) -> None:
    with pytest.raises(StorageError):
        store.create_plan(title="x", slug="x", source_message_id=424242)  # no such message
    assert not store.slug_taken("x")
    assert store.list_plans() == ()


def test_newest_plan_by_phase(store: Store) -> None:
    first = store.create_plan(title="One", slug="one", phase="done")
    second = store.create_plan(title="Two", slug="two", phase="drafting", subtasks=[("a", "")])
    third = store.create_plan(title="Three", slug="three", phase="abandoned")
    assert store.newest_plan() == third
    assert store.newest_plan(excluding=["done", "abandoned"]) == second
    assert store.newest_plan(excluding=["done", "abandoned"]).subtasks[0].title == "a"  # type: ignore[union-attr]
    assert store.newest_plan(phases=["done"]) == first
    assert store.newest_plan(phases=["review"]) is None
