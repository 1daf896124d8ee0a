"""The reviewer guard notices every change a reviewer makes and puts the worktree back exactly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tunaflow_tui.core.gitops import changed_paths, create_worktree, fingerprint, restore, snapshot


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


REVIEWER = """
import os, pathlib, subprocess
root = pathlib.Path.cwd()
(root / "src" / "app.py").write_text("print('reviewer was here')\\n")
(root / "notes").mkdir()
(root / "notes" / "review.md").write_text("I fixed it myself\\n")
(root / "docs" / "guide.md").unlink()
(root / "wip.txt").write_text("changed too\\n")
os.chmod(root / "run.sh", 0o644)
subprocess.run(["git", "add", "notes/review.md"], check=True)
"""


def _developer_worktree(git_repo: Path, tmp_path: Path) -> Path:
    wt = create_worktree(git_repo, "tunaflow/guard", "main", tmp_path / "wt")
    (wt / "src").mkdir()
    (wt / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    (wt / "docs").mkdir()
    (wt / "docs" / "guide.md").write_text("guide\n", encoding="utf-8")
    (wt / "run.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    os.chmod(wt / "run.sh", 0o755)
    (wt / ".gitignore").write_text("build/\n", encoding="utf-8")
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", "developer work")
    # uncommitted developer work must survive the restore too
    (wt / "wip.txt").write_text("work in progress\n", encoding="utf-8")
    (wt / "src" / "app.py").write_text("print('hi there')\n", encoding="utf-8")
    return wt


def test_reviewer_changes_are_detected_and_reverted(git_repo: Path, tmp_path: Path) -> None:
    wt = _developer_worktree(git_repo, tmp_path)
    before = fingerprint(wt)
    snap = snapshot(wt)
    subprocess.run([sys.executable, "-c", REVIEWER], cwd=wt, check=True)
    after = fingerprint(wt)
    assert after != before
    expected = ["docs/guide.md", "notes/review.md", "run.sh", "src/app.py", "wip.txt"]
    assert changed_paths(before, after) == expected

    assert restore(wt, snap) == expected
    assert fingerprint(wt) == before
    assert (wt / "src" / "app.py").read_text(encoding="utf-8") == "print('hi there')\n"
    assert (wt / "wip.txt").read_text(encoding="utf-8") == "work in progress\n"
    assert (wt / "docs" / "guide.md").read_text(encoding="utf-8") == "guide\n"
    assert not (wt / "notes").exists()
    assert os.stat(wt / "run.sh").st_mode & 0o100


def test_untouched_worktree_has_a_stable_fingerprint_and_restore_is_a_no_op(git_repo: Path, tmp_path: Path) -> None:
    wt = _developer_worktree(git_repo, tmp_path)
    snap = snapshot(wt)
    assert fingerprint(wt) == fingerprint(wt)
    assert restore(wt, snap) == []
    assert fingerprint(wt) == snap.fingerprint


def test_ignored_files_do_not_count(git_repo: Path, tmp_path: Path) -> None:
    wt = _developer_worktree(git_repo, tmp_path)
    before = fingerprint(wt)
    (wt / "build").mkdir()
    (wt / "build" / "out.o").write_bytes(b"\x00\x01")
    assert fingerprint(wt) == before


def test_a_reviewer_commit_is_undone(git_repo: Path, tmp_path: Path) -> None:
    wt = _developer_worktree(git_repo, tmp_path)
    tip = git(wt, "rev-parse", "HEAD")
    before = fingerprint(wt)
    snap = snapshot(wt)
    (wt / "sneaky.py").write_text("x = 1\n", encoding="utf-8")
    git(wt, "add", "sneaky.py")
    git(wt, "commit", "-q", "-m", "reviewer commit")
    assert fingerprint(wt) != before
    assert restore(wt, snap) == ["sneaky.py"]
    assert git(wt, "rev-parse", "HEAD") == tip
    assert git(wt, "symbolic-ref", "--short", "HEAD") == "tunaflow/guard"
    assert fingerprint(wt) == before


def test_a_directory_swapped_for_a_symlink_is_restored_without_writing_through_it(
    git_repo: Path, tmp_path: Path
) -> None:
    wt = _developer_worktree(git_repo, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    before = fingerprint(wt)
    snap = snapshot(wt)
    import shutil

    shutil.rmtree(wt / "docs")
    os.symlink(outside, wt / "docs")
    restore(wt, snap)
    assert list(outside.iterdir()) == []
    assert (wt / "docs").is_dir() and not (wt / "docs").is_symlink()
    assert fingerprint(wt) == before
