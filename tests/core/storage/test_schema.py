"""One schema: a database migrated from version 1 is exactly the database the models create."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.schema import CURRENT_VERSION, MIGRATIONS, apply_migrations, schema_version


def _normal_sql(sql: str | None) -> str | None:
    """SQL text up to quoting of identifiers and whitespace (what SQLite itself ignores)."""
    if sql is None:
        return None
    text = re.sub(r"\s+", " ", sql.replace('"', "")).strip()
    return re.sub(r"\s*([(),])\s*", r"\1", text)


def _virtual_table(sql: str) -> tuple[str, tuple[str, ...]]:
    """``(module, arguments)`` of a CREATE VIRTUAL TABLE; FTS5 reads 'x', "x" and x alike."""
    match = re.search(r"USING\s+(\w+)\s*\((.*)\)\s*$", sql, re.S)
    assert match is not None, sql
    arguments = tuple(re.sub(r"\s+", "", part).replace("'", "").replace('"', "") for part in match[2].split(","))
    return match[1].lower(), arguments


def describe(conn: sqlite3.Connection) -> dict[tuple[str, str], dict[str, Any]]:
    """Everything the schema says about each object: columns with type, nullability, default and key;
    foreign keys; indexes with their columns; CHECKs and the rest through the normalised SQL."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for kind, name, table, sql in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"):
        entry: dict[str, Any] = {"table": table}
        if sql is not None and sql.upper().startswith("CREATE VIRTUAL TABLE"):
            entry["virtual"] = _virtual_table(sql)
        else:
            entry["sql"] = _normal_sql(sql)
        if kind == "table" and "virtual" not in entry:
            entry["columns"] = conn.execute(f"PRAGMA table_xinfo('{name}')").fetchall()
            entry["foreign_keys"] = conn.execute(f"PRAGMA foreign_key_list('{name}')").fetchall()
            entry["indexes"] = sorted(
                (index, unique, origin, partial, conn.execute(f"PRAGMA index_xinfo('{index}')").fetchall())
                for _seq, index, unique, origin, partial in conn.execute(f"PRAGMA index_list('{name}')")
            )
        found[(kind, name)] = entry
    return found


def _migrated_from_version_1(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    assert apply_migrations(conn, MIGRATIONS[:1]) == (1,)
    assert apply_migrations(conn) == tuple(range(2, CURRENT_VERSION + 1))
    return conn


def _created_from_the_models(project_dir: Path) -> sqlite3.Connection:
    Store.open(project_dir).close()
    return sqlite3.connect(project_dir / ".tunaflow" / "state.db")


def test_a_migrated_database_and_a_fresh_one_are_the_same(tmp_path: Path, project_dir: Path) -> None:
    migrated = _migrated_from_version_1(tmp_path / "migrated.db")
    fresh = _created_from_the_models(project_dir)
    try:
        old, new = describe(migrated), describe(fresh)
        assert sorted(old) == sorted(new)  # the same tables, indexes, FTS tables, views and triggers
        for key in old:
            assert old[key] == new[key], key
        kinds = {kind for kind, _name in new}
        assert {"table", "index", "trigger"} <= kinds
        assert ("table", "messages_fts") in new
        assert schema_version(migrated) == schema_version(fresh) == CURRENT_VERSION
        versions = "SELECT version, description FROM schema_version ORDER BY version"
        assert migrated.execute(versions).fetchall() == fresh.execute(versions).fetchall()
    finally:
        migrated.close()
        fresh.close()


def test_the_comparison_sees_a_changed_default_check_or_index(tmp_path: Path) -> None:
    def schema(*statements: str) -> dict[tuple[str, str], dict[str, Any]]:
        conn = sqlite3.connect(tmp_path / f"{len(list(tmp_path.iterdir()))}.db")
        for statement in statements:
            conn.execute(statement)
        try:
            return describe(conn)
        finally:
            conn.close()

    base = schema("CREATE TABLE t (a TEXT NOT NULL DEFAULT 'x' CHECK (a IN ('x', 'y')), b INTEGER)",
                  "CREATE INDEX t_b ON t(b)")
    assert base == schema('CREATE TABLE "t" ("a" TEXT NOT NULL DEFAULT \'x\' CHECK (a IN (\'x\', \'y\')), "b" INTEGER)',
                          'CREATE INDEX "t_b" ON "t" ("b")')
    assert base != schema("CREATE TABLE t (a TEXT NOT NULL DEFAULT 'y' CHECK (a IN ('x', 'y')), b INTEGER)",
                          "CREATE INDEX t_b ON t(b)")
    assert base != schema("CREATE TABLE t (a TEXT NOT NULL DEFAULT 'x' CHECK (a IN ('x', 'z')), b INTEGER)",
                          "CREATE INDEX t_b ON t(b)")
    assert base != schema("CREATE TABLE t (a TEXT DEFAULT 'x' CHECK (a IN ('x', 'y')), b INTEGER)",
                          "CREATE INDEX t_b ON t(b)")
    assert base != schema("CREATE TABLE t (a TEXT NOT NULL DEFAULT 'x' CHECK (a IN ('x', 'y')), b INTEGER)",
                          "CREATE INDEX t_b ON t(b, a)")
    assert base != schema("CREATE TABLE t (a TEXT NOT NULL DEFAULT 'x' CHECK (a IN ('x', 'y')), b REAL)",
                          "CREATE INDEX t_b ON t(b)")
