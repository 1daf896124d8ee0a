"""The plan workflow state machine: pure, deterministic, no I/O (spec §3).

:func:`transition` takes a plan's :class:`PlanState` and a command and returns the next state plus
the events to record. A command that is not allowed in the current state raises
:class:`IllegalTransition` and changes nothing.

Gates are honest: a plain :class:`Accept` takes only a complete, passing review. Accepting a review
with an errored seat (:class:`AcceptPartial`) or over a failed or conditional one
(:class:`AcceptOverride`) are distinct decisions, recorded as ``accepted_partial_review`` and
``accepted_over_failed_review``. A held plan keeps its question, and the user may answer it directly
(recorded as ``resumed`` followed by the answer). A plan waiting in the queue for a slot (nothing of its
step ran yet) can be held too: it leaves the queue, and resuming it puts it back (the runtime queues it again).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from tunaflow_tui.core.proposal_editing import proposal_changes
from tunaflow_tui.core.workflow.commands import (
    ALL_COMMANDS,
    Abandon,
    Accept,
    AcceptOverride,
    AcceptPartial,
    Approve,
    Command,
    ConflictUnresolved,
    ContinueAfterEscalation,
    ContinueDev,
    DevStalled,
    EditProposal,
    Hold,
    ImplementationReported,
    LeaveConflict,
    MarkComplete,
    MarkerRejected,
    MergeConflicted,
    ProposalReceived,
    Redesign,
    RequestRevision,
    ResolveConflict,
    Resume,
    RetryReview,
    RetrySetup,
    ReviewFinished,
    ReviewStarted,
    Rework,
    SetupFailed,
    SkipSetup,
    SubtaskReported,
)
from tunaflow_tui.core.workflow.phases import Actor, PendingDecision, Phase, PlanEventType
from tunaflow_tui.core.workflow.verdicts import ReviewStanding

DEFAULT_DOOM_THRESHOLD = 3
RESET_EVENT_TYPES = frozenset(
    {PlanEventType.DOOM_LOOP_ESCALATED, PlanEventType.REVISION_REQUESTED, PlanEventType.REDESIGN_REQUESTED}
)


@dataclass(frozen=True)
class PlanState:
    """Everything the machine needs to know about a plan; ``failures_since_reset`` is derived from events."""

    phase: Phase = Phase.CHAT
    held_from: Phase | None = None
    pending_decision: PendingDecision | None = None
    pending_detail: Mapping[str, Any] = field(default_factory=dict)
    revision: int = 0
    review_round: int = 0
    failures_since_reset: int = 0
    queued: bool = False
    """The plan waits in the queue for a slot (``plan_queued`` with no ``queue_left`` after it)."""


@dataclass(frozen=True)
class EventSpec:
    """A plan event to record: its type, who caused it and a JSON-ready detail."""

    type: PlanEventType
    actor: Actor
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """The result of a transition: the new state and the events (at least one) that describe it."""

    state: PlanState
    events: tuple[EventSpec, ...]


class IllegalTransition(Exception):
    """A command that the plan's current state (or the acting party) does not allow."""

    def __init__(self, message: str, *, phase: Phase, command: str, allowed: tuple[str, ...]) -> None:
        super().__init__(message)
        self.phase = phase
        self.command = command
        self.allowed = allowed


class _HasType(Protocol):
    @property
    def type(self) -> str: ...


def failures_since_reset(events: Iterable[_HasType]) -> int:
    """Count ``review_failed`` events since the latest doom-loop answer or plan revision (oldest first)."""
    count = 0
    for event in events:
        if event.type in RESET_EVENT_TYPES:
            count = 0
        elif event.type == PlanEventType.REVIEW_FAILED:
            count += 1
    return count


def waits_in_queue(events: Iterable[_HasType]) -> bool:
    """Whether the latest ``plan_queued`` event has no ``queue_left`` after it (events oldest first)."""
    waiting = False
    for event in events:
        if event.type == PlanEventType.PLAN_QUEUED:
            waiting = True
        elif event.type == PlanEventType.QUEUE_LEFT:
            waiting = False
    return waiting


def _holdable(s: PlanState) -> bool:
    """A question can be put aside, and so can a plan waiting in the queue (its step never started)."""
    if s.phase.is_terminal or s.phase is Phase.HELD:
        return False
    return s.pending_decision is not None or s.queued


