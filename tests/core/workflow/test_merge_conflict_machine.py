"""A done plan whose merge conflicted: the one way out of done (the Developer resolves), or leaving it."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.workflow import (
    Abandon,
    ConflictUnresolved,
    Decision,
    Hold,
    IllegalTransition,
    ImplementationReported,
    LeaveConflict,
    MergeConflicted,
    PendingDecision,
    Phase,
    PlanState,
    ResolveConflict,
    Resume,
    transition,
    ways_on,
)

DONE = PlanState(phase=Phase.DONE, revision=1, review_round=2)


def _conflicted() -> PlanState:
    return transition(DONE, MergeConflicted("main", ("calc.py", "README.md")), actor="user").state


def test_a_conflicted_merge_stops_the_done_plan_at_a_question_naming_the_files() -> None:
    outcome = transition(DONE, MergeConflicted("main", ("calc.py",)), actor="user")
    assert (outcome.state.phase, outcome.state.pending_decision) == (Phase.DONE, PendingDecision.MERGE_CONFLICT)
    assert dict(outcome.state.pending_detail) == {"base": "main", "files": ["calc.py"]}
    [event] = outcome.events
    assert (event.type, event.actor) == ("merge_conflict", "user")
    assert event.detail["files"] == ["calc.py"]
    way = ways_on(outcome.state)
    assert way.decisions == (Decision.RESOLVE_CONFLICT, Decision.LEAVE_CONFLICT) and way.asks_the_user
    assert "calc.py" in way.summary and "main" in way.summary


def test_resolving_goes_back_to_rework_and_the_plan_is_reviewed_again() -> None:
    outcome = transition(_conflicted(), ResolveConflict("keep both"), actor="user")
    state = outcome.state
    assert (state.phase, state.pending_decision, state.review_round) == (Phase.REWORK, None, 2)
    [event] = outcome.events
    assert event.type == "conflict_resolution_requested"
    assert event.detail == {"from": "done", "files": ["calc.py", "README.md"], "feedback": "keep both"}
    assert transition(state, ImplementationReported(), actor="agent").state.phase is Phase.REVIEW


def test_a_resolve_that_left_conflicts_asks_again_and_can_be_left() -> None:
    rework = transition(_conflicted(), ResolveConflict(), actor="user").state
    stuck = transition(rework, ConflictUnresolved(("calc.py",), "conflict markers are left"), actor="system").state
    assert (stuck.phase, stuck.pending_decision) == (Phase.REWORK, PendingDecision.CONFLICT_UNRESOLVED)
    way = ways_on(stuck)
    assert way.decisions[:2] == (Decision.RESOLVE_CONFLICT, Decision.LEAVE_CONFLICT)
    assert "calc.py" in way.summary and "conflict markers are left" in way.summary
    again = transition(stuck, ResolveConflict(), actor="user").state
    assert (again.phase, again.pending_decision) == (Phase.REWORK, None)
    held = transition(stuck, Hold(), actor="user").state
    left = transition(held, LeaveConflict(), actor="user")
    assert (left.state.phase, left.state.pending_decision) == (Phase.DONE, None)
    assert [e.type for e in left.events] == ["resumed", "conflict_left"]
    assert transition(held, Resume(), actor="user").state == stuck


def test_leaving_the_conflict_keeps_the_plan_done_and_unmerged() -> None:
    outcome = transition(_conflicted(), LeaveConflict(), actor="user")
    assert outcome.state == DONE
    assert [e.type for e in outcome.events] == ["conflict_left"]


@pytest.mark.parametrize("command", [ResolveConflict(), LeaveConflict()])
def test_only_the_user_answers_a_conflict(command: ResolveConflict | LeaveConflict) -> None:
    for actor in ("agent", "system"):
        with pytest.raises(IllegalTransition, match="only the user"):
            transition(_conflicted(), command, actor=actor)


def test_nothing_else_moves_a_done_plan() -> None:
    for command in (ResolveConflict(), LeaveConflict(), ConflictUnresolved(("a",)), Abandon(), Hold()):
        with pytest.raises(IllegalTransition):
            transition(DONE, command, actor="user" if command.actors == {"user"} else "system")
    with pytest.raises(IllegalTransition):  # a conflict is answered, not abandoned: the work is done
        transition(_conflicted(), Abandon(), actor="user")
    with pytest.raises(IllegalTransition):  # the merge reports a conflict once; it is answered first
        transition(_conflicted(), MergeConflicted("main", ("x",)), actor="user")
    rework = PlanState(phase=Phase.REWORK)
    with pytest.raises(IllegalTransition):  # a Developer's usual rework never becomes a merge conflict
        transition(rework, LeaveConflict(), actor="user")
