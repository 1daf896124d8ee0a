"""Commands the workflow machine understands: one frozen dataclass per thing that can happen to a plan.

Each command has a ``verb`` (how an error message names it: "cannot approve plan 3"), a short
``name`` (how lists of allowed actions name it) and ``actors``, the actors it is accepted from. Gate decisions are accepted only from the user, and
the markers that move a plan (proposal, impl complete) never from the user, so neither a
skipped gate nor a pasted marker can move a plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tunaflow_tui.core.proposal_editing import EditedProposal
from tunaflow_tui.core.workflow.phases import Actor
from tunaflow_tui.core.workflow.verdicts import AggregateVerdict

_USER = frozenset({Actor.USER})
_MACHINE = frozenset({Actor.AGENT, Actor.SYSTEM})
_ANYONE = frozenset(Actor)


@dataclass(frozen=True)
class Command:
    """Base class of every workflow command."""

    verb: ClassVar[str] = "act on"
    name: ClassVar[str] = "command"
    actors: ClassVar[frozenset[Actor]] = _ANYONE


@dataclass(frozen=True)
class ProposalReceived(Command):
    """The Architect proposed the plan (chat → approval) or re-proposed it (drafting → approval)."""

    verb: ClassVar[str] = "receive a proposal for"
    name: ClassVar[str] = "proposal"
    actors: ClassVar[frozenset[Actor]] = _MACHINE
    subtask_count: int = 0


@dataclass(frozen=True)
class Approve(Command):
    """Approval gate: approve the proposal; development starts."""

    verb: ClassVar[str] = "approve"
    name: ClassVar[str] = "approve"
    actors: ClassVar[frozenset[Actor]] = _USER


@dataclass(frozen=True)
class RequestRevision(Command):
    """Approval gate: send feedback to the Architect, who re-proposes (a plan revision)."""

    verb: ClassVar[str] = "request revision"
    name: ClassVar[str] = "request revision"
    actors: ClassVar[frozenset[Actor]] = _USER
    feedback: str = ""


@dataclass(frozen=True)
class EditProposal(Command):
    """Approval gate: the user edits the proposal (title, subtasks, description, outcome) before deciding.

    ``before`` is the proposal as stored, ``after`` the edited one; the plan stays at its gate (a held
    plan stays held) and the edit is recorded as ``plan_edited`` with what changed.
    """

    verb: ClassVar[str] = "edit the proposal of"
    name: ClassVar[str] = "edit"
    actors: ClassVar[frozenset[Actor]] = _USER
    before: EditedProposal
    after: EditedProposal


@dataclass(frozen=True)
class Hold(Command):
    """Put a pending decision aside; the plan keeps it and returns to it on resume."""

    verb: ClassVar[str] = "hold"
    name: ClassVar[str] = "hold"
    actors: ClassVar[frozenset[Actor]] = _USER


@dataclass(frozen=True)
class Resume(Command):
    """Take a held plan back to the phase (and decision) it was held in."""

    verb: ClassVar[str] = "resume"
    name: ClassVar[str] = "resume"
    actors: ClassVar[frozenset[Actor]] = _USER


@dataclass(frozen=True)
class SubtaskReported(Command):
    """Subtask ``index`` (1-based) finished: reported by the Developer, or ticked by the user."""

    verb: ClassVar[str] = "mark a subtask done on"
    name: ClassVar[str] = "subtask done"
    actors: ClassVar[frozenset[Actor]] = _ANYONE  # ticking a box moves no gate; the user may tick by hand
    index: int


@dataclass(frozen=True)
class ImplementationReported(Command):
    """The Developer reported the implementation finished; the plan goes to review."""

    verb: ClassVar[str] = "complete the implementation of"
    name: ClassVar[str] = "impl complete"
    actors: ClassVar[frozenset[Actor]] = _MACHINE


@dataclass(frozen=True)
class DevStalled(Command):
    """The Developer stopped without reporting impl-complete; the user decides what next."""

    verb: ClassVar[str] = "report a stalled developer on"
    name: ClassVar[str] = "dev stalled"
    actors: ClassVar[frozenset[Actor]] = _MACHINE
    reason: str = ""


@dataclass(frozen=True)
class ContinueDev(Command):
    """Stalled developer: let the Developer carry on."""

    verb: ClassVar[str] = "continue dev"
    name: ClassVar[str] = "continue dev"
    actors: ClassVar[frozenset[Actor]] = _USER


@dataclass(frozen=True)
class MarkComplete(Command):
    """Stalled developer: the user declares the implementation complete; the plan goes to review."""

    verb: ClassVar[str] = "mark complete"
    name: ClassVar[str] = "mark complete"
    actors: ClassVar[frozenset[Actor]] = _USER


@dataclass(frozen=True)
class SetupFailed(Command):
    """The worktree setup command failed before the Developer started; the user decides what next."""

    verb: ClassVar[str] = "report a failed worktree setup on"
    name: ClassVar[str] = "setup failed"
    actors: ClassVar[frozenset[Actor]] = _MACHINE
    reason: str = ""
    command: str = ""


@dataclass(frozen=True)
class RetrySetup(Command):
    """Failed worktree setup: run the setup command again (e.g. after fixing it in a shell)."""

    verb: ClassVar[str] = "retry the worktree setup of"
    name: ClassVar[str] = "retry setup"
    actors: ClassVar[frozenset[Actor]] = _USER


@dataclass(frozen=True)
class SkipSetup(Command):
    """Failed worktree setup: start the Developer without it."""

    verb: ClassVar[str] = "skip the worktree setup of"
    name: ClassVar[str] = "skip setup"
    actors: ClassVar[frozenset[Actor]] = _USER


@dataclass(frozen=True)
class ReviewStarted(Command):
    """A review round started (the round number goes up by one)."""

    verb: ClassVar[str] = "start a review of"
    name: ClassVar[str] = "review started"
    actors: ClassVar[frozenset[Actor]] = _ANYONE


@dataclass(frozen=True)
class ReviewFinished(Command):
    """Every seat of the review round answered or errored; ``aggregate`` is their combined verdict."""

    verb: ClassVar[str] = "finish a review of"
    name: ClassVar[str] = "review finished"
    actors: ClassVar[frozenset[Actor]] = _MACHINE
    aggregate: AggregateVerdict


@dataclass(frozen=True)
class RetryReview(Command):
    """Run the errored seats of the current round again (the round number stays)."""

    verb: ClassVar[str] = "retry review"
    name: ClassVar[str] = "retry review"
    actors: ClassVar[frozenset[Actor]] = _USER
    seats: tuple[str, ...] = ()


@dataclass(frozen=True)
class Accept(Command):
    """Review decision: accept a complete, passing review (every seat answered, verdict pass); the plan is done."""

    verb: ClassVar[str] = "accept"
    name: ClassVar[str] = "accept"
    actors: ClassVar[frozenset[Actor]] = _USER


@dataclass(frozen=True)
class AcceptPartial(Command):
    """Review decision, confirmed: accept a passing review although a seat errored (an incomplete review)."""

    verb: ClassVar[str] = "accept with an incomplete review"
    name: ClassVar[str] = "accept partial"
    actors: ClassVar[frozenset[Actor]] = _USER
    reason: str = ""


@dataclass(frozen=True)
class AcceptOverride(Command):
    """Review decision, confirmed: accept over a failed or conditional review."""

    verb: ClassVar[str] = "accept over the review of"
    name: ClassVar[str] = "accept override"
    actors: ClassVar[frozenset[Actor]] = _USER
    reason: str = ""


@dataclass(frozen=True)
class Rework(Command):
    """Review decision: the findings go back to the Developer."""

    verb: ClassVar[str] = "rework"
    name: ClassVar[str] = "rework"
    actors: ClassVar[frozenset[Actor]] = _USER
    feedback: str = ""


@dataclass(frozen=True)
class Redesign(Command):
    """Review or doom-loop decision: back to the Architect with the findings (a plan revision)."""

    verb: ClassVar[str] = "redesign"
    name: ClassVar[str] = "redesign"
    actors: ClassVar[frozenset[Actor]] = _USER
    feedback: str = ""


@dataclass(frozen=True)
class ContinueAfterEscalation(Command):
    """Doom-loop decision: the Developer keeps going (rework); the failure count starts again."""

    verb: ClassVar[str] = "continue"
    name: ClassVar[str] = "continue"
    actors: ClassVar[frozenset[Actor]] = _USER
    feedback: str = ""


@dataclass(frozen=True)
class Abandon(Command):
    """Give the plan up, from any phase that is not terminal."""

    verb: ClassVar[str] = "abandon"
    name: ClassVar[str] = "abandon"
    actors: ClassVar[frozenset[Actor]] = _USER
    reason: str = ""


@dataclass(frozen=True)
class MergeConflicted(Command):
    """A done plan's branch no longer merges into its base (another plan landed first): the user decides.

    ``base`` is the branch it was to merge into, ``files`` the paths both sides changed.
    """

    verb: ClassVar[str] = "report a merge conflict on"
    name: ClassVar[str] = "merge conflict"
    actors: ClassVar[frozenset[Actor]] = _ANYONE  # the outcome of the user's own merge: recorded as theirs
    base: str = ""
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResolveConflict(Command):
    """Merge conflict: the Developer merges the base into the plan's branch and resolves it (the plan goes
    back to rework; tests and review run again on the result)."""

    verb: ClassVar[str] = "resolve the merge conflict of"
    name: ClassVar[str] = "resolve conflict"
    actors: ClassVar[frozenset[Actor]] = _USER
    feedback: str = ""


@dataclass(frozen=True)
class ConflictUnresolved(Command):
    """The Developer's resolve turn left conflicts (markers, unmerged paths, the merge undone or the turn
    failed): the plan stops at a decision naming ``files``."""

    verb: ClassVar[str] = "report an unresolved conflict on"
    name: ClassVar[str] = "conflict unresolved"
    actors: ClassVar[frozenset[Actor]] = _MACHINE
    files: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class LeaveConflict(Command):
    """Merge conflict, or a conflict the Developer did not resolve: leave the plan done and unmerged, its
    branch as it was reviewed."""

    verb: ClassVar[str] = "leave the merge conflict of"
    name: ClassVar[str] = "leave conflict"
    actors: ClassVar[frozenset[Actor]] = _USER


@dataclass(frozen=True)
class MarkerRejected(Command):
    """A marker from a role that may not emit it (or out of place): recorded, changes nothing."""

    verb: ClassVar[str] = "record a rejected marker on"
    name: ClassVar[str] = "marker rejected"
    actors: ClassVar[frozenset[Actor]] = _ANYONE
    kind: str = ""
    role: str = ""
    excerpt: str = ""
    reason: str = ""


ALL_COMMANDS: tuple[type[Command], ...] = (
    ProposalReceived,
    Approve,
    EditProposal,
    RequestRevision,
    Hold,
    Resume,
    SubtaskReported,
    ImplementationReported,
    DevStalled,
    ContinueDev,
    MarkComplete,
    SetupFailed,
    RetrySetup,
    SkipSetup,
    ReviewStarted,
    ReviewFinished,
    RetryReview,
    Accept,
    AcceptPartial,
    AcceptOverride,
    Rework,
    Redesign,
    ContinueAfterEscalation,
    Abandon,
    MergeConflicted,
    ResolveConflict,
    ConflictUnresolved,
    LeaveConflict,
    MarkerRejected,
)
