"""Immutable records returned by the store; the UI and the domain see these, never ORM rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from tunaflow_tui.core.markers import MarkerSummary
from tunaflow_tui.core.turns import ToolLine, Usage


@dataclass(frozen=True, slots=True)
class ProjectRecord:
    """The project the database belongs to."""

    id: int
    path: str
    name: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ConversationRecord:
    """A conversation: ``"main"`` or the shadow conversation ``"branch:{id}"`` of a branch."""

    id: str
    project_id: int
    branch_id: int | None
    native_session_id: str | None
    native_engine: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class MessageRecord:
    """One message of a conversation (role user/assistant/system; status streaming/done/interrupted/error)."""

    id: int
    conversation_id: str
    role: str
    persona: str | None
    engine: str | None
    model: str | None
    status: str
    content: str
    usage: Usage
    native_session_id: str | None
    error_kind: str | None
    error_message: str | None
    created_at: datetime
    updated_at: datetime
    tools: tuple[ToolLine, ...]
    """The tools the agent used during the turn, in order (consecutive repeats folded)."""
    display_text: str
    """What the chat shows: a finished message without its accepted markers (rejected ones inert);
    the content as it is while it streams, and for a system message."""
    markers: tuple[MarkerSummary, ...]
    """The markers of a finished message, in order (none while it streams)."""
    meta: Mapping[str, object] = field(default_factory=dict)
    """Structured data of a record tunaflow wrote (e.g. ``{"kind": "branch_adopt", ...}``); empty otherwise."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A full-text search result; a lower ``rank`` is more relevant (FTS5 bm25)."""

    message: MessageRecord
    rank: float
    snippet: str


@dataclass(frozen=True, slots=True)
class BranchRecord:
    """A fork of a conversation at a checkpoint message (spec §4)."""

    id: int
    conversation_id: str
    checkpoint_id: int | None
    parent_branch_id: int | None
    mode: str
    kind: str
    label: str
    status: str
    git_branch: str | None
    worktree_path: str | None
    engine_session_id: str | None
    created_at: datetime
    updated_at: datetime
    engine: str | None = None
    """The engine the branch's turns run on (None: the Architect's engine)."""
    context_source: str | None = None
    """How the branch knows its parent: ``native_fork`` (the engine's own forked session) or
    ``inheritance`` (the ContextPack's thread-inheritance section); None for workflow branches."""

    @property
    def is_read_only(self) -> bool:
        """Adopted and archived branches keep their messages but take no new ones until restored."""
        return self.status != "active"

    @property
    def shadow_conversation_id(self) -> str:
        """The id of the conversation the branch's own messages live in."""
        return f"branch:{self.id}"


@dataclass(frozen=True, slots=True)
class SubtaskRecord:
    """One subtask of a plan; ``index`` is 1-based, status pending/done/failed."""

    plan_id: int
    index: int
    title: str
    details: str
    status: str


@dataclass(frozen=True, slots=True)
class PlanRecord:
    """A tracked unit of work with its phase, pending decision and subtasks."""

    id: int
    project_id: int
    title: str
    slug: str
    description: str
    expected_outcome: str | None
    constraints: tuple[str, ...]
    non_goals: tuple[str, ...]
    phase: str
    held_from: str | None
    pending_decision: str | None
    pending_detail: Mapping[str, object]
    revision: int
    review_round: int
    source_message_id: int | None
    impl_branch_id: int | None
    review_branch_id: int | None
    base_branch: str | None
    git_branch: str | None
    worktree_path: str | None
    subtasks: tuple[SubtaskRecord, ...]
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class PlanEventRecord:
    """One row of a plan's history: a transition or a notable occurrence (actor user/agent/system)."""

    id: int
    plan_id: int
    type: str
    actor: str
    detail: Mapping[str, object]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class MemoRecord:
    """A stored note, e.g. a roundtable brief, optionally linked to a conversation, branch or plan."""

    id: int
    kind: str
    content: str
    conversation_id: str | None
    branch_id: int | None
    plan_id: int | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class SessionLinkRecord:
    """A link between two conversations, e.g. an adopted branch cited by its parent."""

    id: int
    from_conversation_id: str
    to_conversation_id: str
    kind: str
    note: str
    created_at: datetime
