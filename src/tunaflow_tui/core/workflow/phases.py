"""The workflow's vocabulary (spec §3): phases, the questions a plan stops at, what waits, who acts.

- :class:`Phase`: where a plan is.
- :class:`PendingDecision`: the question a plan stopped at, stored with the plan (its ``pending_decision``).
- :class:`Waiting`: what a plan waits on as the user sees it — a stored question, or a way on that
  is derived (a held plan, a review to start, an interrupted step, a branch to merge).
- :class:`Actor`: who caused a transition.
- :class:`PlanEventType`: the events a plan's history records.

The user's answers are :class:`~tunaflow_tui.core.workflow.decision_words.Decision`.
"""

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
        """True for ``done`` and ``abandoned``: no step runs on them, and the only way out is the user's
        answer to a done plan's merge conflict (resolve it with the Developer)."""
        return self in (Phase.DONE, Phase.ABANDONED)


class PendingDecision(StrEnum):
    """A gate a plan stopped at, waiting for the user (stored as the plan's ``pending_decision``)."""

    APPROVAL = "approval"  # approve / edit / request revision / hold
    REVIEW = "review"  # accept (of its kind) / rework / redesign (retry seats when some errored)
    DOOM_LOOP = "doom_loop"  # redesign / continue
    DEV_STALLED = "dev_stalled"  # continue / mark complete / abandon
    REVIEW_ERROR = "review_error"  # retry seats / abandon
    SETUP_FAILED = "setup_failed"  # the worktree setup failed: retry / skip (the app can open a shell)
    MERGE_CONFLICT = "merge_conflict"  # a done plan no longer merges cleanly: resolve with the Developer / leave it
    CONFLICT_UNRESOLVED = "conflict_unresolved"  # the Developer's resolve turn left conflicts: again / leave it

    @property
    def question(self) -> str:
        """How the question reads in a list of things waiting for the user."""
        return _QUESTIONS[self]


_QUESTIONS: dict[PendingDecision, str] = {
    PendingDecision.APPROVAL: "approve",
    PendingDecision.REVIEW: "review verdict",
    PendingDecision.DOOM_LOOP: "repeated review failures",
    PendingDecision.DEV_STALLED: "developer stalled",
    PendingDecision.REVIEW_ERROR: "review error",
    PendingDecision.SETUP_FAILED: "worktree setup failed",
    PendingDecision.MERGE_CONFLICT: "merge conflict",
    PendingDecision.CONFLICT_UNRESOLVED: "conflict not resolved",
}


class Waiting(StrEnum):
    """What a plan waits on, as the user sees it (a superset of :class:`PendingDecision`, same values)."""

    APPROVAL = "approval"
    REVIEW = "review"
    REVIEW_ERROR = "review_error"
    DOOM_LOOP = "doom_loop"
    DEV_STALLED = "dev_stalled"
    SETUP_FAILED = "setup_failed"
    MERGE_CONFLICT = "merge_conflict"
    CONFLICT_UNRESOLVED = "conflict_unresolved"
    START_REVIEW = "start_review"  # in review, no round running and none pending (automatic review off)
    INTERRUPTED = "interrupted"  # an agent step stopped (crash, cancel) and nothing runs it now
    REVISION = "revision"  # in drafting, the Architect answered without the revised proposal
    MERGE = "merge"  # done; its branch is not merged yet
    HELD = "held"  # held while it waited in the queue for a slot (no question): resuming queues it again
    WORKING = "working"  # an agent is at work on it (or it waits in the queue): nothing for the user to do now
    NOTHING = "nothing"  # done or abandoned with nothing left to do (or only optional clean-up)

    @property
    def asks_the_user(self) -> bool:
        """True when the user is the one the plan waits for (what f2 and ``status`` list)."""
        return self not in (Waiting.WORKING, Waiting.NOTHING, Waiting.MERGE)


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
    ACCEPTED_PARTIAL_REVIEW = "accepted_partial_review"
    ACCEPTED_OVER_FAILED_REVIEW = "accepted_over_failed_review"
    PLAN_EDITED = "plan_edited"
    REWORK_REQUESTED = "rework_requested"
    REDESIGN_REQUESTED = "redesign_requested"
    DOOM_LOOP_ESCALATED = "doom_loop_escalated"
    ABANDONED = "abandoned"
    MARKER_REJECTED = "marker_rejected"
    SETUP_FAILED = "setup_failed"
    SETUP_RETRY_REQUESTED = "setup_retry_requested"
    SETUP_SKIPPED = "setup_skipped"
    MERGE_CONFLICT = "merge_conflict"
    CONFLICT_RESOLUTION_REQUESTED = "conflict_resolution_requested"
    CONFLICT_UNRESOLVED = "conflict_unresolved"
    CONFLICT_LEFT = "conflict_left"
    # occurrences (runtime)
    AGENT_STARTED = "agent_started"
    AGENT_FINISHED = "agent_finished"
    TESTS_RAN = "tests_ran"
    TEST_BYPRODUCTS_REMOVED = "test_byproducts_removed"
    SEAT_FINISHED = "seat_finished"
    REVIEWER_MODIFIED_CODE = "reviewer_modified_code"
    COMMIT_FAILED = "commit_failed"
    MERGED = "merged"
    MERGE_QUEUED = "merge_queued"
    MERGE_UNQUEUED = "merge_unqueued"
    WORKTREE_REMOVED = "worktree_removed"
    WORKTREE_CREATED = "worktree_created"
    WORKTREE_READY = "worktree_ready"
    WORKTREE_INCLUDED = "worktree_included"
    SETUP_STARTED = "setup_started"
    SETUP_FINISHED = "setup_finished"
    PRIVATE_FILES_COMMITTED = "private_files_committed"
    PROPOSAL_REFUSED = "proposal_refused"
    GIT_BASELINE = "git_baseline"
    GIT_INTEGRITY = "git_integrity"
    HOOKS_SKIPPED = "hooks_skipped"
    LEFTOVER_STOPPED = "leftover_stopped"
    RUN_INTERRUPTED = "run_interrupted"
    PLAN_QUEUED = "plan_queued"
    QUEUE_LEFT = "queue_left"
