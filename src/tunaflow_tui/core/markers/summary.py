"""A marker as one line a reader can take in at a glance, kept with the message that carried it."""

from __future__ import annotations

from dataclasses import dataclass

from tunaflow_tui.core.markers.marker_model import (
    Consensus,
    ImplComplete,
    Marker,
    MarkerKind,
    PlanProposal,
    ReviewVerdict,
    SubtaskDone,
)


@dataclass(frozen=True, slots=True)
class MarkerSummary:
    """One marker of a finished message: its kind, whether the writer's role may emit it, and a line.

    ``text`` may quote the agent (a proposal's title): it is untrusted and must be neutralised
    before it reaches a terminal, like the message itself.
    """

    kind: MarkerKind
    accepted: bool
    text: str


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def summarize(marker: Marker) -> MarkerSummary:
    """The summary line of ``marker``, e.g. ``Plan proposal: Add login · 3 subtasks``."""
    if isinstance(marker, PlanProposal):
        subtasks = _count(len(marker.subtasks), "subtask") if marker.subtasks else "no subtasks"
        text = f"Plan proposal: {marker.title or 'untitled'} · {subtasks}"
    elif isinstance(marker, SubtaskDone):
        text = f"Subtask {marker.index} done"
    elif isinstance(marker, ImplComplete):
        text = "Implementation complete"
    elif isinstance(marker, ReviewVerdict):
        text = f"Review verdict: {marker.verdict}"
        if marker.failed_subtasks:
            text += " · failed subtasks " + ", ".join(str(n) for n in marker.failed_subtasks)
    elif isinstance(marker, Consensus):
        text = (f"Consensus: {_count(len(marker.consensus), 'point')} agreed · {len(marker.contested)} contested"
                f" · {len(marker.dissent)} dissenting")
    else:
        text = marker.kind
    return MarkerSummary(marker.kind, marker.accepted, text)
