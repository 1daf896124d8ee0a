"""The marker protocol: find plan proposals, subtask completions, review verdicts and consensus
blocks in an agent's reply, scoped by the role that wrote it. Never imports textual or rich."""

from tunaflow_tui.core.markers.marker_model import (
    Consensus,
    ImplComplete,
    Marker,
    MarkerKind,
    ParseResult,
    PlanProposal,
    ReviewVerdict,
    Scores,
    Subtask,
    SubtaskDone,
    VerdictValue,
)
from tunaflow_tui.core.markers.parser import parse_markers
from tunaflow_tui.core.markers.roles import ROLE_PERMISSIONS, ROLES, may_emit
from tunaflow_tui.core.markers.scanner import scrub_markers
from tunaflow_tui.core.markers.stream import MarkerStream
from tunaflow_tui.core.markers.summary import MarkerSummary, summarize

__all__ = [
    "ROLES",
    "ROLE_PERMISSIONS",
    "Consensus",
    "ImplComplete",
    "Marker",
    "MarkerKind",
    "MarkerStream",
    "MarkerSummary",
    "ParseResult",
    "PlanProposal",
    "ReviewVerdict",
    "Scores",
    "Subtask",
    "SubtaskDone",
    "VerdictValue",
    "may_emit",
    "parse_markers",
    "scrub_markers",
    "summarize",
]
