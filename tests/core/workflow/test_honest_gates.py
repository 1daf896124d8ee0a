"""Honest gates in the state machine: an accept is only a plain accept for a complete pass; overriding a
failed review, accepting an incomplete one and abandoning are distinct, recorded acts; a held question
can be answered; the proposal can be edited at the approval gate."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.proposal_editing import EditedProposal, EditedSubtask
from tunaflow_tui.core.workflow import (
    Abandon,
    Accept,
    AcceptOverride,
    AcceptPartial,
    Approve,
    Command,
    DevStalled,
    EditProposal,
    Hold,
    IllegalTransition,
    ImplementationReported,
    PendingDecision,
    Phase,
    PlanState,
    ProposalReceived,
    ReviewFinished,
    ReviewStarted,
    Rework,
    SeatResult,
    aggregate,
    transition,
)
from tunaflow_tui.core.workflow.machine import EventSpec


def run(state: PlanState, *steps: tuple[Command, str]) -> tuple[PlanState, list[EventSpec]]:
    events: list[EventSpec] = []
    for command, actor in steps:
        outcome = transition(state, command, actor=actor)
        events.extend(outcome.events)
        state = outcome.state
    return state, events


def reviewed(*verdicts: str | None) -> PlanState:
    """A plan whose review round came back with one seat per verdict (None: the seat errored)."""
    seats = [SeatResult(seat=name, engine="demo", verdict=v, error=None if v else "401 Unauthorized")  # type: ignore[arg-type]
             for name, v in zip(("reviewer", "verifier"), verdicts, strict=False)]
    state, _ = run(PlanState(), (ProposalReceived(2), "agent"), (Approve(), "user"), (ImplementationReported(), "agent"),
                   (ReviewStarted(), "system"), (ReviewFinished(aggregate(seats)), "system"))
    return state


@pytest.mark.parametrize(("verdicts", "why"), [
    (("fail", "pass"), "verdict is fail: accepting over it is its own decision (accept override)"),
    (("conditional", "pass"), "verdict is conditional"),
    (("pass", None), "the review is incomplete (1 of 2 seats answered; verifier errored): retry the seat, "
                     "or accept with an incomplete review (accept partial)"),
])
def test_a_plain_accept_of_anything_but_a_complete_pass_is_refused(verdicts: tuple[str | None, ...], why: str) -> None:
    state = reviewed(*verdicts)
    with pytest.raises(IllegalTransition) as refused:
        transition(state, Accept(), actor="user", plan_id=4)
    assert str(refused.value).startswith("cannot accept plan 4: ") and why in str(refused.value)
    assert "accept" not in refused.value.allowed


def test_a_complete_pass_is_accepted_plainly() -> None:
    state, events = run(reviewed("pass", "pass"), (Accept(), "user"))
    assert state.phase is Phase.DONE
    assert [(e.type, e.detail["verdict"]) for e in events] == [("accepted", "pass")]


@pytest.mark.parametrize("verdicts", [("fail", "pass"), ("conditional", "pass"), ("fail", None)])
def test_accepting_over_a_failed_review_is_its_own_recorded_decision(verdicts: tuple[str | None, ...]) -> None:
    state, events = run(reviewed(*verdicts), (AcceptOverride(reason="the finding is a false positive"), "user"))
    assert state.phase is Phase.DONE
    [event] = events
    assert event.type == "accepted_over_failed_review" and event.actor == "user"
    assert event.detail["verdict"] == verdicts[0] and event.detail["reason"] == "the finding is a false positive"


def test_accepting_an_incomplete_review_records_how_many_seats_answered() -> None:
    state, events = run(reviewed("pass", None), (AcceptPartial(), "user"))
    assert state.phase is Phase.DONE
    [event] = events
    assert event.type == "accepted_partial_review"
    assert (event.detail["answered"], event.detail["seats"], event.detail["errored"]) == (1, 2, ["verifier"])


@pytest.mark.parametrize(("verdicts", "command"), [
    (("pass", "pass"), AcceptPartial()),
    (("pass", "pass"), AcceptOverride()),
    (("pass", None), AcceptOverride()),
    (("fail", "pass"), AcceptPartial()),
])
def test_each_accept_fits_only_its_own_review(verdicts: tuple[str | None, ...], command: Command) -> None:
    state = reviewed(*verdicts)
    with pytest.raises(IllegalTransition):
        transition(state, command, actor="user")


def test_only_the_user_overrides_a_review() -> None:
    for command in (AcceptOverride(), AcceptPartial()):
        state = reviewed("fail", "pass") if isinstance(command, AcceptOverride) else reviewed("pass", None)
        with pytest.raises(IllegalTransition, match="only the user may"):
            transition(state, command, actor="agent")


def test_a_held_question_is_answered_in_one_step_and_the_record_says_it_was_resumed() -> None:
    proposal, _ = run(PlanState(), (ProposalReceived(2), "agent"), (Hold(), "user"))
    assert proposal.phase is Phase.HELD
    state, events = run(proposal, (Approve(), "user"))
    assert state.phase is Phase.DEV and state.held_from is None
    assert [e.type for e in events] == ["resumed", "approved", "dev_started"]
    failed, _ = run(reviewed("fail", "pass"), (Hold(), "user"))
    with pytest.raises(IllegalTransition, match="verdict is fail"):
        transition(failed, Accept(), actor="user")
    state, events = run(failed, (Rework("add the test"), "user"))
    assert state.phase is Phase.REWORK and [e.type for e in events] == ["resumed", "rework_requested"]


def test_abandon_records_the_reason_and_what_was_waiting() -> None:
    stalled, _ = run(PlanState(), (ProposalReceived(1), "agent"), (Approve(), "user"),
                     (DevStalled("stopped early"), "system"))
    state, [event] = run(stalled, (Abandon("  wrong approach  "), "user"))
    assert state.phase is Phase.ABANDONED
    assert event.detail == {"reason": "wrong approach", "from": "dev", "decision": "dev_stalled"}


BEFORE = EditedProposal("Add OAuth", (EditedSubtask("Client"), EditedSubtask("Callback"), EditedSubtask("Docs")))
AFTER = EditedProposal("Add OAuth login", (EditedSubtask("Callback"), EditedSubtask("Client id from env"),
                                           EditedSubtask("Tests")))


def test_the_proposal_is_edited_at_the_approval_gate_and_the_edit_is_recorded() -> None:
    state, _ = run(PlanState(), (ProposalReceived(3), "agent"))
    edited, [event] = run(state, (EditProposal(before=BEFORE, after=AFTER), "user"))
    assert edited.phase is Phase.APPROVAL and edited.pending_decision is PendingDecision.APPROVAL
    assert edited.pending_detail["subtask_count"] == 3
    assert event.type == "plan_edited" and event.actor == "user"
    assert event.detail["before"] == {"title": "Add OAuth", "subtasks": ["Client", "Callback", "Docs"]}
    assert event.detail["after"]["subtasks"] == ["Callback", "Client id from env", "Tests"]
    assert "title: “Add OAuth” → “Add OAuth login”" in event.detail["changes"]


def test_a_held_proposal_can_be_edited_and_stays_held() -> None:
    held, _ = run(PlanState(), (ProposalReceived(3), "agent"), (Hold(), "user"))
    state, events = run(held, (EditProposal(before=BEFORE, after=AFTER), "user"))
    assert state.phase is Phase.HELD and [e.type for e in events] == ["plan_edited"]


def test_an_edit_outside_the_approval_gate_or_without_a_change_is_refused() -> None:
    with pytest.raises(IllegalTransition, match="cannot edit the proposal of"):
        transition(reviewed("pass", "pass"), EditProposal(before=BEFORE, after=AFTER), actor="user")
    state, _ = run(PlanState(), (ProposalReceived(3), "agent"))
    with pytest.raises(IllegalTransition, match="changes nothing"):
        transition(state, EditProposal(before=BEFORE, after=BEFORE), actor="user")
    with pytest.raises(IllegalTransition, match="only the user may"):
        transition(state, EditProposal(before=BEFORE, after=AFTER), actor="agent")
