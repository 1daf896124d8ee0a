"""A visible way on: for any plan, what it waits on and which decisions the user can take now.

:func:`ways_on` is the one place that answers "what can I do with this plan?" — for the card's keys,
the palette, f2, ``tunaflow status`` and ``tunaflow run`` alike. Every decision it offers that maps
to a state-machine command (:func:`decision_command`) is one the machine accepts in that state; the
others (re-running an interrupted step, merging, removing a worktree) are runtime actions offered
only where they can run. Decisions that need an explicit confirmation come with the text that says
what happens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from tunaflow_tui.core.counting import counted
from tunaflow_tui.core.proposal_editing import EditedProposal
from tunaflow_tui.core.workflow.commands import (
    Abandon,
    Accept,
    AcceptOverride,
    AcceptPartial,
    Approve,
    Command,
    ContinueAfterEscalation,
    ContinueDev,
    EditProposal,
    Hold,
    LeaveConflict,
    MarkComplete,
    Redesign,
    RequestRevision,
    ResolveConflict,
    Resume,
    RetryReview,
    RetrySetup,
    ReviewStarted,
    Rework,
    SkipSetup,
)
from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.core.workflow.machine import PlanState, allowed_commands, unheld
from tunaflow_tui.core.workflow.phases import PendingDecision, Phase, PlanEventType, Waiting
from tunaflow_tui.core.workflow.verdicts import ReviewStanding

STEP_STARTED = PlanEventType.AGENT_STARTED
STEP_FINISHED = PlanEventType.AGENT_FINISHED
_WORKER = {Phase.CHAT: "architect", Phase.DRAFTING: "architect", Phase.DEV: "developer",
           Phase.REWORK: "developer", Phase.REVIEW: "review"}
_WHO = {"architect": "the Architect", "developer": "the Developer", "review": "the reviewers"}


class _Event(Protocol):
    @property
    def type(self) -> str: ...

    @property
    def detail(self) -> Mapping[str, object]: ...


def open_step(events: Iterable[_Event]) -> Mapping[str, object] | None:
    """The detail of the latest agent step that started and did not finish (events oldest first)."""
    found: Mapping[str, object] | None = None
    for event in events:
        if event.type == STEP_STARTED:
            found = dict(event.detail)
        elif event.type == STEP_FINISHED:
            found = None
    return found


@dataclass(frozen=True)
class PlanContext:
    """What the state machine does not know about a plan but its way on depends on.

    ``agent_running``: an agent works on the plan now (in this process, or in another live one).
    ``open_step``: the role (``architect``, ``developer``, ``review``) of a step that started and never
    finished. ``git_branch``, ``worktree`` and ``merged`` say what a finished plan leaves to clean up.
    """

    agent_running: bool = False
    open_step: str | None = None
    git_branch: str | None = None
    worktree: bool = False
    merged: bool = False


@dataclass(frozen=True)
class WayOn:
    """What a plan waits on, the decisions available now (the first is the main one), and confirmations.

    ``confirm`` maps each decision that must be confirmed (accepting an incomplete or failed review,
    abandoning) to the text that names what happens; ``summary`` is one line for lists and status.
    """

    waiting: Waiting
    decisions: tuple[Decision, ...]
    summary: str
    held: bool = False
    confirm: Mapping[Decision, str] = field(default_factory=dict)

    @property
    def primary(self) -> Decision | None:
        """The decision a card's main key or ``Enter`` should take, if any."""
        return self.decisions[0] if self.decisions else None

    @property
    def asks_the_user(self) -> bool:
        """True when the plan waits for the user (what f2 and ``status`` count)."""
        return self.waiting.asks_the_user

    def needs_confirmation(self, decision: Decision) -> bool:
        """True for a decision that must be confirmed before it is taken."""
        return decision in self.confirm


# -- decisions → commands ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DecisionInput:
    """What a decision may carry: feedback for an agent, a reason for the record, seats, an edit."""

    feedback: str = ""
    reason: str = ""
    seats: tuple[str, ...] = ()
    edit: tuple[EditedProposal, EditedProposal] | None = None


