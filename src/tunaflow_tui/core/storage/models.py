"""The database schema: peewee models, their indexes and the SQL peewee cannot express; private to storage.

These classes are the one definition of the current schema. A new database is created from them
(:func:`create_statements`); an existing one reaches the same schema through the numbered
migrations in ``schema.py``, and a test checks that both ways end in exactly the same database.
Columns are declared in the order the migrations added them, with their constraints written as
SQL so that a fresh table is the same table an upgraded one is.

The models are never bound to a database: every query is executed against the connection the store
chooses (the single writer or a reader), so several stores can live in one process.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import peewee
from peewee import SQL, BlobField, Check, CompositeKey, FloatField, IntegerField, Model, TextField
from playhouse.sqlite_ext import AutoIncrementField, FTS5Model, RowIDField, SearchField

from tunaflow_tui.core.storage.columns import JSONListField, JSONMappingField, TimestampField, ToolLinesField
from tunaflow_tui.core.storage.message_parse import ParsedField
from tunaflow_tui.core.workflow.phases import Actor

ROLES = ("user", "assistant", "system")
MESSAGE_STATUSES = ("streaming", "done", "interrupted", "error")
BRANCH_MODES = ("chat", "roundtable")
BRANCH_KINDS = ("general", "implementation", "review")
BRANCH_STATUSES = ("active", "adopted", "archived")
BRANCH_CONTEXT_SOURCES = ("native_fork", "inheritance")
SUBTASK_STATUSES = ("pending", "done", "failed")
PROCESS_KINDS = ("agent", "tests")
DELIVERY_KINDS = ("from", "through", "events", "summaries", "chunk", "link")
EVENT_ACTORS = tuple(actor.value for actor in Actor)


def _references(table: str, on_delete: str) -> SQL:
    return SQL(f"REFERENCES {table}(id) ON DELETE {on_delete}")


def _default(literal: str) -> SQL:
    return SQL(f"DEFAULT {literal}")


def _one_of(column: str, values: Iterable[str]) -> Any:
    return Check(f"{column} IN ({', '.join(repr(v) for v in values)})")


def _serial() -> AutoIncrementField:
    """``INTEGER PRIMARY KEY AUTOINCREMENT``: ids are never reused, even after a delete."""
    return AutoIncrementField(null=True)  # null=True: declared without NOT NULL, as the first schema did


class _Base(Model):
    class Meta:
        database = None
        legacy_table_names = False


class ProjectRow(_Base):
    """Row of ``projects``: the one project the database belongs to."""

    id = IntegerField(primary_key=True, null=True)  # the rowid alias, numbered by SQLite (no AUTOINCREMENT)
    path = TextField(constraints=[SQL("UNIQUE")])
    name = TextField()
    created_at = TimestampField()

    class Meta:
        table_name = "projects"


class ConversationRow(_Base):
    """Row of ``conversations``: ``main`` or a branch's shadow ``branch:{id}``."""

    id = TextField(primary_key=True, null=True)
    project_id = IntegerField(constraints=[_references("projects", "CASCADE")])
    branch_id = IntegerField(null=True, constraints=[_references("branches", "SET NULL")])
    native_session_id = TextField(null=True)
    native_engine = TextField(null=True)
    created_at = TimestampField()

    class Meta:
        table_name = "conversations"


class MessageRow(_Base):
    """Row of ``messages``."""

    id = _serial()
    conversation_id = TextField(constraints=[_references("conversations", "CASCADE")])
    role = TextField(constraints=[_one_of("role", ROLES)])
    persona = TextField(null=True)
    engine = TextField(null=True)
    model = TextField(null=True)
    status = TextField(constraints=[_default("'done'"), _one_of("status", MESSAGE_STATUSES)])
    content = TextField(constraints=[_default("''")])
    native_session_id = TextField(null=True)
    error_kind = TextField(null=True)
    error_message = TextField(null=True)
    created_at = TimestampField()
    updated_at = TimestampField()
    input_tokens = IntegerField(constraints=[_default("0")])
    output_tokens = IntegerField(constraints=[_default("0")])
    cached_tokens = IntegerField(constraints=[_default("0")])
    cost_usd = FloatField(null=True)
    tools = ToolLinesField(constraints=[_default("'[]'")])
    parsed = ParsedField(null=True)
    meta = JSONMappingField(constraints=[_default("'{}'")])

    class Meta:
        table_name = "messages"


