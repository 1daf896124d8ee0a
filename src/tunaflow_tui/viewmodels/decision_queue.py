"""The decision queue as the dock shows it: which plans wait for the user, in the order f2 walks them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QueuedDecision:
    """One plan waiting for the user; ``held``: put aside by the user (it waits after the others)."""

    plan_id: int
    held: bool = False