def _continue(state: PlanState, given: DecisionInput) -> Command:
    if unheld(state).phase is Phase.ESCALATED:
        return ContinueAfterEscalation(feedback=given.feedback)
    return ContinueDev()


def _edit(state: PlanState, given: DecisionInput) -> Command:
    if given.edit is None:
        raise ValueError("an edit needs the proposal before and after it")
    return EditProposal(before=given.edit[0], after=given.edit[1])


_COMMANDS: dict[Decision, Callable[[PlanState, DecisionInput], Command | None]] = {
    Decision.APPROVE: lambda s, g: Approve(),
    Decision.EDIT: _edit,
    Decision.REVISE: lambda s, g: RequestRevision(feedback=g.feedback),
    Decision.HOLD: lambda s, g: Hold(),
    Decision.RESUME: lambda s, g: Resume(),
    Decision.START_REVIEW: lambda s, g: ReviewStarted(),
    Decision.ACCEPT: lambda s, g: Accept(),
    Decision.ACCEPT_PARTIAL: lambda s, g: AcceptPartial(reason=g.reason),
    Decision.ACCEPT_OVERRIDE: lambda s, g: AcceptOverride(reason=g.reason),
    Decision.REWORK: lambda s, g: Rework(feedback=g.feedback),
    Decision.REDESIGN: lambda s, g: Redesign(feedback=g.feedback),
    Decision.RETRY: lambda s, g: RetryReview(seats=g.seats),
    Decision.CONTINUE: _continue,
    Decision.COMPLETE: lambda s, g: MarkComplete(),
    Decision.RETRY_SETUP: lambda s, g: RetrySetup(),
    Decision.SKIP_SETUP: lambda s, g: SkipSetup(),
    Decision.ABANDON: lambda s, g: Abandon(reason=g.reason or g.feedback),
    Decision.RESUME_STEP: lambda s, g: None,
    Decision.RETRY_STEP: lambda s, g: None,
    Decision.MERGE: lambda s, g: None,
    Decision.REMOVE_WORKTREE: lambda s, g: None,
    Decision.RESOLVE_CONFLICT: lambda s, g: ResolveConflict(feedback=g.feedback),
    Decision.LEAVE_CONFLICT: lambda s, g: LeaveConflict(),
}


def decision_command(decision: Decision, state: PlanState, given: DecisionInput | None = None) -> Command | None:
    """The state-machine command ``decision`` applies first, or None for a runtime action (re-running an
    interrupted step, merging, removing a worktree). ``ValueError`` for an edit without its content."""
    return _COMMANDS[Decision(decision)](state, given or DecisionInput())


# -- ways on ----------------------------------------------------------------------------------------

# The answers to each question, in the order a card offers them (the first is the main one); each is
# kept only when the machine accepts it in the plan's state.
_ANSWERS: dict[PendingDecision, tuple[Decision, ...]] = {
    PendingDecision.APPROVAL: (Decision.APPROVE, Decision.EDIT, Decision.REVISE, Decision.HOLD),
    PendingDecision.REVIEW: (Decision.ACCEPT, Decision.RETRY, Decision.ACCEPT_PARTIAL, Decision.REWORK,
                      Decision.REDESIGN, Decision.ACCEPT_OVERRIDE, Decision.HOLD),
    PendingDecision.REVIEW_ERROR: (Decision.RETRY, Decision.HOLD),
    PendingDecision.DOOM_LOOP: (Decision.REDESIGN, Decision.CONTINUE, Decision.HOLD),
    PendingDecision.DEV_STALLED: (Decision.CONTINUE, Decision.COMPLETE, Decision.HOLD),
    PendingDecision.SETUP_FAILED: (Decision.RETRY_SETUP, Decision.SKIP_SETUP, Decision.HOLD),
    PendingDecision.MERGE_CONFLICT: (Decision.RESOLVE_CONFLICT, Decision.LEAVE_CONFLICT),
    PendingDecision.CONFLICT_UNRESOLVED: (Decision.RESOLVE_CONFLICT, Decision.LEAVE_CONFLICT, Decision.HOLD),
}
_SAMPLE_EDIT = DecisionInput(edit=(EditedProposal("before"), EditedProposal("after")))


