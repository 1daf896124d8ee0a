"""Random command sequences never corrupt a plan's state."""

from __future__ import annotations

import os
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tunaflow_tui.core.proposal_editing import EditedProposal
from tunaflow_tui.core.workflow import (
    Abandon,
    Accept,
    AcceptOverride,
    AcceptPartial,
    Actor,
    Approve,
    Command,
    ConflictUnresolved,
    ContinueAfterEscalation,
    ContinueDev,
    DevStalled,
    EditProposal,
    Hold,
    IllegalTransition,
    ImplementationReported,
    LeaveConflict,
    MarkComplete,
    MarkerRejected,
    MergeConflicted,
    PendingDecision,
    Phase,
    PlanState,
    ProposalReceived,
    Redesign,
    RequestRevision,
    ResolveConflict,
    Resume,
    RetryReview,
    RetrySetup,
    ReviewFinished,
    ReviewStanding,
    ReviewStarted,
    Rework,
    SeatResult,
    SetupFailed,
    SkipSetup,
    SubtaskReported,
    aggregate,
    allowed_commands,
    failures_since_reset,
    transition,
    unheld,
)
from tunaflow_tui.core.workflow.machine import EventSpec

seat_results = st.builds(
    SeatResult,
    seat=st.sampled_from(["reviewer", "verifier"]),
    engine=st.just("demo"),
    verdict=st.sampled_from(["pass", "fail", "fail", "conditional", None]),
    error=st.sampled_from([None, None, None, "timed out"]),
)
EXAMPLES: dict[type[Command], st.SearchStrategy[Command]] = {
    ProposalReceived: st.builds(ProposalReceived, subtask_count=st.integers(0, 5)),
    Approve: st.just(Approve()),
    EditProposal: st.just(EditProposal(before=EditedProposal("Add OAuth"), after=EditedProposal("Add SSO"))),
    RequestRevision: st.builds(RequestRevision, feedback=st.text(max_size=5)),
    Hold: st.just(Hold()),
    Resume: st.just(Resume()),
    SubtaskReported: st.builds(SubtaskReported, index=st.integers(1, 4)),
    ImplementationReported: st.just(ImplementationReported()),
    DevStalled: st.just(DevStalled()),
    ContinueDev: st.just(ContinueDev()),
    MarkComplete: st.just(MarkComplete()),
    SetupFailed: st.builds(SetupFailed, reason=st.text(max_size=5), command=st.just("npm ci")),
    RetrySetup: st.just(RetrySetup()),
    SkipSetup: st.just(SkipSetup()),
    ReviewStarted: st.just(ReviewStarted()),
    ReviewFinished: st.builds(ReviewFinished, aggregate=st.lists(seat_results, min_size=1, max_size=2).map(aggregate)),
    RetryReview: st.just(RetryReview()),
    Accept: st.just(Accept()),
    AcceptPartial: st.builds(AcceptPartial, reason=st.text(max_size=5)),
    AcceptOverride: st.builds(AcceptOverride, reason=st.text(max_size=5)),
    Rework: st.just(Rework()),
    Redesign: st.just(Redesign()),
    ContinueAfterEscalation: st.just(ContinueAfterEscalation()),
    Abandon: st.just(Abandon()),
    MergeConflicted: st.builds(MergeConflicted, base=st.just("main"), files=st.just(("calc.py",))),
    ResolveConflict: st.just(ResolveConflict()),
    ConflictUnresolved: st.builds(ConflictUnresolved, files=st.just(("calc.py",)), reason=st.text(max_size=5)),
    LeaveConflict: st.just(LeaveConflict()),
    MarkerRejected: st.builds(MarkerRejected, kind=st.just("impl-complete"), role=st.just("reviewer")),
}
# Terminal commands are drawn rarely so that sequences get deep into review and the doom loop.
RARE: dict[type[Command], float] = {Abandon: 0.02, Accept: 0.3, AcceptPartial: 0.3, AcceptOverride: 0.3}


