"""The plan workflow (spec §3): phases, commands, the pure state machine and verdict aggregation.

The database-backed :class:`~tunaflow_tui.core.workflow.service.WorkflowService` lives in
``core.workflow.service`` and is not re-exported here, so the pure machine can be used without storage.

The names below load their module on first use: ``from tunaflow_tui.core.workflow.decisions import
Decision`` (the app's palette, before the first frame) does not pay for the commands, the machine
and the marker modules they read proposals with.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tunaflow_tui.core.workflow.commands import (
        ALL_COMMANDS,
        Abandon,
        Accept,
        AcceptOverride,
        AcceptPartial,
        Approve,
        Command,
        ContinueAfterEscalation,
        ContinueDev,
        DevStalled,
        EditProposal,
        Hold,
        ImplementationReported,
        MarkComplete,
        MarkerRejected,
        ProposalReceived,
        Redesign,
        RequestRevision,
        Resume,
        RetryReview,
        RetrySetup,
        ReviewFinished,
        ReviewStarted,
        Rework,
        SetupFailed,
        SkipSetup,
        SubtaskReported,
    )
    from tunaflow_tui.core.workflow.decisions import Decision
    from tunaflow_tui.core.workflow.machine import (
        DEFAULT_DOOM_THRESHOLD,
        EventSpec,
        IllegalTransition,
        Outcome,
        PlanState,
        allowed_commands,
        allowed_names,
        failures_since_reset,
        transition,
        unheld,
    )
    from tunaflow_tui.core.workflow.phases import Actor, PendingDecision, Phase, PlanEventType, Waiting
    from tunaflow_tui.core.workflow.verdicts import (
        AggregateVerdict,
        ReviewStanding,
        ScoreSummary,
        SeatResult,
        Verdict,
        aggregate,
    )
    from tunaflow_tui.core.workflow.ways import PlanContext, WayOn, decision_command, open_step, ways_on

_SOURCES: dict[str, str] = {
    "ALL_COMMANDS": "commands",
    "Abandon": "commands",
    "Accept": "commands",
    "AcceptOverride": "commands",
    "AcceptPartial": "commands",
    "Actor": "phases",
    "AggregateVerdict": "verdicts",
    "Approve": "commands",
    "Command": "commands",
    "ContinueAfterEscalation": "commands",
    "ContinueDev": "commands",
    "DEFAULT_DOOM_THRESHOLD": "machine",
    "Decision": "decisions",
    "DevStalled": "commands",
    "EditProposal": "commands",
    "EventSpec": "machine",
    "Hold": "commands",
    "IllegalTransition": "machine",
    "ImplementationReported": "commands",
    "MarkComplete": "commands",
    "MarkerRejected": "commands",
    "Outcome": "machine",
    "PendingDecision": "phases",
    "Phase": "phases",
    "PlanContext": "ways",
    "PlanEventType": "phases",
    "PlanState": "machine",
    "ProposalReceived": "commands",
    "Redesign": "commands",
    "RequestRevision": "commands",
    "Resume": "commands",
    "RetryReview": "commands",
    "RetrySetup": "commands",
    "ReviewFinished": "commands",
    "ReviewStanding": "verdicts",
    "ReviewStarted": "commands",
    "Rework": "commands",
    "ScoreSummary": "verdicts",
    "SeatResult": "verdicts",
    "SetupFailed": "commands",
    "SkipSetup": "commands",
    "SubtaskReported": "commands",
    "Verdict": "verdicts",
    "Waiting": "phases",
    "WayOn": "ways",
    "aggregate": "verdicts",
    "allowed_commands": "machine",
    "allowed_names": "machine",
    "decision_command": "ways",
    "failures_since_reset": "machine",
    "open_step": "ways",
    "transition": "machine",
    "unheld": "machine",
    "ways_on": "ways",
}



def __getattr__(name: str) -> Any:
    """Load a re-exported name from its module on first use."""
    module = _SOURCES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_SOURCES])


__all__ = [
    "ALL_COMMANDS",
    "DEFAULT_DOOM_THRESHOLD",
    "Abandon",
    "Accept",
    "AcceptOverride",
    "AcceptPartial",
    "Actor",
    "AggregateVerdict",
    "Approve",
    "Command",
    "ContinueAfterEscalation",
    "ContinueDev",
    "Decision",
    "DevStalled",
    "EditProposal",
    "EventSpec",
    "Hold",
    "IllegalTransition",
    "ImplementationReported",
    "MarkComplete",
    "MarkerRejected",
    "Outcome",
    "PendingDecision",
    "Phase",
    "PlanContext",
    "PlanEventType",
    "PlanState",
    "ProposalReceived",
    "Redesign",
    "RequestRevision",
    "Resume",
    "RetryReview",
    "RetrySetup",
    "ReviewFinished",
    "ReviewStanding",
    "ReviewStarted",
    "Rework",
    "ScoreSummary",
    "SeatResult",
    "SetupFailed",
    "SkipSetup",
    "SubtaskReported",
    "Verdict",
    "Waiting",
    "WayOn",
    "aggregate",
    "allowed_commands",
    "allowed_names",
    "decision_command",
    "failures_since_reset",
    "open_step",
    "transition",
    "unheld",
    "ways_on",
]
