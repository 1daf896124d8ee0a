"""tunaflow's own commits run the project's hooks as they were at approval, never one added or changed since."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tunaflow_tui.core.gitops import GitError, commit_all, create_worktree, hook_fingerprint, trusted_hooks


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def hook(directory: Path, name: str, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def commit(wt: Path, message: str, baseline) -> tuple[str | None, tuple[str, ...]]:  # type: ignore[no-untyped-def]
    (wt / f"{message}.txt").write_text(message, encoding="utf-8")
    with trusted_hooks(wt, baseline) as hooks:
        return commit_all(wt, message, git_config=hooks.config_args), hooks.skipped


def test_a_hook_planted_after_approval_is_left_out_and_the_projects_own_still_runs(
        git_repo: Path, tmp_path: Path) -> None:
    hooks = git_repo / ".git" / "hooks"
    own, planted = tmp_path / "own-ran", tmp_path / "planted-ran"
    hook(hooks, "pre-commit", f"touch '{own}'")
    wt = create_worktree(git_repo, "tunaflow/h", "main", tmp_path / "wt")
    baseline = hook_fingerprint(wt)
    hook(hooks, "post-commit", f"touch '{planted}'")

    sha, skipped = commit(wt, "one", baseline)

    assert sha is not None and skipped == ("post-commit",)
    assert own.exists(), "the project's own pre-commit hook is honoured"
    assert not planted.exists()


def test_a_changed_hook_is_not_run_and_a_refusing_original_still_refuses(git_repo: Path, tmp_path: Path) -> None:
    hooks = git_repo / ".git" / "hooks"
    changed = tmp_path / "changed-ran"
    hook(hooks, "pre-commit", "echo 'no commits on Fridays' >&2; exit 1")
    wt = create_worktree(git_repo, "tunaflow/h", "main", tmp_path / "wt")
    baseline = hook_fingerprint(wt)

    with pytest.raises(GitError, match="no commits on Fridays"):
        commit(wt, "refused", baseline)

    hook(hooks, "pre-commit", f"touch '{changed}'")
    sha, skipped = commit(wt, "two", baseline)
    assert sha is not None and skipped == ("pre-commit",) and not changed.exists()


def test_an_in_tree_hooks_path_the_agent_edits_is_not_trusted(git_repo: Path, tmp_path: Path) -> None:
    ran = tmp_path / "husky-ran"
    hook(git_repo / ".husky", "pre-commit", "exit 0")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "husky")
    git(git_repo, "config", "core.hooksPath", ".husky")
    wt = create_worktree(git_repo, "tunaflow/h", "main", tmp_path / "wt")
    baseline = hook_fingerprint(wt)
    hook(wt / ".husky", "pre-commit", f"touch '{ran}'")  # the Developer edits the tracked hook

    sha, skipped = commit(wt, "three", baseline)

    assert sha is not None and skipped == ("pre-commit",) and not ran.exists()


def test_copy_runs_the_trusted_hooks_from_a_private_copy(git_repo: Path, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    hook(git_repo / ".git" / "hooks", "post-commit", f"touch '{ran}'")
    baseline = hook_fingerprint(git_repo)
    with trusted_hooks(git_repo, baseline, copy=True) as hooks:
        assert hooks.config_args and hooks.skipped == ()
        (git_repo / "x.txt").write_text("x", encoding="utf-8")
        commit_all(git_repo, "x", git_config=hooks.config_args)
    assert ran.exists()