def _accepted(decision: Decision, state: PlanState, allowed: tuple[type[Command], ...]) -> bool:
    command = decision_command(decision, state, _SAMPLE_EDIT)
    return command is None or type(command) in allowed


def _review_summary(standing: ReviewStanding) -> str:
    if standing.verdict == "pass" and not standing.complete:
        return (f"review incomplete: retry the seat ({standing.seats_text} answered; "
                f"{', '.join(standing.errored)} errored)")
    if standing.verdict == "pass":
        return "review passed: accept it, or send it back"
    if standing.verdict == "fail":
        return "review failed: rework or redesign"
    return "review conditional: rework, redesign, or accept over it"


def _question_summary(state: PlanState, question: PendingDecision) -> str:
    detail = state.pending_detail
    if question is PendingDecision.APPROVAL:
        return "waiting for your approval"
    if question is PendingDecision.REVIEW:
        return _review_summary(ReviewStanding.of(detail))
    if question is PendingDecision.REVIEW_ERROR:
        return "review error: no seat gave a verdict; retry the review"
    if question is PendingDecision.DOOM_LOOP:
        return f"review failed {detail.get('failures', 'several')} times: redesign, or let the Developer continue"
    reason = str(detail.get("reason") or "").strip()
    if question in (PendingDecision.MERGE_CONFLICT, PendingDecision.CONFLICT_UNRESOLVED):
        return conflict_summary(question, detail)
    if question is PendingDecision.SETUP_FAILED:
        return ("the worktree setup failed" + (f" ({reason})" if reason else "")
                + ": retry it, or start the Developer without it")
    return "the Developer stopped" + (f" ({reason})" if reason else "") + ": continue, mark complete, or abandon"


def conflict_summary(question: PendingDecision, detail: Mapping[str, object], *, listed: int | None = None) -> str:
    """What a merge-conflict question says: the files named, or (``listed``: a card shows them one per
    line) only how many there are."""
    raw = detail.get("files")
    names = ", ".join(str(f) for f in raw) if isinstance(raw, list | tuple) else ""
    files = counted(listed, "file") if listed else names or "files both sides changed"
    if question is PendingDecision.MERGE_CONFLICT:
        return (f"no longer merges into {detail.get('base') or 'its base'}: conflicts in {files}; "
                "resolve with the Developer, or leave it unmerged")
    reason = str(detail.get("reason") or "").strip()
    return (f"the Developer did not resolve the conflicts in {files}" + (f" ({reason})" if reason else "")
            + ": ask again, or leave it unmerged")


def _confirmations(state: PlanState, decisions: tuple[Decision, ...], context: PlanContext) -> dict[Decision, str]:
    confirm: dict[Decision, str] = {}
    standing = ReviewStanding.of(state.pending_detail)
    merge_note = f" Its branch {context.git_branch} can then be merged." if context.git_branch else ""
    if Decision.ACCEPT_PARTIAL in decisions:
        confirm[Decision.ACCEPT_PARTIAL] = (
            f"Accept with an incomplete review: only {standing.seats_text} answered "
            f"({', '.join(standing.errored)} errored, no verdict). The plan is done on this review alone."
            f"{merge_note} The record says “accepted with an incomplete review ({standing.seats_text})”.")
    if Decision.ACCEPT_OVERRIDE in decisions:
        confirm[Decision.ACCEPT_OVERRIDE] = (
            f"Accept over a {standing.verdict or 'failed'} review: the reviewers did not pass this work. "
            f"The plan is done anyway.{merge_note} The record says “accepted over a failed review”.")
    if Decision.ABANDON in decisions:
        keeps = ""
        if context.git_branch:
            keeps = f" Its branch {context.git_branch}" + (" and worktree stay" if context.worktree else " stays")
            keeps += " until you remove them." if context.worktree else " as it is."
        confirm[Decision.ABANDON] = (
            f"Abandon the plan: it stops here for good and cannot be resumed.{keeps} "
            "The record says “abandoned” with your reason.")
    return confirm


