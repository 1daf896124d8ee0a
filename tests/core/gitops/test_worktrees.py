"""Worktrees live outside the project and never disturb the user's checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tunaflow_tui.core.gitops import (
    GitError,
    branch_exists,
    create_worktree,
    current_branch,
    is_clean,
    list_worktrees,
    prune_worktrees,
    remove_worktree,
    set_aside_stale_folder,
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_create_worktree_makes_branch_and_checkout_outside_the_project(git_repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "worktrees" / "deep" / "add-login"
    path = create_worktree(git_repo, "tunaflow/add-login", "main", target)
    assert path == target.resolve()
    assert (path / "README.md").read_text(encoding="utf-8") == "# sample\n"
    assert branch_exists(git_repo, "tunaflow/add-login")
    assert current_branch(path) == "tunaflow/add-login"
    assert current_branch(git_repo) == "main"
    assert is_clean(git_repo)
    listed = {w.path.resolve(): w.branch for w in list_worktrees(git_repo)}
    assert listed[path] == "tunaflow/add-login"
    assert listed[git_repo.resolve()] == "main"


def test_existing_branch_is_reused_and_same_path_is_idempotent(git_repo: Path, tmp_path: Path) -> None:
    git(git_repo, "branch", "tunaflow/reuse")
    git(git_repo, "commit", "-q", "--allow-empty", "-m", "later on main")
    path = create_worktree(git_repo, "tunaflow/reuse", "main", tmp_path / "wt")
    # the existing branch keeps its own tip rather than being recreated from base
    assert git(path, "rev-parse", "HEAD") == git(git_repo, "rev-parse", "main~1")
    assert create_worktree(git_repo, "tunaflow/reuse", "main", tmp_path / "wt") == path
    with pytest.raises(GitError, match="already checked out"):
        create_worktree(git_repo, "tunaflow/reuse", "main", tmp_path / "elsewhere")


def test_worktree_inside_the_project_is_refused(git_repo: Path) -> None:
    with pytest.raises(GitError, match="inside the project"):
        create_worktree(git_repo, "tunaflow/x", "main", git_repo / ".tunaflow" / "wt")
    assert not branch_exists(git_repo, "tunaflow/x")


@pytest.mark.parametrize("branch", ["tunaflow/../x", "-b", "tunaflow/a b", "tunaflow/x.lock"])
def test_invalid_branch_names_create_nothing(git_repo: Path, tmp_path: Path, branch: str) -> None:
    with pytest.raises(GitError, match="invalid branch name"):
        create_worktree(git_repo, branch, "main", tmp_path / "wt")
    assert not (tmp_path / "wt").exists()
    assert len(list_worktrees(git_repo)) == 1


def test_unknown_base_is_an_error(git_repo: Path, tmp_path: Path) -> None:
    with pytest.raises(GitError, match="unknown revision"):
        create_worktree(git_repo, "tunaflow/x", "no-such-base", tmp_path / "wt")
    assert not branch_exists(git_repo, "tunaflow/x")


def test_non_empty_target_is_refused(git_repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(GitError, match="not empty"):
        create_worktree(git_repo, "tunaflow/x", "main", target)
    assert (target / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_remove_worktree_refuses_local_changes_unless_forced(git_repo: Path, tmp_path: Path) -> None:
    path = create_worktree(git_repo, "tunaflow/rm", "main", tmp_path / "wt")
    (path / "dirty.txt").write_text("x", encoding="utf-8")
    with pytest.raises(GitError):
        remove_worktree(git_repo, path)
    assert path.exists()
    remove_worktree(git_repo, path, force=True)
    assert not path.exists()
    assert branch_exists(git_repo, "tunaflow/rm")
    assert len(list_worktrees(git_repo)) == 1


def test_prune_forgets_a_worktree_deleted_by_hand(git_repo: Path, tmp_path: Path) -> None:
    import shutil

    path = create_worktree(git_repo, "tunaflow/gone", "main", tmp_path / "wt")
    shutil.rmtree(path)
    assert any(w.prunable for w in list_worktrees(git_repo))
    prune_worktrees(git_repo)
    assert [w.branch for w in list_worktrees(git_repo)] == ["main"]
    # after pruning, the branch can be checked out again
    assert create_worktree(git_repo, "tunaflow/gone", "main", tmp_path / "wt2").is_dir()


def _recreated(repo: Path) -> None:
    """The project deleted and created again at the same path: same files, a new repository."""
    subprocess.run(["rm", "-rf", str(repo)], check=True)
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "README.md").write_text("# sample\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial again")


def test_a_worktree_left_by_a_deleted_project_is_moved_aside_and_kept(git_repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "worktrees" / "proj-1234" / "add-login"
    create_worktree(git_repo, "tunaflow/add-login", "main", target)
    (target / "work.txt").write_text("the old project's work", encoding="utf-8")
    _recreated(git_repo)
    with pytest.raises(GitError, match="not empty"):
        create_worktree(git_repo, "tunaflow/add-login", "main", target)

    kept = set_aside_stale_folder(git_repo, target)

    assert kept is not None and kept.parent == target.parent / ".rescued" and kept.name.startswith("add-login-")
    assert (kept / "work.txt").read_text(encoding="utf-8") == "the old project's work"
    assert create_worktree(git_repo, "tunaflow/add-login", "main", target) == target.resolve()
    assert set_aside_stale_folder(git_repo, target) is None, "a worktree of this repository stays"
    assert set_aside_stale_folder(git_repo, tmp_path / "worktrees" / "nothing-here") is None


def test_a_live_worktree_of_another_repository_is_not_moved(git_repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(other)], check=True)
    (other / "a.txt").write_text("a", encoding="utf-8")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "a")
    target = tmp_path / "worktrees" / "shared-name"
    create_worktree(other, "tunaflow/shared-name", "main", target)
    with pytest.raises(GitError, match="worktree of another repository"):
        set_aside_stale_folder(git_repo, target)
    assert (target / "a.txt").exists()


def test_a_symlink_in_the_way_is_moved_not_what_it_points_to(git_repo: Path, tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "data.txt").write_text("keep", encoding="utf-8")
    target = tmp_path / "worktrees" / "plan"
    target.parent.mkdir()
    target.symlink_to(precious)
    kept = set_aside_stale_folder(git_repo, target)
    assert kept is not None and kept.is_symlink() and not target.exists()
    assert (precious / "data.txt").read_text(encoding="utf-8") == "keep"
