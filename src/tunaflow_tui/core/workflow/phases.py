"""The phases a plan moves through, the decisions it can wait on, and who may act (spec §3)."""

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
