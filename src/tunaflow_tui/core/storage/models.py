"""Peewee models mirroring the current schema; private to the storage package.

The models are never bound to a database: every query is executed against the connection the store
chooses (the single writer or a reader), so several stores can live in one process. The schema itself
is created by the numbered migrations in ``schema.py``, not from these classes.
"""

from __future__ import annotations

from typing import ClassVar

from peewee import (
    AutoField,
    CompositeKey,
    FloatField,
    IntegerField,
    Model,
    TextField,
)
from playhouse.sqlite_ext import FTS5Model, RowIDField, SearchField


class _Base(Model):
    class Meta:
        database = None
        legacy_table_names = False


class ProjectRow(_Base):
    """Row of ``projects``."""

    id = AutoField()
    path = TextField()
    name = TextField()
    created_at = TextField()

    class Meta:
        table_name = "projects"


class ConversationRow(_Base):
    """Row of ``conversations``."""

    id = TextField(primary_key=True)
    project_id = IntegerField()
    branch_id = IntegerField(null=True)
    native_session_id = TextField(null=True)
    native_engine = TextField(null=True)
    created_at = TextField()

    class Meta:
        table_name = "conversations"


class MessageRow(_Base):
    """Row of ``messages``."""

    id = AutoField()
    conversation_id = TextField()
    role = TextField()
    persona = TextField(null=True)
    engine = TextField(null=True)
    model = TextField(null=True)
    status = TextField()
    content = TextField()
    native_session_id = TextField(null=True)
    error_kind = TextField(null=True)
    error_message = TextField(null=True)
    input_tokens = IntegerField()
    output_tokens = IntegerField()
    cached_tokens = IntegerField()
    cost_usd = FloatField(null=True)
    tools = TextField(default="[]")
    created_at = TextField()
    updated_at = TextField()

    class Meta:
        table_name = "messages"


class MessageIndex(FTS5Model):  # type: ignore[misc]  # playhouse ships no type information
    """The external-content FTS5 index over ``messages.content``, kept in sync by triggers."""

    rowid = RowIDField()
    content = SearchField()

    class Meta:
        database = None
        table_name = "messages_fts"
        options: ClassVar[dict[str, str]] = {
            "content": "messages", "content_rowid": "id", "tokenize": "unicode61"
        }


class BranchRow(_Base):
    """Row of ``branches``."""

    id = AutoField()
    conversation_id = TextField()
    checkpoint_id = IntegerField(null=True)
    parent_branch_id = IntegerField(null=True)
    mode = TextField()
    kind = TextField()
    label = TextField()
    status = TextField()
    git_branch = TextField(null=True)
    worktree_path = TextField(null=True)
    engine_session_id = TextField(null=True)
    created_at = TextField()
    updated_at = TextField()

    class Meta:
        table_name = "branches"


class PlanRow(_Base):
    """Row of ``plans``; list and mapping columns hold JSON text."""

    id = AutoField()
    project_id = IntegerField()
    title = TextField()
    slug = TextField()
    description = TextField()
    expected_outcome = TextField(null=True)
    constraints = TextField()
    non_goals = TextField()
    phase = TextField()
    held_from = TextField(null=True)
    pending_decision = TextField(null=True)
    pending_detail = TextField()
    revision = IntegerField()
    review_round = IntegerField()
    source_message_id = IntegerField(null=True)
    impl_branch_id = IntegerField(null=True)
    review_branch_id = IntegerField(null=True)
    base_branch = TextField(null=True)
    git_branch = TextField(null=True)
    worktree_path = TextField(null=True)
    created_at = TextField()
    updated_at = TextField()

    class Meta:
        table_name = "plans"


class SubtaskRow(_Base):
    """Row of ``plan_subtasks``; ``position`` is the 1-based subtask number."""

    plan_id = IntegerField()
    position = IntegerField()
    title = TextField()
    details = TextField()
    status = TextField()

    class Meta:
        table_name = "plan_subtasks"
        primary_key = CompositeKey("plan_id", "position")


class PlanEventRow(_Base):
    """Row of ``plan_events``."""

    id = AutoField()
    plan_id = IntegerField()
    type = TextField()
    actor = TextField()
    detail = TextField()
    created_at = TextField()

    class Meta:
        table_name = "plan_events"


class MemoRow(_Base):
    """Row of ``memos``."""

    id = AutoField()
    kind = TextField()
    content = TextField()
    conversation_id = TextField(null=True)
    branch_id = IntegerField(null=True)
    plan_id = IntegerField(null=True)
    created_at = TextField()

    class Meta:
        table_name = "memos"


class SessionLinkRow(_Base):
    """Row of ``session_links``."""

    id = AutoField()
    from_conversation_id = TextField()
    to_conversation_id = TextField()
    kind = TextField()
    note = TextField()
    created_at = TextField()

    class Meta:
        table_name = "session_links"


class RunningProcessRow(_Base):
    """Row of ``running_processes``: a process group tunaflow started and has not seen end."""

    id = AutoField()
    kind = TextField()
    label = TextField()
    conversation_id = TextField(null=True)
    message_id = IntegerField(null=True)
    plan_id = IntegerField(null=True)
    pid = IntegerField()
    pgid = IntegerField()
    start_ticks = IntegerField(null=True)
    owner_pid = IntegerField()
    owner_start_ticks = IntegerField(null=True)
    created_at = TextField()

    class Meta:
        table_name = "running_processes"
