"""What the runtime reports while it works; the terminal app and ``tunaflow run`` subscribe to these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tunaflow_tui.core.turns import ToolLine


@dataclass(frozen=True, slots=True)
class MessageStarted:
    """An agent started answering into a conversation."""

    conversation_id: str
    message_id: int
    role: str
    engine: str
    model: str


@dataclass(frozen=True, slots=True)
class MessageDelta:
    """Display-safe text appended to a streaming message (markers never appear here)."""

    conversation_id: str
    message_id: int
    text: str


@dataclass(frozen=True, slots=True)
class ToolActivity:
    """The agent used a tool."""

    conversation_id: str
    message_id: int
    tool: ToolLine
    status: str


@dataclass(frozen=True, slots=True)
class NoticeRaised:
    """Something worth showing that does not end anything (retry, permission denial, warning)."""

    text: str
    level: str = "info"
    conversation_id: str | None = None
    message_id: int | None = None


@dataclass(frozen=True, slots=True)
class MessageFinished:
    """A message reached its final status (done, error, interrupted)."""

    conversation_id: str
    message_id: int
    status: str
    error_kind: str | None = None
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class MessageAdded:
    """A complete message was stored (a user message, a system note)."""

    conversation_id: str
    message_id: int
    role: str


@dataclass(frozen=True, slots=True)
class PlanChanged:
    """A plan moved (phase, subtasks, pending decision)."""

    plan_id: int
    phase: str
    pending_decision: str | None


@dataclass(frozen=True, slots=True)
class Progress:
    """A one-line description of what the runtime is doing now."""

    text: str


@dataclass(frozen=True, slots=True)
class ProjectTestsRunning:
    """The project's tests started (``running``) or ended for a plan, before its reviewers read the work."""

    plan_id: int
    command: str
    running: bool


RuntimeEvent = (
    MessageStarted | MessageDelta | ToolActivity | NoticeRaised | MessageFinished | MessageAdded | PlanChanged
    | Progress | ProjectTestsRunning
)
Observer = Callable[[RuntimeEvent], None]
