"""What each transition records, exactly: the plan's history and the question it waits on are read
back by the timeline, ``tunaflow status``, export and the decision cards, so a detail left out or
misnamed is a wrong sentence on screen."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.proposal_editing import EditedProposal, EditedSubtask
from tunaflow_tui.core.workflow import (
    Abandon,
    Accept,
    AcceptOverride,
    Actor,
    Approve,
    ContinueAfterEscalation,
    ContinueDev,
    DevStalled,
    EditProposal,
    EventSpec,
    Hold,
    IllegalTransition,
    ImplementationReported,
    MarkComplete,
    MarkerRejected,
    Outcome,
    PendingDecision,
    Phase,
    PlanEventType,
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


def test_a_revision_asked_at_the_gate_is_recorded_with_its_feedback_and_number() -> None:
    state = transition(PlanState(), ProposalReceived(1), actor=AGENT).state
    assert transition(state, RequestRevision("split the parser"), actor=USER) == Outcome(
        PlanState(phase=Phase.DRAFTING, revision=1),
        (EventSpec(PlanEventType.REVISION_REQUESTED, USER, {"feedback": "split the parser", "revision": 1}),))


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


def _reviewed(*seats: SeatResult) -> PlanState:
    state = transition(_developing(), ImplementationReported(), actor=AGENT).state
    state = transition(state, ReviewStarted(), actor=SYSTEM).state
    return transition(state, ReviewFinished(aggregate(list(seats))), actor=SYSTEM).state


PASS = SeatResult(seat="reviewer", engine="claude", verdict="pass")
TIMED_OUT = SeatResult(seat="verifier", engine="codex", verdict=None, error="timed out")
CRASHED = SeatResult(seat="critic", engine="gemini", verdict=None, error="crashed")


def test_a_finished_review_records_its_round_verdict_and_errored_seats() -> None:
    state = transition(_developing(), ImplementationReported(), actor=AGENT).state
    state = transition(state, ReviewStarted(), actor=SYSTEM).state
    partial = aggregate([PASS, TIMED_OUT])
    outcome = transition(state, ReviewFinished(partial), actor=SYSTEM)
    assert outcome.events == (
        EventSpec(PlanEventType.REVIEW_FINISHED, SYSTEM, {"round": 1, "verdict": "pass", "aggregate": partial.to_json()}),
        EventSpec(PlanEventType.REVIEW_ERROR, SYSTEM, {"round": 1, "seats": ["verifier"]}),
    )
    assert outcome.state.pending_decision is PendingDecision.REVIEW
    assert outcome.state.pending_detail == {"round": 1, "verdict": "pass", "aggregate": partial.to_json(),
                                            "retry_seats": ["verifier"]}

    none = aggregate([TIMED_OUT, CRASHED])
    outcome = transition(state, ReviewFinished(none), actor=SYSTEM)
    assert outcome.events == (
        EventSpec(PlanEventType.REVIEW_FINISHED, SYSTEM, {"round": 1, "verdict": None, "aggregate": none.to_json()}),
        EventSpec(PlanEventType.REVIEW_ERROR, SYSTEM, {"round": 1, "seats": ["verifier", "critic"]}),
    )
    assert outcome.state.pending_decision is PendingDecision.REVIEW_ERROR
    assert outcome.state.pending_detail == {"round": 1, "aggregate": none.to_json(),
                                            "retry_seats": ["verifier", "critic"]}


def test_retrying_seats_records_which_and_a_seat_that_did_not_error_is_refused_by_name() -> None:
    state = _reviewed(PASS, TIMED_OUT, CRASHED)
    with pytest.raises(IllegalTransition) as refused:
        transition(state, RetryReview(seats=("reviewer", "judge")), actor=USER)
    assert str(refused.value) == ("cannot retry seat reviewer, judge: only errored seats can be retried "
                                  "(verifier, critic)")
    assert refused.value.phase is Phase.REVIEW and refused.value.command == "retry review"
    assert refused.value.allowed == ("verifier", "critic")
    assert transition(state, RetryReview(seats=("critic",)), actor=USER) == Outcome(
        PlanState(phase=Phase.REVIEW, review_round=1),
        (EventSpec(PlanEventType.REVIEW_RETRY_REQUESTED, USER, {"round": 1, "seats": ["critic"]}),))


def test_a_refused_command_says_why_and_what_is_possible_instead() -> None:
    incomplete = _reviewed(PASS, TIMED_OUT, CRASHED)
    with pytest.raises(IllegalTransition) as plain:
        transition(incomplete, Accept(), actor=USER)
    assert str(plain.value) == (
        "cannot accept this plan: the review is incomplete (1 of 3 seats answered; verifier, critic errored): retry the "
        "seat, or accept with an incomplete review (accept partial), to be confirmed (allowed: hold, retry review, "
        "accept partial, rework, redesign, abandon)")
    assert plain.value.phase is Phase.REVIEW and plain.value.command == "accept"
    passed = _reviewed(PASS)
    with pytest.raises(IllegalTransition) as override:
        transition(passed, AcceptOverride(), actor=USER, plan_id=4)
    assert str(override.value).startswith(
        "cannot accept over the review of plan 4: the review is complete and passed: there is nothing to override "
        "(accept) (allowed: ")
    done = transition(passed, Accept(), actor=USER).state
    with pytest.raises(IllegalTransition) as finished:
        transition(done, Abandon(), actor=USER)
    assert str(finished.value) == "cannot abandon this plan: it is done (nothing more can happen to it)"
    held = transition(passed, Hold(), actor=USER).state
    with pytest.raises(IllegalTransition) as waiting:
        transition(held, ImplementationReported(), actor=AGENT, plan_id=4)
    assert str(waiting.value) == ("cannot complete the implementation of plan 4: it is in held (from review) "
                                  "(allowed: resume, accept, rework, redesign, abandon)")


FAIL = SeatResult(seat="reviewer", engine="claude", verdict="fail")


def test_the_review_loop_records_each_step_exactly() -> None:
    developing = _developing()
    reported = transition(developing, ImplementationReported(), actor=AGENT)
    assert reported == Outcome(PlanState(phase=Phase.REVIEW), (
        EventSpec(PlanEventType.IMPL_COMPLETE, AGENT, {"from": "dev"}),))
    stalled = transition(developing, DevStalled("quiet"), actor=SYSTEM).state
    assert transition(stalled, MarkComplete(), actor=USER).events == (
        EventSpec(PlanEventType.IMPL_COMPLETE, USER, {"from": "dev", "marked_by_user": True}),)
    started = transition(reported.state, ReviewStarted(), actor=SYSTEM)
    assert started == Outcome(PlanState(phase=Phase.REVIEW, review_round=1), (
        EventSpec(PlanEventType.REVIEW_STARTED, SYSTEM, {"round": 1}),))

    failed = _reviewed(FAIL)
    assert transition(failed, Rework("add the test"), actor=USER).events == (
        EventSpec(PlanEventType.REWORK_REQUESTED, USER, {"round": 1, "feedback": "add the test"}),)
    assert transition(failed, Redesign("start over"), actor=USER) == Outcome(
        PlanState(phase=Phase.DRAFTING, revision=1, review_round=1),
        (EventSpec(PlanEventType.REDESIGN_REQUESTED, USER, {"feedback": "start over", "revision": 1}),))
    assert transition(_reviewed(PASS), Accept(), actor=USER).events == (
        EventSpec(PlanEventType.ACCEPTED, USER, {"round": 1, "verdict": "pass"}),)


def test_a_doom_loop_answer_is_recorded_with_the_failures_it_answers() -> None:
    state = transition(_developing(), ImplementationReported(), actor=AGENT).state
    state = transition(state, ReviewStarted(), actor=SYSTEM).state
    escalated = transition(state, ReviewFinished(aggregate([FAIL])), actor=SYSTEM, doom_threshold=1).state
    assert escalated.phase is Phase.ESCALATED and escalated.failures_since_reset == 1
    assert transition(escalated, ContinueAfterEscalation("one more try"), actor=USER).events == (
        EventSpec(PlanEventType.DOOM_LOOP_ESCALATED, USER, {"answer": "continue", "failures": 1}),
        EventSpec(PlanEventType.REWORK_REQUESTED, USER, {"round": 1, "feedback": "one more try"}),
    )
    assert transition(escalated, Redesign("rethink"), actor=USER).events == (
        EventSpec(PlanEventType.DOOM_LOOP_ESCALATED, USER, {"answer": "redesign", "failures": 1}),
        EventSpec(PlanEventType.REDESIGN_REQUESTED, USER, {"feedback": "rethink", "revision": 1}),
    )


def test_a_proposal_and_its_approval_are_recorded_with_the_revision() -> None:
    proposed = transition(PlanState(), ProposalReceived(2), actor=AGENT)
    assert proposed == Outcome(
        PlanState(phase=Phase.APPROVAL, pending_decision=PendingDecision.APPROVAL,
                  pending_detail={"revision": 0, "subtask_count": 2}),
        (EventSpec(PlanEventType.PROPOSAL_RECEIVED, AGENT, {"revision": 0, "subtask_count": 2}),))
    assert transition(proposed.state, Approve(), actor=USER) == Outcome(PlanState(phase=Phase.DEV), (
        EventSpec(PlanEventType.APPROVED, USER, {"revision": 0}),
        EventSpec(PlanEventType.DEV_STARTED, SYSTEM, {"revision": 0})))


def test_failed_reviews_count_toward_the_doom_loop_and_its_question_says_how_far() -> None:
    state = transition(_developing(), ImplementationReported(), actor=AGENT).state
    state = transition(state, ReviewStarted(), actor=SYSTEM).state
    failed = aggregate([FAIL])
    once = transition(state, ReviewFinished(failed), actor=SYSTEM, doom_threshold=2)
    assert once.events == (
        EventSpec(PlanEventType.REVIEW_FINISHED, SYSTEM, {"round": 1, "verdict": "fail", "aggregate": failed.to_json()}),
        EventSpec(PlanEventType.REVIEW_FAILED, SYSTEM, {"round": 1, "failures_since_reset": 1}),
    )
    assert once.state.pending_detail == {"round": 1, "verdict": "fail", "aggregate": failed.to_json(),
                                         "retry_seats": []}
    state = transition(once.state, Rework(), actor=USER).state
    state = transition(state, ImplementationReported(), actor=AGENT).state
    state = transition(state, ReviewStarted(), actor=SYSTEM).state
    twice = transition(state, ReviewFinished(failed), actor=SYSTEM, doom_threshold=2)
    assert twice.state == PlanState(
        phase=Phase.ESCALATED, pending_decision=PendingDecision.DOOM_LOOP, review_round=2, failures_since_reset=2,
        pending_detail={"round": 2, "aggregate": failed.to_json(), "failures": 2, "threshold": 2})


def test_a_held_question_answered_directly_records_the_resume_first() -> None:
    held = transition(_reviewed(PASS), Hold(), actor=USER).state
    assert transition(held, Resume(), actor=USER).events == (EventSpec(PlanEventType.RESUMED, USER, {"to": "review"}),)
    assert transition(held, Accept(), actor=USER).events == (
        EventSpec(PlanEventType.RESUMED, USER, {"to": "review"}),
        EventSpec(PlanEventType.ACCEPTED, USER, {"round": 1, "verdict": "pass"}))
    abandoned = transition(held, Abandon(" later "), actor=USER)
    assert abandoned.events == (EventSpec(
        PlanEventType.ABANDONED, USER, {"reason": "later", "from": "review", "decision": "review"}),)
    assert abandoned.state == PlanState(phase=Phase.ABANDONED, review_round=1), "no longer held from anything"


def test_wrong_calls_and_wrong_actors_are_refused_in_words() -> None:
    state = transition(PlanState(), ProposalReceived(1), actor=AGENT).state
    with pytest.raises(ValueError, match=r"^doom_threshold must be at least 1$"):
        transition(state, Approve(), actor=USER, doom_threshold=0)
    with pytest.raises(TypeError, match=r"^not a workflow command: 'approve'$"):
        transition(state, "approve", actor=USER)  # type: ignore[arg-type]
    with pytest.raises(IllegalTransition) as agent:
        transition(state, Approve(), actor=AGENT, plan_id=3)
    assert str(agent.value) == ("cannot approve plan 3: only the user may, not the agent (allowed: approve, "
                                "edit, request revision, hold, abandon)")
    developing = _developing()
    with pytest.raises(IllegalTransition) as user:
        transition(developing, DevStalled("quiet"), actor=USER)
    assert str(user.value).startswith("cannot report a stalled developer on this plan: only an agent or the system may, not the user (")


def test_an_accept_while_the_review_errored_says_where_the_plan_stands() -> None:
    errored = _reviewed(TIMED_OUT)
    with pytest.raises(IllegalTransition) as refused:
        transition(errored, Accept(), actor=USER)
    assert str(refused.value).startswith("cannot accept this plan: it is in review, waiting for a decision (")
