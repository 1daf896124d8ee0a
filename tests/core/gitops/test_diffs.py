"""Diffs of an implementation branch against its base, including work not yet committed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tunaflow_tui.core.gitops import create_worktree, diff_against_base, diff_stat


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def _worktree_with_changes(git_repo: Path, tmp_path: Path) -> Path:
    wt = create_worktree(git_repo, "tunaflow/diff", "main", tmp_path / "wt")
    (wt / "committed.py").write_text("a = 1\nb = 2\n", encoding="utf-8")
    git(wt, "add", "committed.py")
    git(wt, "commit", "-q", "-m", "committed work")
    (wt / "README.md").write_text("# sample\nmore\n", encoding="utf-8")  # unstaged edit
    (wt / "staged.txt").write_text("staged\n", encoding="utf-8")
    git(wt, "add", "staged.txt")
    (wt / "untracked.md").write_text("brand new\n", encoding="utf-8")
    # the base moves on after the branch was made: its changes must not show up
    (git_repo / "base-only.txt").write_text("base\n", encoding="utf-8")
    git(git_repo, "add", "base-only.txt")
    git(git_repo, "commit", "-q", "-m", "base moves on")
    return wt


def test_diff_includes_committed_uncommitted_and_untracked_changes(git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree_with_changes(git_repo, tmp_path)
    index_before = git(wt, "diff", "--cached", "--name-only")
    diff = diff_against_base(wt, "main")
    for path in ("committed.py", "README.md", "staged.txt", "untracked.md"):
        assert f"b/{path}" in diff
    assert "+more" in diff and "+brand new" in diff
    assert "base-only.txt" not in diff
    # the user's index is left exactly as it was
    assert git(wt, "diff", "--cached", "--name-only") == index_before
    assert "untracked.md" in git(wt, "status", "--porcelain")


def test_diff_stat_counts_files_and_lines(git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree_with_changes(git_repo, tmp_path)
    stat = diff_stat(wt, "main")
    assert stat.files == 4
    assert set(stat.paths) == {"committed.py", "README.md", "staged.txt", "untracked.md"}
    assert stat.insertions == 2 + 1 + 1 + 1
    assert stat.deletions == 0
    assert "4 files changed" in stat.text


def test_empty_diff_when_nothing_changed(git_repo: Path, tmp_path: Path) -> None:
    wt = create_worktree(git_repo, "tunaflow/same", "main", tmp_path / "wt")
    assert diff_against_base(wt, "main") == ""
    stat = diff_stat(wt, "main")
    assert (stat.files, stat.insertions, stat.deletions) == (0, 0, 0)


def test_large_diff_is_truncated_with_a_marker_line(git_repo: Path, tmp_path: Path) -> None:
    wt = create_worktree(git_repo, "tunaflow/big", "main", tmp_path / "wt")
    (wt / "big.txt").write_text("".join(f"line {i} é\n" for i in range(5000)), encoding="utf-8")
    full = diff_against_base(wt, "main", max_bytes=10_000_000)
    cut = diff_against_base(wt, "main", max_bytes=2000)
    assert "truncated" not in full
    body, marker = cut.rstrip("\n").rsplit("\n", 1)
    assert marker.startswith("[… diff truncated")
    assert f"of {len(full.encode('utf-8'))} bytes" in marker
    assert len(body.encode("utf-8")) <= 2000
    assert full.startswith(body)


def test_deleted_and_binary_files_are_counted(git_repo: Path, tmp_path: Path) -> None:
    wt = create_worktree(git_repo, "tunaflow/bin", "main", tmp_path / "wt")
    (wt / "README.md").unlink()
    (wt / "logo.bin").write_bytes(bytes(range(256)))
    stat = diff_stat(wt, "main")
    assert set(stat.paths) == {"README.md", "logo.bin"}
    assert stat.deletions == 1
    assert "Binary files" in diff_against_base(wt, "main")