def _working(s: PlanState) -> bool:
    return s.phase in (Phase.DEV, Phase.REWORK) and s.pending_decision is None


def _retry_seats(s: PlanState) -> tuple[str, ...]:
    return tuple(str(seat) for seat in s.pending_detail.get("retry_seats") or ())


def _reviewed(s: PlanState) -> ReviewStanding | None:
    """The standing of the review the plan waits on, if it waits on one."""
    if s.phase is Phase.REVIEW and s.pending_decision is PendingDecision.REVIEW:
        return ReviewStanding.of(s.pending_detail)
    return None


def _accepts(kind: type[Command], standing: ReviewStanding | None) -> bool:
    """Which accept a review allows: a plain one only for a complete pass; the others are distinct decisions."""
    if standing is None:
        return False
    if kind is AcceptOverride:
        return standing.verdict in ("fail", "conditional")
    if standing.verdict != "pass":
        return False
    return standing.complete if kind is Accept else not standing.complete


def _at_conflict(s: PlanState) -> bool:
    """A merge conflict waits: the done plan's, or the one its Developer did not resolve."""
    return (s.phase is Phase.DONE and s.pending_decision is PendingDecision.MERGE_CONFLICT) or (
        s.phase is Phase.REWORK and s.pending_decision is PendingDecision.CONFLICT_UNRESOLVED)


def _at_approval(s: PlanState) -> bool:
    return s.pending_decision is PendingDecision.APPROVAL and (
        s.phase is Phase.APPROVAL or (s.phase is Phase.HELD and s.held_from is Phase.APPROVAL)
    )


_GUARDS: dict[type[Command], Callable[[PlanState], bool]] = {
    ProposalReceived: lambda s: s.phase in (Phase.CHAT, Phase.DRAFTING),
    Approve: lambda s: s.phase is Phase.APPROVAL and s.pending_decision is PendingDecision.APPROVAL,
    EditProposal: _at_approval,
    RequestRevision: lambda s: s.phase is Phase.APPROVAL and s.pending_decision is PendingDecision.APPROVAL,
    Hold: _holdable,
    Resume: lambda s: s.phase is Phase.HELD,
    SubtaskReported: lambda s: s.phase in (Phase.DEV, Phase.REWORK),
    ImplementationReported: _working,
    DevStalled: _working,
    ContinueDev: lambda s: s.phase in (Phase.DEV, Phase.REWORK) and s.pending_decision is PendingDecision.DEV_STALLED,
    MarkComplete: lambda s: s.phase in (Phase.DEV, Phase.REWORK) and s.pending_decision is PendingDecision.DEV_STALLED,
    SetupFailed: _working,
    RetrySetup: lambda s: s.phase in (Phase.DEV, Phase.REWORK) and s.pending_decision is PendingDecision.SETUP_FAILED,
    SkipSetup: lambda s: s.phase in (Phase.DEV, Phase.REWORK) and s.pending_decision is PendingDecision.SETUP_FAILED,
    ReviewStarted: lambda s: s.phase is Phase.REVIEW and s.pending_decision is None,
    ReviewFinished: lambda s: s.phase is Phase.REVIEW and s.pending_decision is None,
    RetryReview: lambda s: s.phase is Phase.REVIEW
    and (
        s.pending_decision is PendingDecision.REVIEW_ERROR
        or (s.pending_decision is PendingDecision.REVIEW and bool(_retry_seats(s)))
    ),
    Accept: lambda s: _accepts(Accept, _reviewed(s)),
    AcceptPartial: lambda s: _accepts(AcceptPartial, _reviewed(s)),
    AcceptOverride: lambda s: _accepts(AcceptOverride, _reviewed(s)),
    Rework: lambda s: s.phase is Phase.REVIEW and s.pending_decision is PendingDecision.REVIEW,
    Redesign: lambda s: (s.phase is Phase.REVIEW and s.pending_decision is PendingDecision.REVIEW)
    or (s.phase is Phase.ESCALATED and s.pending_decision is PendingDecision.DOOM_LOOP),
    ContinueAfterEscalation: lambda s: s.phase is Phase.ESCALATED and s.pending_decision is PendingDecision.DOOM_LOOP,
    Abandon: lambda s: not s.phase.is_terminal,
    MergeConflicted: lambda s: s.phase is Phase.DONE and s.pending_decision is None,
    ResolveConflict: _at_conflict,
    ConflictUnresolved: lambda s: s.phase is Phase.REWORK and s.pending_decision is None,
    LeaveConflict: _at_conflict,
    MarkerRejected: lambda s: True,
}