def draw_step(data: st.DataObject, rnd: random.Random, state: PlanState) -> tuple[Command, str]:
    """Mostly a legal command by the right actor; sometimes anything by anyone (which must be refused)."""
    legal = [c for c in allowed_commands(state) if rnd.random() < RARE.get(c, 1.0)]
    if legal and rnd.random() < 0.8:
        kind = rnd.choice(legal)
        actor = "user" if Actor.USER in kind.actors else rnd.choice(["agent", "system"])
        return data.draw(EXAMPLES[kind]), actor
    kind = rnd.choice([c for c in EXAMPLES if rnd.random() < RARE.get(c, 1.0)])
    return data.draw(EXAMPLES[kind]), rnd.choice(["user", "agent", "system"])


def check_invariants(state: PlanState, events: list[EventSpec], threshold: int) -> None:
    assert isinstance(state.phase, Phase)
    assert state.pending_decision is None or isinstance(state.pending_decision, PendingDecision)
    assert (state.phase is Phase.HELD) == (state.held_from is not None)
    if state.phase.is_terminal:  # the one question a finished plan can have: its merge conflicted
        assert state.pending_decision is None or (
            state.phase is Phase.DONE and state.pending_decision is PendingDecision.MERGE_CONFLICT)
    if state.pending_decision is PendingDecision.CONFLICT_UNRESOLVED:
        assert (state.held_from if state.phase is Phase.HELD else state.phase) is Phase.REWORK
    if state.phase is Phase.APPROVAL:
        assert state.pending_decision is PendingDecision.APPROVAL
    if state.pending_decision is PendingDecision.SETUP_FAILED:
        assert (state.held_from if state.phase is Phase.HELD else state.phase) in (Phase.DEV, Phase.REWORK)
    assert (state.phase is Phase.ESCALATED) == (state.pending_decision is PendingDecision.DOOM_LOOP) or (
        state.phase is Phase.HELD and state.held_from is Phase.ESCALATED
    )
    assert state.failures_since_reset == failures_since_reset(events)
    assert state.failures_since_reset <= threshold
    assert state.revision >= 0 and state.review_round >= 0


# A mutation run (bench/mutation.py) caps the examples: every surviving mutant reruns this test.
SEQUENCES = int(os.environ.get("TUNAFLOW_PROPERTY_EXAMPLES", "300"))


@settings(max_examples=SEQUENCES, deadline=None)
@given(data=st.data(), rnd=st.randoms(use_true_random=True), threshold=st.integers(1, 4), length=st.integers(0, 80))
def test_random_sequences_keep_state_consistent(
    data: st.DataObject, rnd: random.Random, threshold: int, length: int
) -> None:
    state = PlanState()
    events: list[EventSpec] = []
    for _ in range(length):
        command, actor = draw_step(data, rnd, state)
        before = state
        try:
            outcome = transition(state, command, actor=actor, doom_threshold=threshold)
        except IllegalTransition:
            assert state == before
            continue
        assert outcome.events, "every transition is recorded"
        assert all(e.actor in ("user", "agent", "system") for e in outcome.events)
        if before.phase.is_terminal and isinstance(command, MergeConflicted | ResolveConflict | LeaveConflict):
            assert before.phase is Phase.DONE, "only a done plan's merge can conflict"
            assert outcome.state.phase is Phase.DONE or isinstance(command, ResolveConflict), \
                "resolving the conflict with the Developer is the only way out of done"
        elif before.phase.is_terminal:
            assert outcome.state == before, "done and abandoned are terminal"
        if type(command).actors == {Actor.USER}:
            assert actor == "user", "a gate decision slipped through from a non-user"
        accepted = [e for e in outcome.events if e.type.startswith("accepted")]
        if accepted:
            standing = ReviewStanding.of(unheld(before).pending_detail)
            kind = {"pass": "accepted" if standing.complete else "accepted_partial_review"}.get(
                str(standing.verdict), "accepted_over_failed_review")
            assert [e.type for e in accepted] == [kind], "an accept is recorded as what it was"
        state = outcome.state
        events.extend(outcome.events)
        check_invariants(state, events, threshold)
