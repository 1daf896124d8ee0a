"""A damaged, locked, full or read-only project database, as real `tunaflow` processes meet it.

Each failure is one line with its real cause and exit 1, and the database is as it was. A full
disk and a read-only project are real: a small tmpfs, filled up or remounted read-only (skipped
where mounting is not permitted).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.failures import describe_failure

DEMO_ROLES = "[roles]\n" + "".join(f'{role} = "demo"\n' for role in (
    "architect", "developer", "reviewer", "verifier", "synthesizer", "summarizer"))
WRITING = [("ask", ".", "Is WAL safe here?"), ("run", ".", "--request", "Add a WAL note")]
READING = [("search", ".", "--mode", "fts", "journal"), ("status", "."), ("export", "."), ("branch", ".", "list")]


def _tunaflow(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tunaflow_tui", *args], capture_output=True, text=True,
                          encoding="utf-8", timeout=120, cwd=project, env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def _seed(project: Path) -> None:
    project.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=project, check=True)
    (project / "notes.txt").write_text("notes\n")
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "notes"],
                   cwd=project, check=True)
    with Store.open(project) as store:
        store.add_message("main", "user", "Should the journal use WAL?")
        store.add_message("main", "assistant", "Yes: the journal should use WAL.", persona="architect")
        store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                            kind="general", label="journal idea")
    (project / ".tunaflow" / "config.toml").write_text(DEMO_ROLES)


def _database(project: Path) -> Path:
    return project / ".tunaflow" / "state.db"


def _digest(project: Path) -> str:
    return hashlib.sha256(_database(project).read_bytes()).hexdigest()


def _messages(project: Path) -> list[tuple[int, str]]:
    uri = f"{_database(project).as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return conn.execute("SELECT id, content FROM messages WHERE status = 'done' ORDER BY id").fetchall()


def _one_line(out: subprocess.CompletedProcess[str], command: str, cause: str) -> None:
    assert out.returncode == 1, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr and "cannot rollback" not in out.stderr, out.stderr
    assert out.stderr.count("\n") == 1 and out.stderr.startswith(f"tunaflow {command}: "), out.stderr
    assert cause in out.stderr, out.stderr


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs of its own (skipped where mounting is not permitted)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


def test_a_damaged_database_is_one_line_everywhere_and_left_as_it_is(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    _seed(project)
    data = bytearray(_database(project).read_bytes())
    data[4096:4096 * 6] = b"\x5a" * (4096 * 5)
    _database(project).write_bytes(bytes(data))
    before = _digest(project)
    for args in [*WRITING, *READING]:
        _one_line(_tunaflow(project, *args), args[0], "The tunaflow database file is damaged")
    assert _digest(project) == before


def test_a_database_locked_by_another_process_names_that_process(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    _seed(project)
    before = _messages(project)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys\n"
         f"c = sqlite3.connect({str(_database(project))!r}, isolation_level=None)\n"
         "c.execute('BEGIN IMMEDIATE')\nprint('holding', flush=True)\nsys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        for args in WRITING:
            _one_line(_tunaflow(project, *args), args[0], f"locked by process {holder.pid} (python")
        status = _tunaflow(project, "status", ".")
        assert status.returncode == 0 and "journal idea" in status.stdout, "reading does not wait for the writer"
    finally:
        holder.communicate("", timeout=30)
    assert _messages(project) == before


def test_a_full_disk_says_so_and_keeps_what_was_saved(small_disk: Path) -> None:
    project = small_disk / "proj"
    _seed(project)
    before = _messages(project)
    filler = small_disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"\0" * 4096)
    finally:
        os.close(fd)
    os.truncate(filler, filler.stat().st_size - 48 * 1024)  # room for the WAL index, not for a turn
    for args in WRITING:
        _one_line(_tunaflow(project, *args), args[0], "The disk is full")
    filler.unlink()
    assert _messages(project)[:len(before)] == before


def test_a_read_only_project_is_read_and_writing_to_it_is_refused(small_disk: Path) -> None:
    project = small_disk / "proj"
    _seed(project)
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    before = _digest(project)
    for args in READING:
        out = _tunaflow(project, *args)
        assert out.returncode == 0, out.stderr
        assert out.stderr == (f"tunaflow {args[0]}: the project is read-only (the file system holding "
                              f"{project / '.tunaflow'} is mounted read-only); it is shown as it is and nothing "
                              "can be changed\n")
    assert "journal" in _tunaflow(project, "search", ".", "--mode", "fts", "journal").stdout
    assert "journal idea" in _tunaflow(project, "branch", ".", "list").stdout
    assert "Yes: the journal should use WAL." in _tunaflow(project, "export", ".").stdout
    for args in [*WRITING, ("branch", ".", "rename", "1", "new name"),
                 ("roundtable", ".", "--topic", "WAL?", "--seat", "a=demo")]:
        _one_line(_tunaflow(project, *args), args[0], "The project is read-only (the file system holding")
    assert _digest(project) == before


def test_a_failed_rollback_is_described_by_the_failure_that_caused_it() -> None:
    try:
        try:
            raise sqlite3.OperationalError("database or disk is full")
        except sqlite3.OperationalError:
            raise sqlite3.OperationalError("cannot rollback - no transaction is active")  # noqa: B904
    except sqlite3.OperationalError as exc:
        assert describe_failure(exc).startswith("The disk is full")
