"""The workflow's vocabulary (spec §3): phases, the questions a plan stops at, what waits, who acts.

- :class:`Phase`: where a plan is.
- :class:`PendingDecision`: the question a plan stopped at, stored with the plan (its ``pending_decision``).
- :class:`Waiting`: what a plan waits on as the user sees it — a stored question, or a way on that
  is derived (a held plan, a review to start, an interrupted step, a branch to merge).
- :class:`Actor`: who caused a transition.

The user's answers are :class:`~tunaflow_tui.core.workflow.decisions.Decision`.
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
        """True for ``done`` and ``abandoned``: nothing moves a plan out of them."""
        return self in (Phase.DONE, Phase.ABANDONED)


class PendingDecision(StrEnum):
    """A gate a plan stopped at, waiting for the user (stored as the plan's ``pending_decision``)."""

    APPROVAL = "approval"  # approve / edit / request revision / hold
    REVIEW = "review"  # accept (of its kind) / rework / redesign (retry seats when some errored)
    DOOM_LOOP = "doom_loop"  # redesign / continue
    DEV_STALLED = "dev_stalled"  # continue / mark complete / abandon
    REVIEW_ERROR = "review_error"  # retry seats / abandon
    SETUP_FAILED = "setup_failed"  # the worktree setup failed: retry / skip (the app can open a shell)

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
}


class Waiting(StrEnum):
    """What a plan waits on, as the user sees it (a superset of :class:`PendingDecision`, same values)."""

    APPROVAL = "approval"
    REVIEW = "review"
    REVIEW_ERROR = "review_error"
    DOOM_LOOP = "doom_loop"
    DEV_STALLED = "dev_stalled"
    SETUP_FAILED = "setup_failed"
    START_REVIEW = "start_review"  # in review, no round running and none pending (automatic review off)
    INTERRUPTED = "interrupted"  # an agent step stopped (crash, cancel) and nothing runs it now
    REVISION = "revision"  # in drafting, the Architect answered without the revised proposal
    MERGE = "merge"  # done; its branch is not merged yet
    WORKING = "working"  # an agent is at work on it: nothing for the user to do now
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
