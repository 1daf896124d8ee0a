"""Forward migrations: an old database is upgraded in place and keeps its rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tunaflow_tui.core.storage import StorageError, Store
from tunaflow_tui.core.storage.schema import (
    CURRENT_VERSION,
    MIGRATIONS,
    Migration,
    apply_migrations,
    schema_version,
)
from tunaflow_tui.core.turns import ToolLine, Usage


def _make_v1_database(project_dir: Path) -> None:
    db = project_dir / ".tunaflow" / "state.db"
    db.parent.mkdir()
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        assert apply_migrations(conn, MIGRATIONS[:1]) == (1,)
        stamp = "2024-05-01T10:00:00.000000+00:00"
        conn.execute("INSERT INTO projects(id, path, name, created_at) VALUES (1, ?, 'proj', ?)",
                     (str(project_dir.resolve()), stamp))
        conn.execute("INSERT INTO conversations(id, project_id, created_at) VALUES ('main', 1, ?)", (stamp,))
        conn.execute(
            "INSERT INTO messages(conversation_id, role, persona, status, content, created_at, updated_at)"
            " VALUES ('main', 'assistant', 'Architect', 'done', 'the original migration row', ?, ?)",
            (stamp, stamp),
        )
        columns = {row[1] for row in conn.execute("PRAGMA table_info(messages)")}
        assert "input_tokens" not in columns  # really the first schema
    finally:
        conn.close()


def test_a_version_1_database_is_migrated_and_keeps_its_rows(project_dir: Path) -> None:
    _make_v1_database(project_dir)
    with Store.open(project_dir) as store:
        (message,) = store.list_messages("main")
        assert message.content == "the original migration row"
        assert message.persona == "Architect"
        assert message.usage == Usage()  # the columns added later start empty
        assert message.tools == ()
        assert message.created_at.year == 2024
        assert [hit.message.id for hit in store.search_messages("original")] == [message.id]
        updated = store.update_message(message.id, usage=Usage(input_tokens=10, output_tokens=5, cost_usd=0.01),
                                       tools=[ToolLine("Edit", "calc.py")])
        assert updated.usage.input_tokens == 10
        assert updated.tools == (ToolLine("Edit", "calc.py"),)
    conn = sqlite3.connect(project_dir / ".tunaflow" / "state.db")
    try:
        assert schema_version(conn) == CURRENT_VERSION
        indexes = {row[1] for row in conn.execute("PRAGMA index_list(messages)")}
        assert "messages_conversation_window" in indexes
    finally:
        conn.close()


_V1_ROWS: list[tuple[str, tuple[object, ...]]] = [  # in an order the foreign keys accept
    ("messages", (2, "main", "user", None, None, None, "done", "fix the login", None, None, None,
                  "2024-05-01T10:02:00+00:00", "2024-05-01T10:02:00+00:00")),
    ("branches", (1, "main", 2, None, "chat", "implementation", "impl", "active", "tunaflow/login",
                  "/tmp/wt", "sess-9", "2024-05-01T10:01:00+00:00", "2024-05-01T10:01:00+00:00")),
    ("conversations", ("branch:1", 1, 1, "thread-1", "codex", "2024-05-01T10:01:00+00:00")),
    ("messages", (3, "branch:1", "assistant", "developer", "codex", "gpt-5", "error", "half done", "thread-1",
                  "rate_limited", "slow down", "2024-05-01T10:03:00+00:00", "2024-05-01T10:04:00+00:00")),
    ("plans", (1, 1, "Fix login", "fix-login", "The page 500s", "login works", '["no deps"]', '["redesign"]',
               "review", None, "review", '{"round": 1}', 2, 1, 2, 1, None, "main", "tunaflow/login", "/tmp/wt",
               "2024-05-01T10:05:00+00:00", "2024-05-01T10:06:00+00:00")),
    ("plan_subtasks", (1, 1, "Repro", "write a test", "done")),
    ("plan_subtasks", (1, 2, "Fix", "patch", "pending")),
    ("plan_events", (1, 1, "approved", "user", '{"revision": 0}', "2024-05-01T10:05:30+00:00")),
    ("memos", (1, "roundtable_brief", "Key positions", "main", 1, 1, "2024-05-01T10:07:00+00:00")),
    ("session_links", (1, "main", "branch:1", "adopted", "the fix", "2024-05-01T10:08:00+00:00")),
]


def _v1_columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info('{table}')")]


def test_every_row_of_a_version_1_database_survives_the_upgrade(project_dir: Path) -> None:
    _make_v1_database(project_dir)
    path = project_dir / ".tunaflow" / "state.db"
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        columns = {table: _v1_columns(conn, table) for table in ("projects", *dict(_V1_ROWS))}
        for table, row in _V1_ROWS:
            conn.execute(f"INSERT INTO {table} VALUES ({', '.join('?' * len(row))})", row)
        before = {table: conn.execute(f"SELECT {', '.join(names)} FROM {table} ORDER BY rowid").fetchall()
                  for table, names in columns.items()}
    finally:
        conn.close()
    with Store.open(project_dir) as store:
        plan = store.get_plan(1)
        assert plan is not None and plan.constraints == ("no deps",) and plan.pending_detail == {"round": 1}
        assert [(s.index, s.status) for s in plan.subtasks] == [(1, "done"), (2, "pending")]
        assert [(e.type, e.actor) for e in store.list_plan_events(1)] == [("approved", "user")]
        failed = store.get_message(3)
        assert failed is not None and (failed.error_kind, failed.content) == ("rate_limited", "half done")
        assert store.get_branch(1).worktree_path == "/tmp/wt"  # type: ignore[union-attr]
        assert [m.content for m in store.list_memos(kind="roundtable_brief")] == ["Key positions"]
        assert [link.note for link in store.list_session_links("main")] == ["the fix"]
        assert {hit.message.id for hit in store.search_messages("login")} == {2}
    conn = sqlite3.connect(path)
    try:
        after = {table: conn.execute(f"SELECT {', '.join(names)} FROM {table} ORDER BY rowid").fetchall()
                 for table, names in columns.items()}
    finally:
        conn.close()
    assert after == before  # every column the first schema had keeps every value


def test_a_failing_step_leaves_the_database_at_its_old_version(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    try:
        apply_migrations(conn, MIGRATIONS[:1])
        broken = (*MIGRATIONS[:1], Migration(2, "broken", ("CREATE TABLE extra (x)", "THIS IS NOT SQL")))
        with pytest.raises(sqlite3.OperationalError):
            apply_migrations(conn, broken)
        assert schema_version(conn) == 1
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "extra" not in tables
    finally:
        conn.close()


def test_a_database_from_a_newer_tunaflow_is_refused(project_dir: Path) -> None:
    Store.open(project_dir).close()
    conn = sqlite3.connect(project_dir / ".tunaflow" / "state.db", isolation_level=None)
    conn.execute("INSERT INTO schema_version VALUES (?, 'future', 'now')", (CURRENT_VERSION + 1,))
    conn.close()
    with pytest.raises(StorageError, match="newer"):
        Store.open(project_dir)


def test_migration_versions_are_consecutive() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
