"""What the runtime reports while it works; the terminal app and ``tunaflow run`` subscribe to these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tunaflow_tui.agents.permissions import PermissionAnswer, PermissionRequest
from tunaflow_tui.core.turns import ToolLine, Usage


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
class MessageActivity:
    """What a streaming message is writing now, in words (``drafting a plan… (3 subtasks so far)``),
    while a marker block's contents are held back from the chat; empty: nothing to say."""

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
class UsageReported:
    """What a streaming message's agent reported using so far (tokens, its context window, cost)."""

    conversation_id: str
    message_id: int
    usage: Usage


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
    """A one-line description of what the runtime is doing now (for ``plan_id``, when it is one plan's work)."""

    text: str
    plan_id: int | None = None


@dataclass(frozen=True, slots=True)
class ProjectTestsRunning:
    """The project's tests started (``running``) or ended for a plan, before its reviewers read the work."""

    plan_id: int
    command: str
    running: bool


@dataclass(frozen=True, slots=True)
class MemoryProgress:
    """Background embedding of the project's messages moved on (a backfill shows how far it is).

    ``running`` is False once everything finished is embedded, or when there is no model
    (``unavailable`` says why; search and retrieval then use full text only).
    """

    embedded: int
    total: int
    running: bool
    unavailable: str | None = None

    @property
    def text(self) -> str:
        """One line for a status bar."""
        if self.unavailable is not None:
            return "Memory: full-text search only (no embedding model)."
        if self.running:
            return f"Memory: embedding messages {self.embedded:,}/{self.total:,}…"
        return f"Memory: {self.total:,} messages searchable."


@dataclass(frozen=True, slots=True)
class PermissionAsked:
    """An agent asks before it uses a tool; answer with :meth:`~.permissions.PermissionDesk.answer`."""

    conversation_id: str
    request_id: int
    request: PermissionRequest


@dataclass(frozen=True, slots=True)
class PermissionSettled:
    """A permission question closed: answered, or withdrawn (``answer`` None).

    ``reason`` says why a withdrawn question got no answer: ``timeout`` when the turn's idle (or total)
    timeout ended it, ``cancelled`` otherwise (the turn was cancelled, or its agent went away).
    """

    conversation_id: str
    request_id: int
    answer: PermissionAnswer | None
    reason: str = ""


RuntimeEvent = (
    MessageStarted | MessageDelta | MessageActivity | ToolActivity | UsageReported | NoticeRaised | MessageFinished | MessageAdded | PlanChanged
    | Progress | ProjectTestsRunning | MemoryProgress | PermissionAsked | PermissionSettled
)
Observer = Callable[[RuntimeEvent], None]
