"""What each transition records, exactly: the plan's history and the question it waits on are read
back by the timeline, ``tunaflow status``, export and the decision cards, so a detail left out or
misnamed is a wrong sentence on screen."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.proposal_editing import EditedProposal, EditedSubtask
from tunaflow_tui.core.workflow import (
    Actor,
    Approve,
    ContinueDev,
    DevStalled,
    EditProposal,
    EventSpec,
    IllegalTransition,
    MarkerRejected,
    Outcome,
    PendingDecision,
    Phase,
    PlanEventType,
    PlanState,
    ProposalReceived,
    RetrySetup,
    SetupFailed,
    SkipSetup,
    SubtaskReported,
    transition,
)
from tunaflow_tui.core.workflow.machine import allowed_names

SYSTEM, AGENT, USER = Actor.SYSTEM, Actor.AGENT, Actor.USER


def _developing() -> PlanState:
    state = transition(PlanState(), ProposalReceived(2), actor=AGENT).state
    return transition(state, Approve(), actor=USER).state


def test_an_edit_that_changes_nothing_is_refused_with_where_the_plan_stands() -> None:
    state = transition(PlanState(), ProposalReceived(1), actor=AGENT).state
    proposal = EditedProposal("Add OAuth", (EditedSubtask("Client"),))
    with pytest.raises(IllegalTransition) as refused:
        transition(state, EditProposal(before=proposal, after=proposal), actor=USER)
    assert str(refused.value) == "cannot edit the proposal: the edit changes nothing"
    assert refused.value.phase is Phase.APPROVAL and refused.value.command == "edit"
    assert refused.value.allowed == allowed_names(state) and "approve" in refused.value.allowed


def test_a_reported_subtask_is_recorded_by_its_number_and_changes_nothing_else() -> None:
    state = _developing()
    assert transition(state, SubtaskReported(2), actor=AGENT) == Outcome(
        state, (EventSpec(PlanEventType.SUBTASK_DONE, AGENT, {"index": 2}),))


def test_a_stalled_developer_waits_with_its_reason_and_continuing_clears_it() -> None:
    state = _developing()
    stalled = transition(state, DevStalled("no output for 10 minutes"), actor=SYSTEM)
    assert stalled.state == PlanState(phase=Phase.DEV, pending_decision=PendingDecision.DEV_STALLED,
                                      pending_detail={"reason": "no output for 10 minutes"})
    assert stalled.events == (EventSpec(PlanEventType.DEV_STALLED, SYSTEM, {"reason": "no output for 10 minutes"}),)
    assert transition(stalled.state, ContinueDev(), actor=USER) == Outcome(
        PlanState(phase=Phase.DEV), (EventSpec(PlanEventType.DEV_CONTINUED, USER, {}),))


def test_a_failed_setup_waits_with_its_reason_and_command_and_each_answer_names_it() -> None:
    state = _developing()
    failed = transition(state, SetupFailed(reason="exit 1", command="npm ci"), actor=SYSTEM)
    detail = {"reason": "exit 1", "command": "npm ci"}
    assert failed.state == PlanState(phase=Phase.DEV, pending_decision=PendingDecision.SETUP_FAILED,
                                     pending_detail=detail)
    assert failed.events == (EventSpec(PlanEventType.SETUP_FAILED, SYSTEM, detail),)
    assert transition(failed.state, RetrySetup(), actor=USER) == Outcome(
        PlanState(phase=Phase.DEV), (EventSpec(PlanEventType.SETUP_RETRY_REQUESTED, USER, {"reason": "exit 1"}),))
    assert transition(failed.state, SkipSetup(), actor=USER) == Outcome(
        PlanState(phase=Phase.DEV), (EventSpec(PlanEventType.SETUP_SKIPPED, USER, {"reason": "exit 1"}),))


def test_a_rejected_marker_is_recorded_whole_and_changes_nothing() -> None:
    state = _developing()
    rejected = MarkerRejected(kind="plan-proposal", role="developer", excerpt="## Title", reason="not the Architect")
    assert transition(state, rejected, actor=SYSTEM) == Outcome(state, (EventSpec(
        PlanEventType.MARKER_REJECTED, SYSTEM,
        {"kind": "plan-proposal", "role": "developer", "excerpt": "## Title", "reason": "not the Architect"}),))