MessageRow.add_index(MessageRow.status, name="messages_status")
MessageRow.add_index(MessageRow.conversation_id, MessageRow.id, name="messages_conversation_window")


class MessageIndex(FTS5Model):  # type: ignore[misc]  # playhouse ships no type information
    """The FTS5 index over the content of finished messages (external content: :data:`VIEWS`).

    A message is indexed once, when it stops streaming, and again only if its text changes after
    that; :data:`TRIGGERS` keep the index in step. Streaming flushes never touch it.
    """

    rowid = RowIDField()
    content = SearchField()

    class Meta:
        database = None
        table_name = "messages_fts"
        options: ClassVar[dict[str, str]] = {
            "content": "'finished_messages'", "content_rowid": "'id'", "tokenize": "unicode61"
        }


class BranchRow(_Base):
    """Row of ``branches``."""

    id = _serial()
    conversation_id = TextField(constraints=[_references("conversations", "CASCADE")])
    checkpoint_id = IntegerField(null=True, constraints=[_references("messages", "SET NULL")])
    parent_branch_id = IntegerField(null=True, constraints=[_references("branches", "SET NULL")])
    mode = TextField(constraints=[_one_of("mode", BRANCH_MODES)])
    kind = TextField(constraints=[_one_of("kind", BRANCH_KINDS)])
    label = TextField(constraints=[_default("''")])
    status = TextField(constraints=[_default("'active'"), _one_of("status", BRANCH_STATUSES)])
    git_branch = TextField(null=True)
    worktree_path = TextField(null=True)
    engine_session_id = TextField(null=True)
    created_at = TimestampField()
    updated_at = TimestampField()
    engine = TextField(null=True)
    context_source = TextField(null=True, constraints=[_one_of("context_source", BRANCH_CONTEXT_SOURCES)])

    class Meta:
        table_name = "branches"


BranchRow.add_index(BranchRow.status, BranchRow.id, name="branches_by_status")


class PlanRow(_Base):
    """Row of ``plans``."""

    id = _serial()
    project_id = IntegerField(constraints=[_references("projects", "CASCADE")])
    title = TextField()
    slug = TextField(constraints=[SQL("UNIQUE")])
    description = TextField(constraints=[_default("''")])
    expected_outcome = TextField(null=True)
    constraints = JSONListField(constraints=[_default("'[]'")])
    non_goals = JSONListField(constraints=[_default("'[]'")])
    phase = TextField()
    held_from = TextField(null=True)
    pending_decision = TextField(null=True)
    pending_detail = JSONMappingField(constraints=[_default("'{}'")])
    revision = IntegerField(constraints=[_default("0")])
    review_round = IntegerField(constraints=[_default("0")])
    source_message_id = IntegerField(null=True, constraints=[_references("messages", "SET NULL")])
    impl_branch_id = IntegerField(null=True, constraints=[_references("branches", "SET NULL")])
    review_branch_id = IntegerField(null=True, constraints=[_references("branches", "SET NULL")])
    base_branch = TextField(null=True)
    git_branch = TextField(null=True)
    worktree_path = TextField(null=True)
    created_at = TimestampField()
    updated_at = TimestampField()

    class Meta:
        table_name = "plans"


class SubtaskRow(_Base):
    """Row of ``plan_subtasks``; ``position`` is the 1-based subtask number."""

    plan_id = IntegerField(constraints=[_references("plans", "CASCADE")])
    position = IntegerField()
    title = TextField()
    details = TextField(constraints=[_default("''")])
    status = TextField(constraints=[_default("'pending'"), _one_of("status", SUBTASK_STATUSES)])

    class Meta:
        table_name = "plan_subtasks"
        primary_key = CompositeKey("plan_id", "position")


class PlanEventRow(_Base):
    """Row of ``plan_events``."""

    id = _serial()
    plan_id = IntegerField(constraints=[_references("plans", "CASCADE")])
    type = TextField()
    actor = TextField(constraints=[_one_of("actor", EVENT_ACTORS)])
    detail = JSONMappingField(constraints=[_default("'{}'")])
    created_at = TimestampField()

    class Meta:
        table_name = "plan_events"


