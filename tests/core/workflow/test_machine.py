"""The workflow state machine walks a plan through the human-gated process of spec §3."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.workflow import (
    Abandon,
    Accept,
    AcceptOverride,
    Approve,
    Command,
    ContinueAfterEscalation,
    ContinueDev,
    DevStalled,
    Hold,
    IllegalTransition,
    ImplementationReported,
    MarkComplete,
    MarkerRejected,
    Outcome,
    PendingDecision,
    Phase,
    PlanState,
    ProposalReceived,
    Redesign,
    RequestRevision,
    Resume,
    RetryReview,
    RetrySetup,
    ReviewFinished,
    ReviewStarted,
    Rework,
    SeatResult,
    SetupFailed,
    SkipSetup,
    SubtaskReported,
    aggregate,
    failures_since_reset,
    transition,
)
from tunaflow_tui.core.workflow.machine import EventSpec


def run(state: PlanState, *steps: tuple[Command, str], threshold: int = 3) -> tuple[PlanState, list[EventSpec]]:
    events: list[EventSpec] = []
    for command, actor in steps:
        outcome: Outcome = transition(state, command, actor=actor, doom_threshold=threshold)
        assert outcome.events, f"{command} produced no event"
        events.extend(outcome.events)
        state = outcome.state
    return state, events


def finished(*verdicts: str | None) -> ReviewFinished:
    return ReviewFinished(aggregate([
        SeatResult(seat=f"seat{i}", engine="demo", verdict=v,  # type: ignore[arg-type]
                   error=None if v else "timed out", findings=(f"finding {i}",))
        for i, v in enumerate(verdicts)
    ]))


def in_review() -> PlanState:
    state, _ = run(PlanState(), (ProposalReceived(2), "agent"), (Approve(), "user"), (ImplementationReported(), "agent"))
    return state


def review_round(state: PlanState, *verdicts: str | None, threshold: int = 3) -> tuple[PlanState, list[EventSpec]]:
    return run(state, (ReviewStarted(), "system"), (finished(*verdicts), "system"), threshold=threshold)


def types(events: list[EventSpec]) -> list[str]:
    return [e.type for e in events]


def test_happy_path_proposal_to_done() -> None:
    state, events = run(PlanState(), (ProposalReceived(3), "agent"))
    assert state.phase is Phase.APPROVAL and state.pending_decision is PendingDecision.APPROVAL
    state, more = run(state, (Approve(), "user"), (SubtaskReported(1), "agent"), (ImplementationReported(), "agent"))
    assert state.phase is Phase.REVIEW and state.pending_decision is None
    state, review = review_round(state, "pass", "pass")
    assert state.review_round == 1
    assert state.pending_decision is PendingDecision.REVIEW and state.pending_detail["verdict"] == "pass"
    state, last = run(state, (Accept(), "user"))
    assert state.phase is Phase.DONE and state.pending_decision is None
    assert types(events + more + review + last) == [
        "proposal_received", "approved", "dev_started", "subtask_done", "impl_complete",
        "review_started", "review_finished", "accepted",
    ]


def test_illegal_command_names_plan_phase_and_allowed_actions_and_changes_nothing() -> None:
    state, _ = review_round(in_review(), "fail")
    with pytest.raises(IllegalTransition) as err:
        transition(state, Approve(), actor="user", plan_id=3)
    message = str(err.value)
    assert message.startswith("cannot approve plan 3: it is in review")
    assert "accept override, rework, redesign" in message
    assert err.value.allowed == ("hold", "accept override", "rework", "redesign", "abandon")
    assert state.phase is Phase.REVIEW and state.pending_decision is PendingDecision.REVIEW


@pytest.mark.parametrize("actor", ["agent", "system"])
@pytest.mark.parametrize("command", [Approve(), RequestRevision("x"), Hold(), Abandon()])
def test_gate_decisions_only_from_the_user(command: Command, actor: str) -> None:
    state, _ = run(PlanState(), (ProposalReceived(), "agent"))
    with pytest.raises(IllegalTransition, match="only the user may"):
        transition(state, command, actor=actor)


def test_review_decisions_only_from_the_user() -> None:
    state, _ = review_round(in_review(), "conditional")
    for command in (AcceptOverride(), Rework(), Redesign()):
        with pytest.raises(IllegalTransition, match="only the user may"):
            transition(state, command, actor="agent")


def test_user_cannot_fake_agent_markers() -> None:
    with pytest.raises(IllegalTransition, match="only an agent or the system may"):
        transition(PlanState(), ProposalReceived(), actor="user")
    with pytest.raises(IllegalTransition):
        transition(PlanState(phase=Phase.DEV), ImplementationReported(), actor="user")


def test_unknown_actor_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown actor"):
        transition(PlanState(), ProposalReceived(), actor="architect")


def test_revision_goes_back_to_drafting_and_reproposal_returns_to_approval() -> None:
    state, events = run(
        PlanState(), (ProposalReceived(), "agent"), (RequestRevision("split task 2"), "user")
    )
    assert state.phase is Phase.DRAFTING and state.revision == 1 and state.pending_decision is None
    assert events[-1].detail["feedback"] == "split task 2"
    state, _ = run(state, (ProposalReceived(4), "agent"))
    assert state.phase is Phase.APPROVAL and state.pending_detail == {"revision": 1, "subtask_count": 4}


def test_hold_remembers_phase_and_decision_and_resume_restores_them() -> None:
    state, _ = review_round(in_review(), "conditional")
    held, events = run(state, (Hold(), "user"))
    assert held.phase is Phase.HELD and held.held_from is Phase.REVIEW
    assert events[0].detail == {"from": "review", "decision": "review"}
    with pytest.raises(IllegalTransition, match="it is in held"):
        transition(held, ImplementationReported(), actor="agent")
    back, events = run(held, (Resume(), "user"))
    assert back.phase is Phase.REVIEW and back.held_from is None
    assert back.pending_decision is PendingDecision.REVIEW and back.pending_detail == state.pending_detail
    assert types(events) == ["resumed"]


def test_hold_needs_a_pending_decision() -> None:
    with pytest.raises(IllegalTransition):
        transition(in_review(), Hold(), actor="user")


def test_rework_then_review_again_increments_round() -> None:
    state, _ = review_round(in_review(), "fail")
    state, events = run(state, (Rework("fix the tests"), "user"))
    assert state.phase is Phase.REWORK and types(events) == ["rework_requested"]
    state, _ = run(state, (ImplementationReported(), "agent"))
    state, _ = review_round(state, "pass")
    assert state.review_round == 2 and state.pending_detail["verdict"] == "pass"


def test_failed_review_writes_review_failed_and_counts() -> None:
    state, events = review_round(in_review(), "fail", "pass")
    assert types(events) == ["review_started", "review_finished", "review_failed"]
    assert state.failures_since_reset == 1 and state.pending_decision is PendingDecision.REVIEW


def test_doom_loop_escalates_at_threshold_and_either_answer_resets() -> None:
    state = in_review()
    all_events: list[EventSpec] = []
    for _ in range(2):
        state, ev = review_round(state, "fail")
        all_events += ev
        state, ev = run(state, (Rework(), "user"), (ImplementationReported(), "agent"))
        all_events += ev
    state, ev = review_round(state, "fail")
    all_events += ev
    assert state.phase is Phase.ESCALATED and state.pending_decision is PendingDecision.DOOM_LOOP
    assert state.pending_detail["failures"] == 3
    assert "doom_loop_escalated" not in types(all_events)
    with pytest.raises(IllegalTransition):
        transition(state, Accept(), actor="user")

    cont, ev = run(state, (ContinueAfterEscalation(), "user"))
    assert cont.phase is Phase.REWORK and cont.failures_since_reset == 0
    assert types(ev) == ["doom_loop_escalated", "rework_requested"]
    assert ev[0].detail["answer"] == "continue"
    assert failures_since_reset(all_events + ev) == 0

    redo, ev = run(state, (Redesign("simpler design"), "user"))
    assert redo.phase is Phase.DRAFTING and redo.revision == state.revision + 1
    assert types(ev) == ["doom_loop_escalated", "redesign_requested"]
    assert ev[0].detail["answer"] == "redesign"


def test_configurable_threshold() -> None:
    state, _ = review_round(in_review(), "fail", threshold=1)
    assert state.phase is Phase.ESCALATED


def test_review_errors_never_count_and_all_errored_asks_to_retry() -> None:
    state, events = review_round(in_review(), None, None)
    assert types(events) == ["review_started", "review_finished", "review_error"]
    assert state.pending_decision is PendingDecision.REVIEW_ERROR and state.failures_since_reset == 0
    assert state.pending_detail["retry_seats"] == ["seat0", "seat1"]
    with pytest.raises(IllegalTransition):
        transition(state, Accept(), actor="user")
    state, events = run(state, (RetryReview(("seat1",)), "user"))
    assert state.pending_decision is None and events[0].detail["seats"] == ["seat1"]
    assert state.review_round == 1
    state, _ = run(state, (finished("pass"), "system"))
    assert state.pending_detail["verdict"] == "pass"


def test_partial_error_offers_retry_unless_already_failed() -> None:
    state, _ = review_round(in_review(), "pass", None)
    assert state.pending_decision is PendingDecision.REVIEW and state.pending_detail["retry_seats"] == ["seat1"]
    with pytest.raises(IllegalTransition, match="only errored seats"):
        transition(state, RetryReview(("seat0",)), actor="user")
    failed, _ = review_round(in_review(), "fail", None)
    assert failed.pending_detail["retry_seats"] == []
    with pytest.raises(IllegalTransition):
        transition(failed, RetryReview(), actor="user")


def test_stalled_developer_continue_mark_complete_or_abandon() -> None:
    dev, _ = run(PlanState(), (ProposalReceived(), "agent"), (Approve(), "user"))
    stalled, ev = run(dev, (DevStalled("exited without impl-complete"), "system"))
    assert stalled.pending_decision is PendingDecision.DEV_STALLED and types(ev) == ["dev_stalled"]
    with pytest.raises(IllegalTransition):
        transition(stalled, ImplementationReported(), actor="agent")
    resumed, _ = run(stalled, (ContinueDev(), "user"))
    assert resumed.phase is Phase.DEV and resumed.pending_decision is None
    marked, ev = run(stalled, (MarkComplete(), "user"))
    assert marked.phase is Phase.REVIEW and ev[0].type == "impl_complete" and ev[0].actor == "user"
    gone, ev = run(stalled, (Abandon("not worth it"), "user"))
    assert gone.phase is Phase.ABANDONED and ev[0].detail["from"] == "dev"


def test_failed_worktree_setup_waits_for_retry_or_skip_from_the_user() -> None:
    dev, _ = run(PlanState(), (ProposalReceived(), "agent"), (Approve(), "user"))
    with pytest.raises(IllegalTransition, match="only an agent or the system may"):
        transition(dev, SetupFailed("exit 3", "npm ci"), actor="user")
    failed, ev = run(dev, (SetupFailed("exited with code 3", "npm ci"), "system"))
    assert failed.phase is Phase.DEV and failed.pending_decision is PendingDecision.SETUP_FAILED
    assert failed.pending_detail == {"reason": "exited with code 3", "command": "npm ci"}
    assert types(ev) == ["setup_failed"]
    for command in (ImplementationReported(), DevStalled("x"), SetupFailed("again")):
        with pytest.raises(IllegalTransition):
            transition(failed, command, actor="system")
    for command in (RetrySetup(), SkipSetup()):
        with pytest.raises(IllegalTransition, match="only the user may"):
            transition(failed, command, actor="agent")
    retried, ev = run(failed, (RetrySetup(), "user"))
    assert retried.phase is Phase.DEV and retried.pending_decision is None and types(ev) == ["setup_retry_requested"]
    skipped, ev = run(failed, (SkipSetup(), "user"))
    assert skipped.pending_decision is None and types(ev) == ["setup_skipped"]
    assert ev[0].detail["reason"] == "exited with code 3"
    held, _ = run(failed, (Hold(), "user"), (Resume(), "user"))
    assert held.pending_decision is PendingDecision.SETUP_FAILED, "hold and resume keep the question"
    with pytest.raises(IllegalTransition):
        transition(in_review(), RetrySetup(), actor="user")


@pytest.mark.parametrize("terminal", [Phase.DONE, Phase.ABANDONED])
def test_done_and_abandoned_are_terminal(terminal: Phase) -> None:
    state = PlanState(phase=terminal)
    for command in (Abandon(), ProposalReceived(), Approve(), Resume(), ReviewStarted()):
        with pytest.raises(IllegalTransition, match="nothing more can happen"):
            transition(state, command, actor="user" if command.actors == {"user"} else "system")


def test_rejected_marker_is_recorded_in_any_phase_without_changing_state() -> None:
    for phase in Phase:
        state = PlanState(phase=phase)
        outcome = transition(state, MarkerRejected("review-verdict", "developer", "verdict: pass"), actor="system")
        assert outcome.state == state
        assert [e.type for e in outcome.events] == ["marker_rejected"]
        assert outcome.events[0].detail["role"] == "developer"


def test_revision_resets_failure_count() -> None:
    state, events = review_round(in_review(), "fail")
    state, ev = run(state, (Redesign(), "user"))
    assert state.failures_since_reset == 0 and failures_since_reset(events + ev) == 0
    assert failures_since_reset(events) == 1