def _terminal(state: PlanState, context: PlanContext) -> WayOn:
    cleanup = (Decision.REMOVE_WORKTREE,) if context.worktree else ()
    if state.phase is Phase.DONE and context.git_branch and not context.merged:
        return WayOn(Waiting.MERGE, (Decision.MERGE, *cleanup),
                     f"done: merge {context.git_branch} into its base, or keep it on its branch")
    what = "done" if state.phase is Phase.DONE else "abandoned"
    if cleanup:
        what += "; its worktree can be removed"
    return WayOn(Waiting.NOTHING, cleanup, what)


def _no_question(state: PlanState, context: PlanContext) -> WayOn:
    worker = context.open_step or _WORKER.get(state.phase, "agent")
    who = _WHO.get(worker, f"the {worker}")
    if context.agent_running:
        return WayOn(Waiting.WORKING, (), f"{who} {'are' if worker == 'review' else 'is'} working")
    if context.open_step is None and state.phase in (Phase.CHAT, Phase.DRAFTING):
        again = (Decision.RETRY_STEP, Decision.ABANDON)
        return WayOn(Waiting.REVISION, again, "waiting for the Architect's revised proposal: write to the "
                     "Architect, or ask it again", confirm=_confirmations(state, again, context))
    if state.phase is Phase.REVIEW and context.open_step is None:
        start = (Decision.START_REVIEW, Decision.ABANDON)
        return WayOn(Waiting.START_REVIEW, start, "implementation complete: start the review",
                     confirm=_confirmations(state, start, context))
    decisions: tuple[Decision, ...]
    if context.open_step is not None:
        decisions = (Decision.RESUME_STEP, Decision.RETRY_STEP, Decision.ABANDON)
        summary = f"the step of {who} was interrupted: resume or retry it"
    else:  # the step never started (the process stopped right after the decision): run it
        decisions = (Decision.RETRY_STEP, Decision.ABANDON)
        summary = f"nothing is running for this plan: start the step of {who} again"
    return WayOn(Waiting.INTERRUPTED, decisions, summary, confirm=_confirmations(state, decisions, context))


def _out_of_queue(state: PlanState, context: PlanContext) -> WayOn:
    """A plan waiting in the queue for a slot (nothing of its step ran), or held while it waited."""
    if state.phase is Phase.HELD:
        decisions = (Decision.RESUME, Decision.ABANDON)
        return WayOn(Waiting.HELD, decisions, "on hold — held while it waited for a slot: resume puts it back "
                     "in the queue (it starts at once when a slot is free)", held=True,
                     confirm=_confirmations(unheld(state), decisions, context))
    decisions = (Decision.HOLD, Decision.ABANDON)
    return WayOn(Waiting.WORKING, decisions, "queued: starts by itself when a plan working now reaches a gate",
                 confirm=_confirmations(state, decisions, context))


def ways_on(state: PlanState, context: PlanContext | None = None) -> WayOn:
    """What ``state`` waits on and the decisions available now (see the module docstring)."""
    context = context or PlanContext()
    if state.phase.is_terminal and state.pending_decision is None:
        return _terminal(state, context)
    question = state.pending_decision
    if question is None and (state.queued or state.phase is Phase.HELD):
        return _out_of_queue(state, context)
    if question is None:
        return _no_question(state, context)
    held = state.phase is Phase.HELD
    allowed = allowed_commands(state)
    answers = [d for d in _ANSWERS[question] if _accepted(d, state, allowed)]
    if held:
        answers.append(Decision.RESUME)
    if Abandon in allowed:
        answers.append(Decision.ABANDON)
    decisions = tuple(answers)
    summary = _question_summary(unheld(state), question)
    if held:
        summary = f"on hold — {summary}"
    confirm = _confirmations(unheld(state), decisions, context)
    return WayOn(Waiting(question.value), decisions, summary, held=held, confirm=confirm)