PlanEventRow.add_index(PlanEventRow.plan_id, PlanEventRow.id, name="plan_events_by_plan")


class MemoRow(_Base):
    """Row of ``memos``."""

    id = _serial()
    kind = TextField()
    content = TextField()
    conversation_id = TextField(null=True, constraints=[_references("conversations", "SET NULL")])
    branch_id = IntegerField(null=True, constraints=[_references("branches", "SET NULL")])
    plan_id = IntegerField(null=True, constraints=[_references("plans", "SET NULL")])
    created_at = TimestampField()

    class Meta:
        table_name = "memos"


MemoRow.add_index(MemoRow.kind, MemoRow.id, name="memos_by_kind")


class SessionLinkRow(_Base):
    """Row of ``session_links``."""

    id = _serial()
    from_conversation_id = TextField(constraints=[_references("conversations", "CASCADE")])
    to_conversation_id = TextField(constraints=[_references("conversations", "CASCADE")])
    kind = TextField()
    note = TextField(constraints=[_default("''")])
    created_at = TimestampField()

    class Meta:
        table_name = "session_links"


class RunningProcessRow(_Base):
    """Row of ``running_processes``: a process group tunaflow started and has not seen end."""

    id = _serial()
    kind = TextField(constraints=[_one_of("kind", PROCESS_KINDS)])
    label = TextField(constraints=[_default("''")])
    conversation_id = TextField(null=True)
    message_id = IntegerField(null=True, constraints=[_references("messages", "CASCADE")])
    plan_id = IntegerField(null=True, constraints=[_references("plans", "CASCADE")])
    pid = IntegerField()
    pgid = IntegerField()
    start_ticks = IntegerField(null=True)
    owner_pid = IntegerField()
    owner_start_ticks = IntegerField(null=True)
    created_at = TextField()

    class Meta:
        table_name = "running_processes"


class TurnLeaseRow(_Base):
    """Row of ``turn_leases``: who writes the turn in progress in a conversation (no owner: free).

    ``generation`` grows with every new holder; ``pid_start`` is the holder's start time in clock
    ticks since boot (``/proc/<pid>/stat`` field 22); ``heartbeat_at`` is seconds since the epoch.
    """

    conversation_id = TextField(primary_key=True)
    owner_token = TextField(null=True)
    generation = IntegerField(constraints=[_default("0")])
    host = TextField(constraints=[_default("''")])
    boot_id = TextField(constraints=[_default("''")])
    pid = IntegerField(null=True)
    pid_start = IntegerField(null=True)
    role = TextField(constraints=[_default("''")])
    message_id = IntegerField(null=True)
    acquired_at = TextField(null=True)
    heartbeat_at = FloatField(null=True)

    class Meta:
        table_name = "turn_leases"


class MessageChunkRow(_Base):
    """Row of ``message_chunks``: one chunk of a finished message and its vector under ``model_id``.

    ``start_offset``/``end_offset`` locate the chunk in the message's content. A message with no
    text to embed gets one row with a NULL vector, so that it counts as done. Rows go with their
    message (``ON DELETE CASCADE``) and are dropped when a finished message's text changes
    (:data:`TRIGGERS`), so the background indexer embeds it again.
    """

    id = _serial()
    message_id = IntegerField(constraints=[_references("messages", "CASCADE")])
    chunk_index = IntegerField()
    start_offset = IntegerField()
    end_offset = IntegerField()
    model_id = TextField()
    vector = BlobField(null=True)

    class Meta:
        table_name = "message_chunks"


MessageChunkRow.add_index(MessageChunkRow.message_id, MessageChunkRow.model_id, name="message_chunks_by_message")


class ConversationSummaryRow(_Base):
    """Row of ``conversation_summaries``: a topic summary of messages ``first_message_id``..``last_message_id``.

    ``engine`` is the engine that wrote it, NULL for the extractive fallback.
    """

    id = _serial()
    conversation_id = TextField(constraints=[_references("conversations", "CASCADE")])
    first_message_id = IntegerField()
    last_message_id = IntegerField()
    content = TextField()
    engine = TextField(null=True)
    created_at = TimestampField()

    class Meta:
        table_name = "conversation_summaries"


