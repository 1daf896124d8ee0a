"""Conversion between database rows (dicts) and the immutable records; timestamps and JSON columns."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from tunaflow_tui.core.storage.records import (
    BranchRecord,
    ConversationRecord,
    MemoRecord,
    MessageRecord,
    PlanEventRecord,
    PlanRecord,
    ProjectRecord,
    SessionLinkRecord,
    SubtaskRecord,
)
from tunaflow_tui.core.turns import ToolLine, Usage

Row = Mapping[str, Any]


def now_text() -> str:
    """The current UTC time as stored in the database (ISO 8601 with offset)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def parse_time(text: str) -> datetime:
    """A stored timestamp as a timezone-aware UTC datetime."""
    value = datetime.fromisoformat(text)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def dump_list(values: Sequence[str]) -> str:
    """Encode a list of strings for a JSON column."""
    return json.dumps([str(v) for v in values], ensure_ascii=False)


def dump_mapping(values: Mapping[str, object] | None) -> str:
    """Encode a mapping for a JSON column (ValueError if it is not JSON-serialisable)."""
    try:
        return json.dumps(dict(values or {}), ensure_ascii=False, sort_keys=True)
    except TypeError as exc:
        raise ValueError(f"detail must be JSON-serialisable: {exc}") from exc


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def load_mapping(text: str | None) -> Mapping[str, object]:
    """Decode a JSON column into a read-only mapping (nested lists become tuples)."""
    data = json.loads(text) if text else {}
    frozen: Mapping[str, object] = _frozen(data if isinstance(data, dict) else {})
    return frozen


def load_list(text: str | None) -> tuple[str, ...]:
    """Decode a JSON list column into a tuple of strings."""
    data = json.loads(text) if text else []
    return tuple(str(v) for v in data) if isinstance(data, list) else ()


def project_record(row: Row) -> ProjectRecord:
    """A ``projects`` row as a record."""
    return ProjectRecord(
        id=row["id"], path=row["path"], name=row["name"], created_at=parse_time(row["created_at"])
    )


def conversation_record(row: Row) -> ConversationRecord:
    """A ``conversations`` row as a record."""
    return ConversationRecord(
        id=row["id"],
        project_id=row["project_id"],
        branch_id=row["branch_id"],
        native_session_id=row["native_session_id"],
        native_engine=row["native_engine"],
        created_at=parse_time(row["created_at"]),
    )


def message_record(row: Row) -> MessageRecord:
    """A ``messages`` row as a record."""
    return MessageRecord(
        id=row["id"],
        conversation_id=row["conversation_id"],
        role=row["role"],
        persona=row["persona"],
        engine=row["engine"],
        model=row["model"],
        status=row["status"],
        content=row["content"],
        usage=Usage(
            input_tokens=row["input_tokens"],
            output_tokens=row["output_tokens"],
            cached_tokens=row["cached_tokens"],
            cost_usd=row["cost_usd"],
        ),
        native_session_id=row["native_session_id"],
        error_kind=row["error_kind"],
        error_message=row["error_message"],
        created_at=parse_time(row["created_at"]),
        updated_at=parse_time(row["updated_at"]),
        tools=parse_tools(row["tools"]),
    )


def parse_tools(text: str | None) -> tuple[ToolLine, ...]:
    """The ``messages.tools`` JSON (``[[name, detail], ...]``) as records; anything unreadable is skipped."""
    try:
        items = json.loads(text or "[]")
    except ValueError:
        return ()
    if not isinstance(items, list):
        return ()
    return tuple(
        ToolLine(str(item[0]), str(item[1]) if len(item) > 1 else "")
        for item in items
        if isinstance(item, list) and item
    )


def tools_json(tools: Sequence[ToolLine]) -> str:
    """Tool lines as stored: at most :data:`MAX_STORED_TOOLS`, each detail cut to :data:`MAX_TOOL_DETAIL`."""
    kept = list(tools)[-MAX_STORED_TOOLS:]
    return json.dumps([[t.name[:MAX_TOOL_DETAIL], t.detail[:MAX_TOOL_DETAIL]] for t in kept], ensure_ascii=False)


MAX_STORED_TOOLS = 500
"""A turn that used more tools keeps its latest ones."""
MAX_TOOL_DETAIL = 300


def branch_record(row: Row) -> BranchRecord:
    """A ``branches`` row as a record."""
    return BranchRecord(
        id=row["id"],
        conversation_id=row["conversation_id"],
        checkpoint_id=row["checkpoint_id"],
        parent_branch_id=row["parent_branch_id"],
        mode=row["mode"],
        kind=row["kind"],
        label=row["label"],
        status=row["status"],
        git_branch=row["git_branch"],
        worktree_path=row["worktree_path"],
        engine_session_id=row["engine_session_id"],
        created_at=parse_time(row["created_at"]),
        updated_at=parse_time(row["updated_at"]),
    )



def subtask_record(row: Row) -> SubtaskRecord:
    """A ``plan_subtasks`` row as a record."""
    return SubtaskRecord(
        plan_id=row["plan_id"],
        index=row["position"],
        title=row["title"],
        details=row["details"],
        status=row["status"],
    )


def plan_record(row: Row, subtasks: Sequence[Row]) -> PlanRecord:
    """A ``plans`` row and its subtask rows as a record."""
    return PlanRecord(
        id=row["id"],
        project_id=row["project_id"],
        title=row["title"],
        slug=row["slug"],
        description=row["description"],
        expected_outcome=row["expected_outcome"],
        constraints=load_list(row["constraints"]),
        non_goals=load_list(row["non_goals"]),
        phase=row["phase"],
        held_from=row["held_from"],
        pending_decision=row["pending_decision"],
        pending_detail=load_mapping(row["pending_detail"]),
        revision=row["revision"],
        review_round=row["review_round"],
        source_message_id=row["source_message_id"],
        impl_branch_id=row["impl_branch_id"],
        review_branch_id=row["review_branch_id"],
        base_branch=row["base_branch"],
        git_branch=row["git_branch"],
        worktree_path=row["worktree_path"],
        subtasks=tuple(subtask_record(s) for s in subtasks),
        created_at=parse_time(row["created_at"]),
        updated_at=parse_time(row["updated_at"]),
    )



def plan_event_record(row: Row) -> PlanEventRecord:
    """A ``plan_events`` row as a record."""
    return PlanEventRecord(
        id=row["id"],
        plan_id=row["plan_id"],
        type=row["type"],
        actor=row["actor"],
        detail=load_mapping(row["detail"]),
        created_at=parse_time(row["created_at"]),
    )


def memo_record(row: Row) -> MemoRecord:
    """A ``memos`` row as a record."""
    return MemoRecord(
        id=row["id"],
        kind=row["kind"],
        content=row["content"],
        conversation_id=row["conversation_id"],
        branch_id=row["branch_id"],
        plan_id=row["plan_id"],
        created_at=parse_time(row["created_at"]),
    )


def session_link_record(row: Row) -> SessionLinkRecord:
    """A ``session_links`` row as a record."""
    return SessionLinkRecord(
        id=row["id"],
        from_conversation_id=row["from_conversation_id"],
        to_conversation_id=row["to_conversation_id"],
        kind=row["kind"],
        note=row["note"],
        created_at=parse_time(row["created_at"]),
    )
