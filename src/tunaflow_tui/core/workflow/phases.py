"""The workflow's vocabulary (spec §3): the phases a plan moves through, the decisions it can wait
on, who may act, and the events its history records."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """Where a plan is in the Chat → Drafting → Approval → Dev → Review → Rework → Done process."""

    CHAT = "chat"
    DRAFTING = "drafting"
    APPROVAL = "approval"
    DEV = "dev"
    REVIEW = "review"
    REWORK = "rework"
    DONE = "done"
    HELD = "held"
    ESCALATED = "escalated"
    ABANDONED = "abandoned"

    @property
    def is_terminal(self) -> bool:
        """True for ``done`` and ``abandoned``: nothing moves a plan out of them."""
        return self in (Phase.DONE, Phase.ABANDONED)


class PendingDecision(StrEnum):
    """A question waiting for the user on a plan."""

    APPROVAL = "approval"  # approve / request revision / hold
    REVIEW = "review"  # accept / rework / redesign (retry seats when some errored)
    DOOM_LOOP = "doom_loop"  # redesign / continue
    DEV_STALLED = "dev_stalled"  # continue / mark complete / abandon
    REVIEW_ERROR = "review_error"  # retry seats / abandon
    SETUP_FAILED = "setup_failed"  # the worktree setup failed: retry / skip (the app can open a shell)

    @property
    def question(self) -> str:
        """How the decision reads in a list of things waiting for the user."""
        return _QUESTIONS[self]


_QUESTIONS: dict[PendingDecision, str] = {
    PendingDecision.APPROVAL: "approve",
    PendingDecision.REVIEW: "review verdict",
    PendingDecision.DOOM_LOOP: "repeated review failures",
    PendingDecision.DEV_STALLED: "developer stalled",
    PendingDecision.REVIEW_ERROR: "review error",
    PendingDecision.SETUP_FAILED: "worktree setup failed",
}


class Actor(StrEnum):
    """Who caused a transition; gate decisions must come from the user."""

    USER = "user"
    AGENT = "agent"
    SYSTEM = "system"


class PlanEventType(StrEnum):
    """Every kind of row a plan's history holds; the store refuses any other.

    Transitions are written by the state machine; the rest are occurrences the runtime records
    around them (an agent starting, the tests running, a merge).
    """

    # transitions (core.workflow.machine)
    PROPOSAL_RECEIVED = "proposal_received"
    APPROVED = "approved"
    DEV_STARTED = "dev_started"
    REVISION_REQUESTED = "revision_requested"
    HELD = "held"
    RESUMED = "resumed"
    SUBTASK_DONE = "subtask_done"
    IMPL_COMPLETE = "impl_complete"
    DEV_STALLED = "dev_stalled"
    DEV_CONTINUED = "dev_continued"
    REVIEW_STARTED = "review_started"
    REVIEW_FINISHED = "review_finished"
    REVIEW_ERROR = "review_error"
    REVIEW_FAILED = "review_failed"
    REVIEW_RETRY_REQUESTED = "review_retry_requested"
    ACCEPTED = "accepted"
    REWORK_REQUESTED = "rework_requested"
    REDESIGN_REQUESTED = "redesign_requested"
    DOOM_LOOP_ESCALATED = "doom_loop_escalated"
    ABANDONED = "abandoned"
    MARKER_REJECTED = "marker_rejected"
    SETUP_FAILED = "setup_failed"
    SETUP_RETRY_REQUESTED = "setup_retry_requested"
    SETUP_SKIPPED = "setup_skipped"
    # occurrences (runtime)
    AGENT_STARTED = "agent_started"
    AGENT_FINISHED = "agent_finished"
    TESTS_RAN = "tests_ran"
    TEST_BYPRODUCTS_REMOVED = "test_byproducts_removed"
    SEAT_FINISHED = "seat_finished"
    REVIEWER_MODIFIED_CODE = "reviewer_modified_code"
    COMMIT_FAILED = "commit_failed"
    MERGED = "merged"
    MERGE_CONFLICT = "merge_conflict"
    WORKTREE_REMOVED = "worktree_removed"
    WORKTREE_CREATED = "worktree_created"
    WORKTREE_READY = "worktree_ready"
    WORKTREE_INCLUDED = "worktree_included"
    SETUP_STARTED = "setup_started"
    SETUP_FINISHED = "setup_finished"
    PRIVATE_FILES_COMMITTED = "private_files_committed"
