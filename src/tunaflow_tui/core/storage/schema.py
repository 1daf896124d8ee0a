"""How a database reaches the current schema: created from the models, or upgraded by migrations.

The models (``models.py``) define the current schema; an empty database is created from them in
one step. A database made by an older tunaflow is brought forward by the numbered migrations
below, in order, inside one transaction. Each step is frozen once released: a later change is a
new step (and the matching change to the models), never an edit of an old one. A test checks that
a database migrated from version 1 and one created from the models are exactly the same.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from tunaflow_tui.core.storage.message_parse import encode_parse, parse_message
from tunaflow_tui.core.storage.models import create_statements
from tunaflow_tui.core.storage.storage_errors import StorageError


@dataclass(frozen=True, slots=True)
class Migration:
    """One forward schema step: its version number, a short description and its SQL statements.

    ``backfill``, if any, runs after the statements, in the same transaction, to fill what SQL
    alone cannot (a new database has nothing to fill and skips it).
    """

    version: int
    description: str
    statements: tuple[str, ...]
    backfill: Callable[[sqlite3.Connection], None] | None = None


_V1_BASE = Migration(
    1,
    "base schema",
    (
        """CREATE TABLE projects (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            created_at TEXT NOT NULL)""",
        """CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
            branch_id INTEGER REFERENCES branches(id) ON DELETE SET NULL,
            native_session_id TEXT,
            native_engine TEXT,
            created_at TEXT NOT NULL)""",
        """CREATE TABLE messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
            persona TEXT,
            engine TEXT,
            model TEXT,
            status TEXT NOT NULL DEFAULT 'done'
                CHECK (status IN ('streaming', 'done', 'interrupted', 'error')),
            content TEXT NOT NULL DEFAULT '',
            native_session_id TEXT,
            error_kind TEXT,
            error_message TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL)""",
        "CREATE INDEX messages_status ON messages(status)",
        """CREATE VIRTUAL TABLE messages_fts USING fts5(
            content, content='messages', content_rowid='id', tokenize='unicode61')""",
        """CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
        END""",
        """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
        END""",
        """CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
            INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
        END""",
        """CREATE TABLE branches (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            checkpoint_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
            parent_branch_id INTEGER REFERENCES branches(id) ON DELETE SET NULL,
            mode TEXT NOT NULL CHECK (mode IN ('chat', 'roundtable')),
            kind TEXT NOT NULL CHECK (kind IN ('general', 'implementation', 'review')),
            label TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'adopted', 'archived')),
            git_branch TEXT,
            worktree_path TEXT,
            engine_session_id TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL)""",
        """CREATE TABLE plans (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
            title TEXT NOT NULL,
            slug TEXT NOT NULL UNIQUE,
            description TEXT NOT NULL DEFAULT '',
            expected_outcome TEXT,
            constraints TEXT NOT NULL DEFAULT '[]',
            non_goals TEXT NOT NULL DEFAULT '[]',
            phase TEXT NOT NULL,
            held_from TEXT,
            pending_decision TEXT,
            pending_detail TEXT NOT NULL DEFAULT '{}',
            revision INTEGER NOT NULL DEFAULT 0,
            review_round INTEGER NOT NULL DEFAULT 0,
            source_message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
            impl_branch_id INTEGER REFERENCES branches(id) ON DELETE SET NULL,
            review_branch_id INTEGER REFERENCES branches(id) ON DELETE SET NULL,
            base_branch TEXT,
            git_branch TEXT,
            worktree_path TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL)""",
        """CREATE TABLE plan_subtasks (
            plan_id INTEGER NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            title TEXT NOT NULL,
            details TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
            PRIMARY KEY (plan_id, position))""",
        """CREATE TABLE plan_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            plan_id INTEGER NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
            type TEXT NOT NULL,
            actor TEXT NOT NULL CHECK (actor IN ('user', 'agent', 'system')),
            detail TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL)""",
        """CREATE TABLE memos (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            conversation_id TEXT REFERENCES conversations(id) ON DELETE SET NULL,
            branch_id INTEGER REFERENCES branches(id) ON DELETE SET NULL,
            plan_id INTEGER REFERENCES plans(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL)""",
        """CREATE TABLE session_links (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            from_conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            to_conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL)""",
    ),
)

# Engines started reporting token usage and cost after the first release; the chat window pages
# by (conversation, id), which the v1 schema could only answer with a scan of all messages.
_V2_USAGE = Migration(
    2,
    "message token usage and cost; conversation window index",
    (
        "ALTER TABLE messages ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE messages ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE messages ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE messages ADD COLUMN cost_usd REAL",
        "CREATE INDEX messages_conversation_window ON messages(conversation_id, id)",
    ),
)

# Plan history and branch listings are read per plan / per status on every Workflow view refresh.
_V3_LOOKUPS = Migration(
    3,
    "indexes for plan events, branches by status, memos and session links",
    (
        "CREATE INDEX plan_events_by_plan ON plan_events(plan_id, id)",
        "CREATE INDEX branches_by_status ON branches(status, id)",
        "CREATE INDEX memos_by_kind ON memos(kind, id)",
        "CREATE INDEX session_links_from ON session_links(from_conversation_id)",
        "CREATE INDEX session_links_to ON session_links(to_conversation_id)",
    ),
)

# The tools an agent used were shown only while its turn streamed; they are part of the history.
_V4_TOOLS = Migration(
    4,
    "tools used during a turn, stored with the message",
    ("ALTER TABLE messages ADD COLUMN tools TEXT NOT NULL DEFAULT '[]'",),
)

# The index was rewritten on every streaming flush of a reply (the text so far, again and again);
# it now holds finished messages only, written once when a message stops streaming.
_V5_FINISHED_INDEX = Migration(
    5,
    "full-text index over finished messages only",
    (
        "DROP TRIGGER messages_fts_insert",
        "DROP TRIGGER messages_fts_delete",
        "DROP TRIGGER messages_fts_update",
        "DROP TABLE messages_fts",
        "CREATE VIEW finished_messages AS SELECT id, content FROM messages WHERE status != 'streaming'",
        """CREATE VIRTUAL TABLE "messages_fts" USING fts5 ("content", content='finished_messages',
            content_rowid='id', tokenize="unicode61")""",
        "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')",
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
    ),
)

_BACKFILL_BATCH = 500


def _parse_finished_messages(conn: sqlite3.Connection) -> None:
    """Parse every finished message once, as the store does when a message finishes."""
    ids = [row[0] for row in conn.execute("SELECT id FROM messages WHERE status != 'streaming' AND parsed IS NULL")]
    for start in range(0, len(ids), _BACKFILL_BATCH):
        batch = ids[start:start + _BACKFILL_BATCH]
        rows = conn.execute(
            f"SELECT id, role, persona, content FROM messages WHERE id IN ({', '.join('?' * len(batch))})", batch
        ).fetchall()
        conn.executemany(
            "UPDATE messages SET parsed = ? WHERE id = ?",
            [(encode_parse(parse_message(role, persona, content)), message_id)
             for message_id, role, persona, content in rows],
        )


# The chat parsed every finished reply for markers again each time it loaded a window of the
# conversation; the parse is now kept with the message when it finishes. Messages finished
# before this version are parsed here, once (with the parser of the tunaflow that upgrades).
_V6_PARSED = Migration(
    6,
    "finished messages keep their parse: display text and marker summaries",
    ("ALTER TABLE messages ADD COLUMN parsed TEXT",),
    backfill=_parse_finished_messages,
)

# Agents and test runs live in their own process groups, which outlive a crashed tunaflow: the next
# one must know which groups were running, to never start a second agent beside a live one.
_V7_PROCESSES = Migration(
    7,
    "process groups started for agent turns and test runs, while they run",
    (
        """CREATE TABLE running_processes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL CHECK (kind IN ('agent', 'tests')),
            label TEXT NOT NULL DEFAULT '',
            conversation_id TEXT,
            message_id INTEGER REFERENCES messages(id) ON DELETE CASCADE,
            plan_id INTEGER REFERENCES plans(id) ON DELETE CASCADE,
            pid INTEGER NOT NULL,
            pgid INTEGER NOT NULL,
            start_ticks INTEGER,
            owner_pid INTEGER NOT NULL,
            owner_start_ticks INTEGER,
            created_at TEXT NOT NULL)""",
    ),
)

# A forked branch runs on one engine and continues its parent either in the engine's own forked
# session or through the inheritance section of its ContextPack: the UI shows which. An adopted
# branch leaves a record in its parent that a card renders from structured data, not from text.
_V8_BRANCH_CONTEXT = Migration(
    8,
    "branch engine and context source; structured data on messages",
    (
        "ALTER TABLE branches ADD COLUMN engine TEXT",
        "ALTER TABLE branches ADD COLUMN context_source TEXT"
        " CHECK (context_source IN ('native_fork', 'inheritance'))",
        "ALTER TABLE messages ADD COLUMN meta TEXT NOT NULL DEFAULT '{}'",
    ),
)

# Semantic search needs each finished message's chunks embedded once and kept: vectors live next
# to their message, tagged with the model that made them. Existing messages are embedded by the
# background indexer after the upgrade (embedding takes far too long for a migration).
_V9_CHUNKS = Migration(
    9,
    "chunks of finished messages with their embedding vectors",
    (
        """CREATE TABLE message_chunks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
            chunk_index INTEGER NOT NULL,
            start_offset INTEGER NOT NULL,
            end_offset INTEGER NOT NULL,
            model_id TEXT NOT NULL,
            vector BLOB)""",
        "CREATE INDEX message_chunks_by_message ON message_chunks(message_id, model_id)",
        """CREATE TRIGGER message_chunks_stale AFTER UPDATE OF content, status ON messages
        WHEN new.content IS NOT old.content OR new.status = 'streaming'
        BEGIN
            DELETE FROM message_chunks WHERE message_id = new.id;
        END""",
    ),
)

# Long conversations are compressed into topic summaries of their older part; each says which
# messages it covers, so it can be re-done when they change or the conversation grows.
_V10_SUMMARIES = Migration(
    10,
    "topic summaries of the older part of long conversations",
    (
        """CREATE TABLE conversation_summaries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            first_message_id INTEGER NOT NULL,
            last_message_id INTEGER NOT NULL,
            content TEXT NOT NULL,
            engine TEXT,
            created_at TEXT NOT NULL)""",
        "CREATE INDEX conversation_summaries_by_range ON conversation_summaries(conversation_id, first_message_id)",
    ),
)

# A natural-language query OR-s its words; a word found in most messages makes bm25 score them
# all. The index's own vocabulary says how common each word is, so such words can be left out.
_V11_VOCABULARY = Migration(
    11,
    "term counts of the message index",
    ("CREATE VIRTUAL TABLE messages_vocab USING fts5vocab(messages_fts, row)",),
)

# A resumed native session holds its own history but not what entered the conversation from elsewhere;
# what each session was sent is kept, so its next turn carries what it has not seen, once.
_V12_DELIVERIES = Migration(
    12,
    "what each native session was sent",
    (
        """CREATE TABLE session_deliveries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            engine TEXT NOT NULL,
            session_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            kind TEXT NOT NULL CHECK (kind IN ('from', 'through', 'events', 'summaries', 'chunk', 'link')),
            item_id INTEGER NOT NULL,
            item_part INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL)""",
        "CREATE UNIQUE INDEX session_deliveries_key"
        " ON session_deliveries(engine, session_id, kind, item_id, item_part)",
    ),
)

# A turn in progress is a fact every process respects: one lease row per conversation names the
# process that writes its reply (pid and start time, boot, host) and proves it is still there
# (heartbeat); a new holder bumps the generation, and the reply's writes check the owner token.
_V13_TURN_LEASES = Migration(
    13,
    "one lease per conversation for the turn in progress",
    (
        """CREATE TABLE turn_leases (
            conversation_id TEXT NOT NULL PRIMARY KEY,
            owner_token TEXT,
            generation INTEGER NOT NULL DEFAULT 0,
            host TEXT NOT NULL DEFAULT '',
            boot_id TEXT NOT NULL DEFAULT '',
            pid INTEGER,
            pid_start INTEGER,
            role TEXT NOT NULL DEFAULT '',
            message_id INTEGER,
            acquired_at TEXT,
            heartbeat_at REAL)""",
    ),
)

MIGRATIONS: tuple[Migration, ...] = (
    _V1_BASE, _V2_USAGE, _V3_LOOKUPS, _V4_TOOLS, _V5_FINISHED_INDEX, _V6_PARSED, _V7_PROCESSES, _V8_BRANCH_CONTEXT,
    _V9_CHUNKS, _V10_SUMMARIES, _V11_VOCABULARY, _V12_DELIVERIES,
    _V13_TURN_LEASES,
)
CURRENT_VERSION: int = MIGRATIONS[-1].version

_VERSION_TABLE = """CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at TEXT NOT NULL)"""


def schema_version(conn: sqlite3.Connection) -> int:
    """The highest migration applied to the database behind ``conn`` (0 for an empty database)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if exists is None:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0]) if row is not None and row[0] is not None else 0