# A held plan keeps its question: the user may answer it straight away (the plan is resumed and the
# answer applied in one step); what only moves the plan around its gate keeps its own rule.
_FROM_HELD: frozenset[type[Command]] = frozenset(
    cmd for cmd in ALL_COMMANDS if cmd.actors == {Actor.USER}
) - {Hold, Resume, Abandon, EditProposal}


def unheld(state: PlanState) -> PlanState:
    """A held plan as it was before it was held (the state itself when it is not held)."""
    if state.phase is not Phase.HELD or state.held_from is None:
        return state
    return replace(state, phase=state.held_from, held_from=None)


def _allowed(kind: type[Command], state: PlanState) -> bool:
    if state.phase is Phase.HELD and kind in _FROM_HELD:
        return _GUARDS[kind](unheld(state))
    return _GUARDS[kind](state)


def allowed_commands(state: PlanState) -> tuple[type[Command], ...]:
    """The command types accepted in ``state`` (whoever the actor), in a stable order."""
    return tuple(cmd for cmd in ALL_COMMANDS if _allowed(cmd, state))


def allowed_names(state: PlanState) -> tuple[str, ...]:
    """Short names of the actions possible in ``state``, for messages and footers (bookkeeping, and the
    merge's own report of a conflict, left out)."""
    return tuple(cmd.name for cmd in allowed_commands(state) if cmd not in (MarkerRejected, MergeConflicted))


def _describe(state: PlanState) -> str:
    text = f"it is {state.phase.value}" if state.phase.is_terminal else f"it is in {state.phase.value}"
    if state.phase is Phase.HELD and state.held_from is not None:
        text += f" (from {state.held_from.value})"
    elif state.pending_decision is not None:
        text += f", waiting for a decision ({state.pending_decision.question})"
    return text


def _accept_refusal(state: PlanState, command: Command) -> str | None:
    """Why this kind of accept does not fit the review waiting (None when no review waits)."""
    standing = _reviewed(unheld(state))
    if standing is None or not isinstance(command, Accept | AcceptPartial | AcceptOverride):
        return None
    if standing.verdict in ("fail", "conditional"):
        return (f"the review's verdict is {standing.verdict}: accepting over it is its own decision "
                "(accept override), to be confirmed")
    if not standing.complete:
        return (f"the review is incomplete ({standing.seats_text} answered; {', '.join(standing.errored)} "
                "errored): retry the seat, or accept with an incomplete review (accept partial), to be confirmed")
    return "the review is complete and passed: there is nothing to override (accept)"


def _refuse(state: PlanState, command: Command, plan_id: int | None, why: str | None = None) -> IllegalTransition:
    allowed = allowed_names(state)
    target = "this plan" if plan_id is None else f"plan {plan_id}"
    reason = why or _accept_refusal(state, command) or _describe(state)
    listing = f"allowed: {', '.join(allowed)}" if allowed else "nothing more can happen to it"
    return IllegalTransition(
        f"cannot {command.verb} {target}: {reason} ({listing})",
        phase=state.phase,
        command=command.name,
        allowed=allowed,
    )


