"""The plain data a plan document is rendered from (independent of how plans are stored)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PlanSubtask:
    """One subtask: 1-based ``index``, a title, free-form details and a status (``done`` ticks it)."""

    index: int
    title: str
    details: str = ""
    status: str = "pending"


@dataclass(frozen=True)
class PlanDocument:
    """Everything ``docs/plans/{slug}.md`` and its task files show."""

    title: str
    slug: str
    description: str = ""
    expected_outcome: str = ""
    constraints: tuple[str, ...] = ()
    non_goals: tuple[str, ...] = ()
    subtasks: tuple[PlanSubtask, ...] = ()
    revision: int = 1