ConversationSummaryRow.add_index(ConversationSummaryRow.conversation_id, ConversationSummaryRow.first_message_id,
                                 name="conversation_summaries_by_range")


class SessionDeliveryRow(_Base):
    """Row of ``session_deliveries``: one thing a native session (``engine``, ``session_id``) was sent.

    ``kind`` says what ``item_id`` is: ``from``/``through`` the first and last message of the
    conversation the session knows, ``events``/``summaries`` the newest plan event and summary when it
    was last sent, ``chunk`` a retrieved chunk (its message; ``item_part`` its start offset), ``link``
    a session link it cites.
    """

    id = _serial()
    engine = TextField()
    session_id = TextField()
    conversation_id = TextField(constraints=[_references("conversations", "CASCADE")])
    kind = TextField(constraints=[_one_of("kind", DELIVERY_KINDS)])
    item_id = IntegerField()
    item_part = IntegerField(constraints=[_default("0")])
    created_at = TimestampField()

    class Meta:
        table_name = "session_deliveries"


SessionDeliveryRow.add_index(SessionDeliveryRow.engine, SessionDeliveryRow.session_id, SessionDeliveryRow.kind,
                             SessionDeliveryRow.item_id, SessionDeliveryRow.item_part, unique=True,
                             name="session_deliveries_key")


SessionLinkRow.add_index(SessionLinkRow.from_conversation_id, name="session_links_from")
SessionLinkRow.add_index(SessionLinkRow.to_conversation_id, name="session_links_to")

MODELS: tuple[type[Model], ...] = (
    ProjectRow, ConversationRow, MessageRow, MessageIndex, BranchRow, PlanRow, SubtaskRow, PlanEventRow,
    MemoRow, SessionLinkRow, RunningProcessRow, MessageChunkRow,
    ConversationSummaryRow, SessionDeliveryRow, TurnLeaseRow,
)

VIEWS: tuple[str, ...] = (
    "CREATE VIEW finished_messages AS SELECT id, content FROM messages WHERE status != 'streaming'",
)
"""The rows ``messages_fts`` indexes and reads its snippets from: every message but a streaming one."""

TRIGGERS: tuple[str, ...] = (
    """CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.status != 'streaming' BEGIN
        INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
    END""",
    """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.status != 'streaming' BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END""",
    """CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, status ON messages
    WHEN (old.status = 'streaming') != (new.status = 'streaming')
        OR (new.status != 'streaming' AND new.content IS NOT old.content)
    BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content)
            SELECT 'delete', old.id, old.content WHERE old.status != 'streaming';
        INSERT INTO messages_fts(rowid, content) SELECT new.id, new.content WHERE new.status != 'streaming';
    END""",
    """CREATE TRIGGER message_chunks_stale AFTER UPDATE OF content, status ON messages
    WHEN new.content IS NOT old.content OR new.status = 'streaming'
    BEGIN
        DELETE FROM message_chunks WHERE message_id = new.id;
    END""",
)
"""What keeps ``messages_fts`` equal to :data:`VIEWS` and drops the chunks of an edited message."""


VOCABULARY: tuple[str, ...] = (
    "CREATE VIRTUAL TABLE messages_vocab USING fts5vocab(messages_fts, row)",
)
"""How many finished messages hold each indexed term: lets a search leave out words found everywhere."""


def create_statements() -> tuple[str, ...]:
    """The SQL that creates the current schema in an empty database: tables, indexes, FTS, views, triggers."""
    ddl_database = peewee.SqliteDatabase(None)  # renders SQL only; never connected
    statements: list[str] = []
    model: Any
    for model in MODELS:
        manager = type(model._schema)(model, database=ddl_database)  # the model's own kind (virtual or not)
        statements.append(_sql(manager._create_table(safe=False)))
        statements.extend(_sql(index) for index in manager._create_indexes(safe=False))
    statements.extend(VIEWS)
    statements.extend(TRIGGERS)
    statements.extend(VOCABULARY)
    return tuple(statements)


def _sql(context: Any) -> str:
    sql, params = context.query()
    if params:  # DDL has no parameters; a default or check written as one would be lost here
        raise ValueError(f"schema statement with parameters: {sql}")
    return str(sql)