def transition(
    state: PlanState,
    command: Command,
    *,
    actor: Actor,
    doom_threshold: int = DEFAULT_DOOM_THRESHOLD,
    plan_id: int | None = None,
) -> Outcome:
    """Apply ``command`` by ``actor`` (user / agent / system) to ``state``.

    Raises :class:`IllegalTransition` when the command is not allowed in ``state`` or not from this
    actor (gate decisions only from the user; agent markers never from the user), and ``ValueError``
    for an unknown actor or a threshold below 1. ``plan_id`` only improves error messages.
    """
    try:
        who = Actor(actor)
    except ValueError:
        raise ValueError(f"unknown actor {actor!r} (expected user, agent or system)") from None
    if doom_threshold < 1:
        raise ValueError("doom_threshold must be at least 1")
    kind = type(command)
    if kind not in _GUARDS:
        raise TypeError(f"not a workflow command: {command!r}")
    if not _allowed(kind, state):
        raise _refuse(state, command, plan_id)
    if who not in kind.actors:
        only = "only the user may" if kind.actors == {Actor.USER} else "only an agent or the system may"
        raise _refuse(state, command, plan_id, f"{only}, not the {who.value}")
    if state.phase is Phase.HELD and kind in _FROM_HELD:
        outcome = _HANDLERS[kind](unheld(state), command, who, doom_threshold)
        resumed = _ev(PlanEventType.RESUMED, who, to=unheld(state).phase.value)
        return Outcome(outcome.state, (resumed, *outcome.events))
    return _HANDLERS[kind](state, command, who, doom_threshold)


# --- handlers: each returns the next state and its events -------------------------------------------------


def _ev(type_: PlanEventType, actor: Actor, **detail: Any) -> EventSpec:
    return EventSpec(type=type_, actor=actor, detail=detail)


def _clear(state: PlanState, phase: Phase, **changes: Any) -> PlanState:
    return replace(state, phase=phase, pending_decision=None, pending_detail={}, held_from=None, **changes)


def _proposal(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, ProposalReceived)
    detail = {"revision": s.revision, "subtask_count": c.subtask_count}
    state = replace(s, phase=Phase.APPROVAL, pending_decision=PendingDecision.APPROVAL, pending_detail=detail)
    return Outcome(state, (_ev(PlanEventType.PROPOSAL_RECEIVED, actor, **detail),))


