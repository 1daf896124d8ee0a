"""The decision queue as the dock shows it: what waits for the user — plans' decisions and agents' permission
questions — in the order f2 walks it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QueuedDecision:
    """One plan waiting for the user (``held``: put aside by the user, it waits after the others), or an agent's
    open permission question (``question``: its request id; ``plan_id`` is then None)."""

    plan_id: int | None
    held: bool = False
    question: int | None = None
    asker: str = ""
    """The role of the agent that asks the question (``Architect``)."""

    @property
    def name(self) -> str:
        """How the dock names it: ``Plan 2``, ``Plan 3 (held)``, ``the Developer's question``."""
        if self.question is not None:
            return f"the {self.asker}'s question" if self.asker else "an agent's question"
        return f"Plan {self.plan_id}{' (held)' if self.held else ''}"
