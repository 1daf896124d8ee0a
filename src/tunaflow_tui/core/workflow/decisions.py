"""The user's decisions on a plan: one vocabulary from a key binding to a state-machine command.

A card's binding names a :class:`Decision`; the runtime applies it; the state machine receives the
command the decision stands for. Nothing between them translates the words again.
"""

from __future__ import annotations

from enum import StrEnum


class Decision(StrEnum):
    """Something the user decides about a plan (the answer to a :class:`PendingDecision`)."""

    APPROVE = "approve"
    REVISE = "revise"
    HOLD = "hold"
    RESUME = "resume"
    ACCEPT = "accept"
    REWORK = "rework"
    REDESIGN = "redesign"
    RETRY = "retry"
    CONTINUE = "continue"
    COMPLETE = "complete"
    ABANDON = "abandon"
    RETRY_SETUP = "retry_setup"
    SKIP_SETUP = "skip_setup"

    @property
    def label(self) -> str:
        """How the decision reads on a button, in the palette and in the footer."""
        return _LABELS[self]


_LABELS: dict[Decision, str] = {
    Decision.APPROVE: "Approve plan",
    Decision.REVISE: "Request revision",
    Decision.HOLD: "Hold",
    Decision.RESUME: "Resume",
    Decision.ACCEPT: "Accept",
    Decision.REWORK: "Rework",
    Decision.REDESIGN: "Redesign",
    Decision.RETRY: "Retry seat",
    Decision.CONTINUE: "Continue",
    Decision.COMPLETE: "Mark complete",
    Decision.ABANDON: "Abandon",
    Decision.RETRY_SETUP: "Retry worktree setup",
    Decision.SKIP_SETUP: "Skip worktree setup",
}
