"""The user's decisions on a plan: one vocabulary from a key binding to a state-machine command.

A card's binding names a :class:`Decision`; the runtime applies it; the state machine receives the
command the decision stands for. Nothing between them translates the words again.
"""

from __future__ import annotations

from enum import StrEnum


class Decision(StrEnum):
    """Something the user decides about a plan (the answer to a :class:`PendingDecision`, or a way on
    that is not a question: start a review, re-run an interrupted step, merge). The values are the
    names ``decide`` and ``tunaflow status --json`` use."""

    APPROVE = "approve"
    EDIT = "edit"  # edit the proposal before approving it
    REVISE = "revise"
    HOLD = "hold"
    RESUME = "resume"  # take a held plan back to its question
    START_REVIEW = "start_review"  # automatic review is off (or nothing started it)
    ACCEPT = "accept"  # only a complete, passing review
    ACCEPT_PARTIAL = "accept_partial"  # a passing review a seat gave no verdict on: confirmed
    ACCEPT_OVERRIDE = "accept_override"  # over a failed or conditional review: confirmed
    REWORK = "rework"
    REDESIGN = "redesign"
    RETRY = "retry"  # run the errored reviewer seats again
    CONTINUE = "continue"  # a stalled Developer carries on; after the doom loop, the Developer continues
    COMPLETE = "complete"
    ABANDON = "abandon"  # confirmed
    RETRY_SETUP = "retry_setup"
    SKIP_SETUP = "skip_setup"
    RESUME_STEP = "resume_step"  # re-run an interrupted agent step, continuing its session
    RETRY_STEP = "retry_step"  # re-run an interrupted (or never started) agent step afresh
    MERGE = "merge"
    REMOVE_WORKTREE = "remove_worktree"
    RESOLVE_CONFLICT = "resolve_conflict"  # the Developer merges the base into the plan's branch and resolves
    LEAVE_CONFLICT = "leave_conflict"  # the plan stays done and unmerged, its branch as reviewed

    @property
    def label(self) -> str:
        """How the decision reads on a button, in the palette and in the footer."""
        return _LABELS[self]


_LABELS: dict[Decision, str] = {
    Decision.APPROVE: "Approve plan",
    Decision.EDIT: "Edit plan",
    Decision.REVISE: "Request revision",
    Decision.HOLD: "Hold",
    Decision.RESUME: "Resume",
    Decision.START_REVIEW: "Start review",
    Decision.ACCEPT: "Accept",
    Decision.ACCEPT_PARTIAL: "Accept with an incomplete review",
    Decision.ACCEPT_OVERRIDE: "Accept over a failed review",
    Decision.REWORK: "Rework",
    Decision.REDESIGN: "Redesign",
    Decision.RETRY: "Retry seat",
    Decision.CONTINUE: "Continue",
    Decision.COMPLETE: "Mark complete",
    Decision.ABANDON: "Abandon",
    Decision.RETRY_SETUP: "Retry worktree setup",
    Decision.SKIP_SETUP: "Skip worktree setup",
    Decision.RESUME_STEP: "Resume interrupted step",
    Decision.RETRY_STEP: "Retry interrupted step",
    Decision.MERGE: "Merge plan",
    Decision.REMOVE_WORKTREE: "Remove plan worktree",
    Decision.RESOLVE_CONFLICT: "Resolve with the Developer",
    Decision.LEAVE_CONFLICT: "Leave it unmerged",
}
