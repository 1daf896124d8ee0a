"""Opening a project store: file location, git exclusion, connection settings, closing."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from tunaflow_tui.core.storage import StorageError, Store
from tunaflow_tui.core.storage.schema import CURRENT_VERSION


def _exclude_lines(repo: Path) -> list[str]:
    text = (repo / ".git" / "info" / "exclude").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines()]


def test_open_creates_the_database_in_dot_tunaflow(project_dir: Path) -> None:
    with Store.open(project_dir) as store:
        assert (project_dir / ".tunaflow" / "state.db").is_file()
        assert store.path == project_dir.resolve() / ".tunaflow" / "state.db"
        assert store.project.path == str(project_dir.resolve())
        assert store.project.name == "proj"
        assert store.project.created_at.tzinfo is not None
        assert store.recovered_message_ids == ()
    with Store.open(project_dir) as again:
        assert again.project == store.project


def test_open_a_missing_directory_is_a_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="does not exist"):
        Store.open(tmp_path / "nowhere")


def test_tunaflow_dir_is_excluded_from_git_once(git_repo: Path) -> None:
    Store.open(git_repo).close()
    Store.open(git_repo).close()
    assert _exclude_lines(git_repo).count(".tunaflow/") == 1
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=git_repo, capture_output=True, text=True, check=True
    )
    assert ".tunaflow" not in status.stdout


def test_exclusion_from_a_linked_worktree_goes_to_the_common_git_dir(git_repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    subprocess.run(["git", "-C", str(git_repo), "worktree", "add", "-q", "-b", "side", str(worktree)], check=True)
    assert (worktree / ".git").is_file()
    Store.open(worktree).close()
    assert ".tunaflow/" in _exclude_lines(git_repo)
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=worktree, capture_output=True, text=True, check=True
    )
    assert ".tunaflow" not in status.stdout


def test_a_plain_directory_gets_no_git_files(project_dir: Path) -> None:
    Store.open(project_dir).close()
    assert sorted(p.name for p in project_dir.iterdir()) == [".tunaflow"]


def test_connection_settings_are_in_effect(store: Store) -> None:
    conn = sqlite3.connect(store.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()
    with store._db.writing() as db:  # the writer connection's own settings
        pragma = {name: db.execute_sql(f"PRAGMA {name}").fetchone()[0]
                  for name in ("foreign_keys", "busy_timeout", "synchronous")}
    assert pragma == {"foreign_keys": 1, "busy_timeout": 5000, "synchronous": 1}  # 1 = NORMAL
    with store._db.reading() as db:
        assert db.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1
        assert db.execute_sql("PRAGMA busy_timeout").fetchone()[0] == 5000
        assert db.execute_sql("PRAGMA query_only").fetchone()[0] == 1


def test_schema_version_is_recorded(store: Store) -> None:
    conn = sqlite3.connect(store.path)
    try:
        versions = [row[0] for row in conn.execute("SELECT version FROM schema_version ORDER BY version")]
    finally:
        conn.close()
    assert versions == list(range(1, CURRENT_VERSION + 1))
    assert CURRENT_VERSION >= 2


def test_closed_store_refuses_work(project_dir: Path) -> None:
    store = Store.open(project_dir)
    store.add_message("main", "user", "hi")
    store.close()
    store.close()  # closing twice is harmless
    with pytest.raises(StorageError, match="closed"):
        store.add_message("main", "user", "again")
    with pytest.raises(StorageError, match="closed"):
        store.list_messages("main")


def test_moved_project_keeps_its_history(tmp_path: Path, project_dir: Path) -> None:
    with Store.open(project_dir) as store:
        store.add_message("main", "user", "before the move")
    moved = tmp_path / "renamed"
    project_dir.rename(moved)
    with Store.open(moved) as store:
        assert store.project.path == str(moved.resolve())
        assert store.project.name == "renamed"
        assert [m.content for m in store.list_messages("main")] == ["before the move"]
