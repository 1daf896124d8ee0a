"""How the record reads: plain sentences for the plan events a person must be able to trust.

Accepting a complete pass, accepting over a failed review, accepting an incomplete review and
abandoning are different acts; the timeline, ``tunaflow status`` and ``tunaflow export`` all say
which one happened, with the same words, from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from tunaflow_tui.core.workflow.phases import PlanEventType

ACCEPTED = PlanEventType.ACCEPTED
ACCEPTED_OVER_FAILED = PlanEventType.ACCEPTED_OVER_FAILED_REVIEW
ACCEPTED_PARTIAL = PlanEventType.ACCEPTED_PARTIAL_REVIEW
ABANDONED = PlanEventType.ABANDONED
PLAN_EDITED = PlanEventType.PLAN_EDITED
SETTLING_EVENTS = frozenset({ACCEPTED, ACCEPTED_OVER_FAILED, ACCEPTED_PARTIAL, ABANDONED})
"""The events that end a plan: what ``status`` and ``export`` give as its outcome."""


class _Event(Protocol):
    @property
    def type(self) -> str: ...

    @property
    def detail(self) -> Mapping[str, object]: ...


def _with_reason(text: str, detail: Mapping[str, object]) -> str:
    reason = " ".join(str(detail.get("reason") or "").split())
    return f"{text}: {reason}" if reason else text


def _seats(detail: Mapping[str, object]) -> str:
    answered, seats = detail.get("answered"), detail.get("seats")
    if isinstance(answered, int) and isinstance(seats, int):
        return f"{answered} of {seats} seat{'' if seats == 1 else 's'}"
    return "some seats errored"


def event_text(kind: str, detail: Mapping[str, object]) -> str | None:
    """The sentence for an event of type ``kind``, or None for events without one of their own."""
    if kind == ACCEPTED:
        return "accepted a complete, passing review"
    if kind == ACCEPTED_OVER_FAILED:
        verdict = detail.get("verdict")
        text = "accepted over a failed review" + (f" (verdict {verdict})" if verdict and verdict != "fail" else "")
        return _with_reason(text, detail)
    if kind == ACCEPTED_PARTIAL:
        return _with_reason(f"accepted with an incomplete review ({_seats(detail)})", detail)
    if kind == ABANDONED:
        return _with_reason("abandoned", detail)
    if kind == PLAN_EDITED:
        changes = detail.get("changes")
        listed = [str(c) for c in changes] if isinstance(changes, Sequence) and not isinstance(changes, str) else []
        return "edited by you: " + ("; ".join(listed) if listed else "the proposal changed")
    return None


@dataclass(frozen=True)
class PlanOutcome:
    """How a plan ended: the settling event's type and its sentence."""

    kind: str
    text: str
    reason: str


def plan_outcome(events: Iterable[_Event]) -> PlanOutcome | None:
    """The latest settling event of a plan (events oldest first), or None while it has not ended."""
    found: PlanOutcome | None = None
    for event in events:
        if event.type in SETTLING_EVENTS:
            text = event_text(event.type, event.detail) or event.type
            found = PlanOutcome(event.type, text, str(event.detail.get("reason") or ""))
    return found
