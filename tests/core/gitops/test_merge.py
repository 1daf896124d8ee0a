"""merge_branch: all four outcomes, and a refusal that leaves everything untouched."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tunaflow_tui.core.gitops import MergeRefusedError, head_sha, is_clean, merge_branch


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def commit_file(repo: Path, name: str, content: str, message: str) -> None:
    (repo / name).write_text(content, encoding="utf-8")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)


def test_fast_forward(git_repo: Path) -> None:
    git(git_repo, "checkout", "-q", "-b", "tunaflow/ff")
    commit_file(git_repo, "feature.txt", "f\n", "feature")
    tip = head_sha(git_repo)
    result = merge_branch(git_repo, "tunaflow/ff", into="main")
    assert result.kind == "fast-forward"
    assert result.sha == tip == git(git_repo, "rev-parse", "main")
    assert git(git_repo, "symbolic-ref", "--short", "HEAD") == "main"
    assert result.conflicted_files == ()


def test_merge_commit_when_base_moved_on(git_repo: Path) -> None:
    git(git_repo, "branch", "tunaflow/mc")
    commit_file(git_repo, "base.txt", "b\n", "base work")
    git(git_repo, "checkout", "-q", "tunaflow/mc")
    commit_file(git_repo, "feature.txt", "f\n", "feature")
    result = merge_branch(git_repo, "tunaflow/mc", into="main")
    assert result.kind == "merge-commit"
    assert git(git_repo, "log", "-1", "--format=%s") == "Merge tunaflow/mc"
    assert git(git_repo, "rev-list", "--parents", "-n1", "HEAD").count(" ") == 2
    assert (git_repo / "feature.txt").exists() and (git_repo / "base.txt").exists()
    assert result.sha == head_sha(git_repo)


def test_up_to_date(git_repo: Path) -> None:
    git(git_repo, "branch", "tunaflow/old")
    commit_file(git_repo, "later.txt", "l\n", "later")
    before = head_sha(git_repo)
    result = merge_branch(git_repo, "tunaflow/old", into="main")
    assert result.kind == "up-to-date"
    assert head_sha(git_repo) == before == result.sha


def test_conflict_is_aborted_and_reported(git_repo: Path) -> None:
    git(git_repo, "branch", "tunaflow/clash")
    commit_file(git_repo, "README.md", "# main version\n", "main edit")
    main_tip = head_sha(git_repo)
    git(git_repo, "checkout", "-q", "tunaflow/clash")
    commit_file(git_repo, "README.md", "# branch version\n", "branch edit")
    branch_tip = head_sha(git_repo)
    result = merge_branch(git_repo, "tunaflow/clash", into="main")
    assert result.kind == "conflict"
    assert result.conflicted_files == ("README.md",)
    assert "aborted" in result.message
    assert git(git_repo, "rev-parse", "main") == main_tip
    assert git(git_repo, "rev-parse", "tunaflow/clash") == branch_tip
    assert is_clean(git_repo)
    assert not (git_repo / ".git" / "MERGE_HEAD").exists()
    assert (git_repo / "README.md").read_text(encoding="utf-8") == "# main version\n"


def test_dirty_tree_is_refused_and_untouched(git_repo: Path) -> None:
    git(git_repo, "checkout", "-q", "-b", "tunaflow/dirty")
    commit_file(git_repo, "feature.txt", "f\n", "feature")
    (git_repo / "README.md").write_text("unsaved user work\n", encoding="utf-8")
    tip = head_sha(git_repo)
    with pytest.raises(MergeRefusedError, match="uncommitted changes"):
        merge_branch(git_repo, "tunaflow/dirty", into="main")
    assert git(git_repo, "symbolic-ref", "--short", "HEAD") == "tunaflow/dirty"
    assert head_sha(git_repo) == tip
    assert (git_repo / "README.md").read_text(encoding="utf-8") == "unsaved user work\n"


def test_unknown_branch_is_refused(git_repo: Path) -> None:
    with pytest.raises(MergeRefusedError, match="no local branch"):
        merge_branch(git_repo, "tunaflow/missing", into="main")
