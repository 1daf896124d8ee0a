"""Merging the base into a plan's worktree, and telling a resolved merge from one left in conflict."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tunaflow_tui.core.gitops import create_worktree
from tunaflow_tui.core.gitops.integration import (
    abort_base_merge,
    left_unresolved,
    merge_in_progress,
    start_base_merge,
)

MINE = "one\nplan\nthree\n"
THEIRS = "one\nbase\nthree\n"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def diverged(git_repo: Path, tmp_path: Path) -> Path:
    """A plan's worktree whose branch and main both changed the same line of notes.txt."""
    (git_repo / "notes.txt").write_text("one\ntwo\nthree\n")
    git(git_repo, "add", "notes.txt")
    git(git_repo, "commit", "-qm", "notes")
    worktree = tmp_path / "plan-wt"
    create_worktree(git_repo, "tunaflow/plan", "main", worktree)
    (worktree / "notes.txt").write_text(MINE)
    git(worktree, "commit", "-qam", "plan")
    (git_repo / "notes.txt").write_text(THEIRS)
    git(git_repo, "commit", "-qam", "base")
    return worktree


def test_the_base_merge_is_started_with_the_markers_left_for_the_developer(diverged: Path) -> None:
    main = git(diverged, "rev-parse", "main")
    merge = start_base_merge(diverged, "main")
    assert merge.base_sha == main and merge.conflicted == ("notes.txt",)
    assert merge_in_progress(diverged) and "<<<<<<<" in (diverged / "notes.txt").read_text()
    assert start_base_merge(diverged, "main") == merge, "a merge in progress is kept as it is"
    assert git(diverged, "rev-parse", "main") == main


def test_markers_or_an_untouched_file_are_unresolved_and_a_clean_edit_is_resolved(diverged: Path) -> None:
    merge = start_base_merge(diverged, "main")
    left = left_unresolved(diverged, merge, "main")
    assert left is not None and left.files == ("notes.txt",) and "markers" in left.reason
    (diverged / "notes.txt").write_text("one\nplan and base\nthree\n")
    assert left_unresolved(diverged, merge, "main") is None, "unstaged but free of markers: tunaflow stages it"


def test_a_binary_conflict_left_as_git_left_it_is_unresolved(git_repo: Path, tmp_path: Path) -> None:
    (git_repo / "logo.bin").write_bytes(b"\0logo\0v1")
    git(git_repo, "add", "logo.bin")
    git(git_repo, "commit", "-qm", "logo")
    worktree = tmp_path / "plan-wt"
    create_worktree(git_repo, "tunaflow/plan", "main", worktree)
    (worktree / "logo.bin").write_bytes(b"\0logo\0plan")
    git(worktree, "commit", "-qam", "plan logo")
    (git_repo / "logo.bin").write_bytes(b"\0logo\0base")
    git(git_repo, "commit", "-qam", "base logo")
    merge = start_base_merge(worktree, "main")
    assert merge.conflicted == ("logo.bin",)
    left = left_unresolved(worktree, merge, "main")  # no markers in a binary file: it is as the merge left it
    assert left is not None and left.files == ("logo.bin",) and "as the merge left them" in left.reason
    (worktree / "logo.bin").write_bytes(b"\0logo\0both")
    assert left_unresolved(worktree, merge, "main") is None


def test_an_undone_merge_is_unresolved_and_abort_brings_the_branch_back(diverged: Path) -> None:
    tip = git(diverged, "rev-parse", "HEAD")
    merge = start_base_merge(diverged, "main")
    git(diverged, "merge", "--abort")
    left = left_unresolved(diverged, merge, "main")
    assert left is not None and "undone" in left.reason
    start_base_merge(diverged, "main")
    assert abort_base_merge(diverged) and not abort_base_merge(diverged)
    assert git(diverged, "rev-parse", "HEAD") == tip and git(diverged, "status", "--porcelain") == ""
    assert (diverged / "notes.txt").read_text() == MINE


def test_a_worktree_with_uncommitted_changes_is_not_merged_into(diverged: Path) -> None:
    (diverged / "notes.txt").write_text("dirty\n")
    with pytest.raises(Exception, match="uncommitted changes"):
        start_base_merge(diverged, "main")
    assert not merge_in_progress(diverged)
