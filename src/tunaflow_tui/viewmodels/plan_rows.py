"""Plain, immutable views of plans, proposals, verdicts and branches for the UI.

The controller builds these from storage rows; widgets only ever see these objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Branch kinds that belong to a plan: its implementation and its review (spec §3).
PLAN_BRANCH_KINDS = frozenset({"implementation", "review"})

# Subtask statuses.
SUBTASK_DONE = "done"
SUBTASK_PENDING = "pending"
SUBTASK_FAILED = "failed"


@dataclass(frozen=True)
class SubtaskView:
    """One subtask of a plan (1-based index)."""

    index: int
    title: str
    details: str = ""
    status: str = SUBTASK_PENDING


@dataclass(frozen=True)
class ProposalView:
    """A plan proposal awaiting (or past) the approval gate."""

    plan_id: int | None
    message_id: int
    title: str
    subtasks: tuple[SubtaskView, ...] = ()
    description: str = ""
    expected_outcome: str | None = None
    constraints: tuple[str, ...] = ()
    non_goals: tuple[str, ...] = ()
    revision: int = 1
    decision: str | None = None


@dataclass(frozen=True)
class SeatView:
    """One reviewer seat's result (Reviewer or Verifier)."""

    seat: str
    engine: str
    verdict: str | None = None
    scores: tuple[tuple[str, int], ...] = ()
    findings: tuple[str, ...] = ()
    recommendations: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class VerdictView:
    """The aggregate review verdict for one review round."""

    plan_id: int
    round_no: int
    verdict: str | None
    seats: tuple[SeatView, ...] = ()
    findings: tuple[str, ...] = ()
    recommendations: tuple[str, ...] = ()
    scores: tuple[tuple[str, float, float], ...] = ()
    test_summary: str = ""
    test_status: str = ""
    test_environment: str = ""
    reviewer_modified: tuple[str, ...] = ()
    decision: str | None = None
    decisions: tuple[str, ...] | None = None
    """The decisions available now (from the plan's way on); None: the verdict alone decides."""
    confirm: tuple[str, ...] = ()
    """Decisions that ask for an explicit confirmation first (accepting over a review, abandoning)."""
    answered: str = ""
    """``1 of 2 seats`` when a seat gave no verdict (empty for a complete review)."""
    held: bool = False
    title: str = ""
    """The plan's title (inert text): with several plans waiting, the card says which one it decides."""

    @property
    def has_errored_seat(self) -> bool:
        """True when at least one seat produced a review error."""
        return any(seat.error for seat in self.seats)


@dataclass(frozen=True)
class FailureView:
    """One failed review round, for the doom-loop history."""

    round_no: int
    verdict: str
    findings: tuple[str, ...] = ()


@dataclass(frozen=True)
class EventView:
    """One entry of a plan's event timeline (time is preformatted text)."""

    time: str
    type: str
    actor: str
    text: str = ""


@dataclass(frozen=True)
class PlanSummaryView:
    """Everything the Workflow view shows about one plan."""

    plan_id: int
    title: str
    slug: str
    phase: str
    subtasks: tuple[SubtaskView, ...] = ()
    pending: str | None = None
    failures: int = 0
    events: tuple[EventView, ...] = ()
    documents: tuple[tuple[str, str], ...] = ()
    usage_text: str = ""
    column: str = ""
    """The board's group it stands in (``viewmodels.board``); empty: derived from the phase."""
    waiting: str = ""
    """What it waits on (a ``Waiting`` value: ``interrupted``, ``start_review``, ``merge``…); empty: unknown."""
    working: bool = False
    """An agent works on it now, in this process or another one."""
    review_round: int = 0
    cost: str = ""
    """What it cost so far, short: ``$0.42``, or ``12.4k tok`` where no price is known; empty: nothing yet."""
    tests: str = ""
    """The last test run, in a sentence (``tests passed: 12 passed in 0.3s``); empty: none ran."""
    verdict: str = ""
    """The last review verdict (``review round 1: pass``); empty: not reviewed yet."""
    findings: tuple[str, ...] = ()
    """The last review's findings."""


@dataclass(frozen=True)
class BranchView:
    """A branch as shown in the branch pane header and the sidebar."""

    id: int
    label: str
    kind: str = "general"
    mode: str = "chat"
    status: str = "active"
    context: str = ""
    """How a user's branch knows its parent: ``native fork`` or ``inherited context`` (empty: not known)."""
    git_branch: str = ""
    engine: str = ""
    live: bool = False
    """An agent is writing in the branch right now."""

    @property
    def read_only(self) -> bool:
        """Adopted and archived branches take no message until restored."""
        return self.status != "active"

    @property
    def details(self) -> str:
        """``active · demo · git main`` and ``context: native fork`` (two lines) for a user's branch; the
        plan's words for a plan's."""
        if self.kind != "general" or self.mode != "chat":
            return f"{self.description} · {self.status}"
        parts = [self.status, self.engine, f"git {self.git_branch}" if self.git_branch else ""]
        line = " · ".join(part for part in parts if part)
        return f"{line}\ncontext: {self.context}" if self.context else line

    @property
    def description(self) -> str:
        """What the branch is: ``review · plan branch`` for a plan's branches, else ``kind · mode``.

        A plan's review runs in a branch with mode ``roundtable``; it is still the plan's review
        branch, not a roundtable the user convened.
        """
        if self.kind in PLAN_BRANCH_KINDS:
            return f"{self.kind} · plan branch"
        return f"{self.kind} · {self.mode}"


@dataclass(frozen=True)
class SidebarItem:
    """One selectable row in a sidebar section."""

    kind: str
    id: int | str
    label: str
    badge: str = ""
    detail: str = ""
    """A dim note after the label (a branch's git branch)."""
    live: bool = False
    """Something runs in it now (an agent writing in a branch, working on a plan): marked in the tree."""
    waiting: bool = False
    """A plan waits for the user's decision: marked in the tree."""
    children: tuple[SidebarItem, ...] = ()
    """Items nested under this one (branches forked from a branch)."""


@dataclass(frozen=True)
class SidebarSections:
    """The sidebar's content: one tuple of items per section."""

    conversations: tuple[SidebarItem, ...] = ()
    branches: tuple[SidebarItem, ...] = ()
    roundtables: tuple[SidebarItem, ...] = ()
    archive: tuple[SidebarItem, ...] = ()
    plans: tuple[SidebarItem, ...] = field(default=())


@dataclass(frozen=True)
class DoneView:
    """A finished plan and what is left to do with its branch."""

    plan_id: int
    title: str
    git_branch: str | None = None
    base_branch: str | None = None
    has_worktree: bool = False
    merged: str | None = None
    """The merge outcome once merged (e.g. ``fast-forward``)."""
    outcome: str = ""
    """How the plan ended when that was not a complete, passing review (``accepted over a failed review``)."""


@dataclass(frozen=True)
class WayView:
    """A plan waiting for the user without a proposal or verdict to show: a review to start, a step to
    resume, a held question. ``decisions`` are the ways on (the first is the main one)."""

    plan_id: int
    title: str
    summary: str
    decisions: tuple[str, ...] = ()
    confirm: tuple[str, ...] = ()
    held: bool = False
    decision: str | None = None
    files: tuple[str, ...] = ()
    """The files in conflict, for a merge-conflict card (as the plan's conflict event recorded them)."""