def apply_migrations(
    conn: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS
) -> tuple[int, ...]:
    """Apply every step newer than the database's version in one transaction; return the versions applied.

    ``conn`` must be in autocommit mode (``isolation_level=None``) so that this function owns the
    transaction. A failure rolls everything back and leaves the database at its previous version.
    """
    return _upgrade(conn, migrations, create_empty=False)


def prepare_schema(conn: sqlite3.Connection) -> tuple[int, ...]:
    """Bring the database to the current schema; return the versions this made it pass.

    An empty database is created from the models in one step (and records every version as
    applied); an older one is migrated step by step. Same transaction rules as :func:`apply_migrations`.
    """
    return _upgrade(conn, MIGRATIONS, create_empty=True)


def _upgrade(conn: sqlite3.Connection, migrations: Sequence[Migration], *, create_empty: bool) -> tuple[int, ...]:
    if schema_version(conn) == migrations[-1].version:
        return ()  # up to date: take no write lock, so opening never waits for another writer
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(_VERSION_TABLE)
        current = schema_version(conn)
        if current > migrations[-1].version:
            raise StorageError(
                f"the database has schema version {current}, newer than this tunaflow "
                f"(which knows up to {migrations[-1].version}); upgrade tunaflow to open it"
            )
        fresh = create_empty and current == 0
        if fresh:
            for statement in create_statements():
                conn.execute(statement)
        applied: list[int] = []
        for step in migrations:
            if step.version <= current:
                continue
            if not fresh:
                for statement in step.statements:
                    conn.execute(statement)
                if step.backfill is not None:
                    step.backfill(conn)
            conn.execute(
                "INSERT INTO schema_version(version, description, applied_at) VALUES (?, ?, ?)",
                (step.version, step.description, datetime.now(UTC).isoformat()),
            )
            applied.append(step.version)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return tuple(applied)
