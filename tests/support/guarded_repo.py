"""A repository with a plan's worktree, for the ref guard's tests: git helpers and the starting layout."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tunaflow_tui.core.gitops import create_worktree

PLAN = "tunaflow/guarded"
PLAN_REF = f"refs/heads/{PLAN}"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def sha(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", "--verify", "-q", rev)


def commit(cwd: Path, name: str, message: str) -> str:
    (cwd / name).write_text(message + "\n", encoding="utf-8")
    git(cwd, "add", "-A")
    git(cwd, "commit", "-q", "-m", message)
    return sha(cwd, "HEAD")


def setup(git_repo: Path, tmp_path: Path) -> Path:
    """main, a release branch, and the plan's worktree one commit ahead of main."""
    git(git_repo, "branch", "release")
    wt = create_worktree(git_repo, PLAN, "main", tmp_path / "wt")
    commit(wt, "plan.md", "Plan: guarded")
    return wt


def rescued(repo: Path) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname)", "refs/tunaflow/rescue/").split()
