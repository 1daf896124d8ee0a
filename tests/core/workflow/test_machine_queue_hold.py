"""The machine's records of a plan held while it waited in the queue, and of a merge conflict's way out.

Pure state-machine tests: a state, a command, and the state and events the user then sees in the plan's
history (who did it, what it names).
"""

from __future__ import annotations

from dataclasses import dataclass

from tunaflow_tui.core.workflow import (
    Actor,
    ConflictUnresolved,
    Hold,
    LeaveConflict,
    MergeConflicted,
    PendingDecision,
    Phase,
    PlanEventType,
    PlanState,
    ResolveConflict,
    Resume,
    transition,
)
from tunaflow_tui.core.workflow.machine import EventSpec, waits_in_queue

QUEUED = PlanState(phase=Phase.DEV, revision=1, queued=True)
"""Approved, waiting in the queue for a slot: nothing of its step ran yet, no question waits."""


@dataclass(frozen=True)
class _Event:
    type: str


def _events(*types: PlanEventType) -> list[_Event]:
    return [_Event(str(kind)) for kind in types]


def test_holding_a_queued_plan_records_the_hold_and_takes_it_out_of_the_queue() -> None:
    outcome = transition(QUEUED, Hold(), actor="user")

    assert outcome.state == PlanState(phase=Phase.HELD, held_from=Phase.DEV, revision=1, queued=False)
    assert outcome.events == (
        EventSpec(PlanEventType.HELD, Actor.USER, {"from": "dev", "decision": None, "queued": True}),
        EventSpec(PlanEventType.QUEUE_LEFT, Actor.SYSTEM, {"why": "withdrawn"}),
    )


def test_a_queued_plan_resumed_after_its_hold_is_back_in_dev_and_out_of_the_queue_until_queued_again() -> None:
    held = transition(QUEUED, Hold(), actor="user").state
    outcome = transition(held, Resume(), actor="user")

    assert outcome.state == PlanState(phase=Phase.DEV, revision=1, queued=False)
    assert outcome.events == (EventSpec(PlanEventType.RESUMED, Actor.USER, {"to": "dev"}),)


def test_holding_a_question_that_is_not_queued_records_only_the_hold() -> None:
    at_gate = PlanState(phase=Phase.APPROVAL, pending_decision=PendingDecision.APPROVAL)
    outcome = transition(at_gate, Hold(), actor="user")

    assert outcome.events == (
        EventSpec(PlanEventType.HELD, Actor.USER, {"from": "approval", "decision": "approval"}),
    )


def test_a_plan_waits_in_the_queue_from_plan_queued_until_queue_left() -> None:
    queued, left = PlanEventType.PLAN_QUEUED, PlanEventType.QUEUE_LEFT
    held = PlanEventType.HELD
    # the function's answer is stored as PlanState.queued, a bool: exactly True or False
    assert waits_in_queue([]) is False
    assert waits_in_queue(_events(PlanEventType.APPROVED, PlanEventType.DEV_STARTED)) is False
    assert waits_in_queue(_events(queued)) is True
    assert waits_in_queue(_events(queued, held)) is True, "only queue_left takes it out"
    assert waits_in_queue(_events(queued, left)) is False
    assert waits_in_queue(_events(queued, left, queued)) is True


def _conflicted() -> PlanState:
    return transition(PlanState(phase=Phase.DONE, revision=1, review_round=2),
                      MergeConflicted("main", ("calc.py", "README.md")), actor="user").state


def test_a_merge_conflict_is_recorded_with_its_base_and_files() -> None:
    outcome = transition(PlanState(phase=Phase.DONE, revision=1, review_round=2),
                         MergeConflicted("main", ("calc.py", "README.md")), actor="user")

    assert outcome.events == (
        EventSpec(PlanEventType.MERGE_CONFLICT, Actor.USER,
                  {"kind": "conflict", "base": "main", "files": ["calc.py", "README.md"]}),
    )


def test_leaving_a_merge_conflict_records_who_left_it_from_where_and_the_files() -> None:
    outcome = transition(_conflicted(), LeaveConflict(), actor="user")

    assert outcome.state.phase is Phase.DONE and outcome.state.pending_decision is None
    assert outcome.events == (
        EventSpec(PlanEventType.CONFLICT_LEFT, Actor.USER, {"from": "done", "files": ["calc.py", "README.md"]}),
    )


def test_asking_the_developer_to_resolve_is_recorded_as_the_users_decision() -> None:
    outcome = transition(_conflicted(), ResolveConflict("keep both"), actor="user")

    assert outcome.events == (
        EventSpec(PlanEventType.CONFLICT_RESOLUTION_REQUESTED, Actor.USER,
                  {"from": "done", "files": ["calc.py", "README.md"], "feedback": "keep both"}),
    )


def test_an_unresolved_conflict_names_its_files_and_reason_and_leaving_it_records_them() -> None:
    rework = transition(_conflicted(), ResolveConflict(), actor="user").state
    unresolved = transition(rework, ConflictUnresolved(("calc.py",), "markers left in calc.py"), actor="system")

    assert unresolved.events == (
        EventSpec(PlanEventType.CONFLICT_UNRESOLVED, Actor.SYSTEM,
                  {"files": ["calc.py"], "reason": "markers left in calc.py"}),
    )
    left = transition(unresolved.state, LeaveConflict(), actor="user")
    assert left.state.phase is Phase.DONE
    assert left.events == (EventSpec(PlanEventType.CONFLICT_LEFT, Actor.USER, {"from": "rework", "files": ["calc.py"]}),)