def _approve(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    return Outcome(
        _clear(s, Phase.DEV),
        (_ev(PlanEventType.APPROVED, actor, revision=s.revision), _ev(PlanEventType.DEV_STARTED, Actor.SYSTEM, revision=s.revision)),
    )


def _edit(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, EditProposal)
    changes = proposal_changes(c.before, c.after)
    if not changes:
        raise IllegalTransition("cannot edit the proposal: the edit changes nothing", phase=s.phase,
                                command=c.name, allowed=allowed_names(s))
    state = replace(s, pending_detail={**s.pending_detail, "subtask_count": len(c.after.subtasks)})
    detail = {"changes": list(changes), "before": c.before.outline(), "after": c.after.outline()}
    return Outcome(state, (_ev(PlanEventType.PLAN_EDITED, actor, **detail),))


def _request_revision(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, RequestRevision)
    state = _clear(s, Phase.DRAFTING, revision=s.revision + 1, failures_since_reset=0)
    return Outcome(state, (_ev(PlanEventType.REVISION_REQUESTED, actor, feedback=c.feedback, revision=state.revision),))


def _hold(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    decision = s.pending_decision.value if s.pending_decision else None
    state = replace(s, phase=Phase.HELD, held_from=s.phase, queued=False)
    if not s.queued:
        return Outcome(state, (_ev(PlanEventType.HELD, actor, **{"from": s.phase.value, "decision": decision}),))
    # out of the queue in the same transaction: no process waiting for a slot may start it now
    held = _ev(PlanEventType.HELD, actor, **{"from": s.phase.value, "decision": decision, "queued": True})
    return Outcome(state, (held, _ev(PlanEventType.QUEUE_LEFT, Actor.SYSTEM, why="withdrawn")))


def _resume(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    back = s.held_from or Phase.APPROVAL
    return Outcome(replace(s, phase=back, held_from=None), (_ev(PlanEventType.RESUMED, actor, to=back.value),))


def _subtask_done(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, SubtaskReported)
    return Outcome(s, (_ev(PlanEventType.SUBTASK_DONE, actor, index=c.index),))


def _impl_complete(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    detail = {"marked_by_user": True} if isinstance(c, MarkComplete) else {}
    return Outcome(_clear(s, Phase.REVIEW), (_ev(PlanEventType.IMPL_COMPLETE, actor, **{"from": s.phase.value, **detail}),))


def _dev_stalled(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, DevStalled)
    state = replace(s, pending_decision=PendingDecision.DEV_STALLED, pending_detail={"reason": c.reason})
    return Outcome(state, (_ev(PlanEventType.DEV_STALLED, actor, reason=c.reason),))


def _continue_dev(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    return Outcome(_clear(s, s.phase), (_ev(PlanEventType.DEV_CONTINUED, actor),))


def _setup_failed(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, SetupFailed)
    detail = {"reason": c.reason, "command": c.command}
    state = replace(s, pending_decision=PendingDecision.SETUP_FAILED, pending_detail=detail)
    return Outcome(state, (_ev(PlanEventType.SETUP_FAILED, actor, **detail),))


def _setup_answered(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    kind = PlanEventType.SETUP_RETRY_REQUESTED if isinstance(c, RetrySetup) else PlanEventType.SETUP_SKIPPED
    return Outcome(_clear(s, s.phase), (_ev(kind, actor, reason=s.pending_detail.get("reason", "")),))


def _review_started(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    state = replace(s, review_round=s.review_round + 1)
    return Outcome(state, (_ev(PlanEventType.REVIEW_STARTED, actor, round=state.review_round),))


def _review_finished(s: PlanState, c: Command, actor: Actor, threshold: int) -> Outcome:
    assert isinstance(c, ReviewFinished)
    agg = c.aggregate
    rnd = s.review_round
    events = [_ev(PlanEventType.REVIEW_FINISHED, actor, round=rnd, verdict=agg.verdict, aggregate=agg.to_json())]
    if agg.errors or agg.verdict is None:
        events.append(_ev(PlanEventType.REVIEW_ERROR, Actor.SYSTEM, round=rnd, seats=list(agg.errors)))
    if agg.verdict is None:
        detail = {"round": rnd, "aggregate": agg.to_json(), "retry_seats": list(agg.errors)}
        return Outcome(replace(s, pending_decision=PendingDecision.REVIEW_ERROR, pending_detail=detail), tuple(events))
    failures = s.failures_since_reset
    if agg.verdict == "fail":
        failures += 1
        events.append(_ev(PlanEventType.REVIEW_FAILED, Actor.SYSTEM, round=rnd, failures_since_reset=failures))
    if failures >= threshold and agg.verdict == "fail":
        detail = {"round": rnd, "aggregate": agg.to_json(), "failures": failures, "threshold": threshold}
        state = replace(
            s,
            phase=Phase.ESCALATED,
            pending_decision=PendingDecision.DOOM_LOOP,
            pending_detail=detail,
            failures_since_reset=failures,
        )
        return Outcome(state, tuple(events))
    # Retrying an errored seat cannot change a fail (any fail → fail), so it is offered only otherwise;
    # this also keeps one review round from counting twice toward the doom loop.
    retry = list(agg.errors) if agg.verdict != "fail" else []
    detail = {"round": rnd, "verdict": agg.verdict, "aggregate": agg.to_json(), "retry_seats": retry}
    state = replace(s, pending_decision=PendingDecision.REVIEW, pending_detail=detail, failures_since_reset=failures)
    return Outcome(state, tuple(events))


def _retry_review(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, RetryReview)
    offered = _retry_seats(s)
    unknown = [seat for seat in c.seats if seat not in offered]
    if unknown and offered:
        raise IllegalTransition(
            f"cannot retry seat {', '.join(unknown)}: only errored seats can be retried ({', '.join(offered)})",
            phase=s.phase,
            command=c.name,
            allowed=offered,
        )
    seats = list(c.seats or offered)
    return Outcome(_clear(s, Phase.REVIEW), (_ev(PlanEventType.REVIEW_RETRY_REQUESTED, actor, round=s.review_round, seats=seats),))


def _accept(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    standing = ReviewStanding.of(s.pending_detail)
    detail: dict[str, Any] = {"round": s.review_round, "verdict": standing.verdict}
    if isinstance(c, AcceptPartial | AcceptOverride):
        detail.update(answered=standing.answered, seats=standing.seats, errored=list(standing.errored),
                      reason=c.reason)
    kind = {AcceptPartial: PlanEventType.ACCEPTED_PARTIAL_REVIEW,
            AcceptOverride: PlanEventType.ACCEPTED_OVER_FAILED_REVIEW}.get(type(c), PlanEventType.ACCEPTED)
    return Outcome(_clear(s, Phase.DONE), (_ev(kind, actor, **detail),))


def _rework(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, Rework | ContinueAfterEscalation)
    events: list[EventSpec] = []
    failures = s.failures_since_reset
    if isinstance(c, ContinueAfterEscalation):
        events.append(_ev(PlanEventType.DOOM_LOOP_ESCALATED, actor, answer="continue", failures=failures))
        failures = 0
    events.append(_ev(PlanEventType.REWORK_REQUESTED, actor, round=s.review_round, feedback=c.feedback))
    return Outcome(_clear(s, Phase.REWORK, failures_since_reset=failures), tuple(events))


def _redesign(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, Redesign)
    events: list[EventSpec] = []
    if s.phase is Phase.ESCALATED:
        events.append(_ev(PlanEventType.DOOM_LOOP_ESCALATED, actor, answer="redesign", failures=s.failures_since_reset))
    state = _clear(s, Phase.DRAFTING, revision=s.revision + 1, failures_since_reset=0)
    events.append(_ev(PlanEventType.REDESIGN_REQUESTED, actor, feedback=c.feedback, revision=state.revision))
    return Outcome(state, tuple(events))


def _abandon(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, Abandon)
    origin = s.held_from if s.phase is Phase.HELD and s.held_from else s.phase
    waiting = s.pending_decision.value if s.pending_decision else None
    detail = {"reason": c.reason.strip(), "from": origin.value, "decision": waiting}
    return Outcome(_clear(s, Phase.ABANDONED), (_ev(PlanEventType.ABANDONED, actor, **detail),))


def _merge_conflicted(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, MergeConflicted)
    detail = {"base": c.base, "files": list(c.files)}
    state = replace(s, pending_decision=PendingDecision.MERGE_CONFLICT, pending_detail=detail)
    event = _ev(PlanEventType.MERGE_CONFLICT, actor, kind="conflict", base=c.base, files=list(c.files))
    return Outcome(state, (event,))


def _resolve_conflict(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, ResolveConflict)
    detail = {"from": s.phase.value, "files": list(s.pending_detail.get("files") or ()), "feedback": c.feedback}
    return Outcome(_clear(s, Phase.REWORK), (_ev(PlanEventType.CONFLICT_RESOLUTION_REQUESTED, actor, **detail),))


def _conflict_unresolved(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, ConflictUnresolved)
    detail = {"files": list(c.files), "reason": c.reason}
    state = replace(s, pending_decision=PendingDecision.CONFLICT_UNRESOLVED, pending_detail=detail)
    return Outcome(state, (_ev(PlanEventType.CONFLICT_UNRESOLVED, actor, **detail),))


def _leave_conflict(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    detail = {"from": s.phase.value, "files": list(s.pending_detail.get("files") or ())}
    return Outcome(_clear(s, Phase.DONE), (_ev(PlanEventType.CONFLICT_LEFT, actor, **detail),))


def _marker_rejected(s: PlanState, c: Command, actor: Actor, _t: int) -> Outcome:
    assert isinstance(c, MarkerRejected)
    event = _ev(PlanEventType.MARKER_REJECTED, actor, kind=c.kind, role=c.role, excerpt=c.excerpt, reason=c.reason)
    return Outcome(s, (event,))


_HANDLERS: dict[type[Command], Callable[[PlanState, Command, Actor, int], Outcome]] = {
    ProposalReceived: _proposal,
    Approve: _approve,
    EditProposal: _edit,
    RequestRevision: _request_revision,
    Hold: _hold,
    Resume: _resume,
    SubtaskReported: _subtask_done,
    ImplementationReported: _impl_complete,
    DevStalled: _dev_stalled,
    ContinueDev: _continue_dev,
    MarkComplete: _impl_complete,
    SetupFailed: _setup_failed,
    RetrySetup: _setup_answered,
    SkipSetup: _setup_answered,
    ReviewStarted: _review_started,
    ReviewFinished: _review_finished,
    RetryReview: _retry_review,
    Accept: _accept,
    AcceptPartial: _accept,
    AcceptOverride: _accept,
    Rework: _rework,
    Redesign: _redesign,
    ContinueAfterEscalation: _rework,
    Abandon: _abandon,
    MergeConflicted: _merge_conflicted,
    ResolveConflict: _resolve_conflict,
    ConflictUnresolved: _conflict_unresolved,
    LeaveConflict: _leave_conflict,
    MarkerRejected: _marker_rejected,
}
