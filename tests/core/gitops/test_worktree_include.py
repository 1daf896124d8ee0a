""".worktreeinclude: gitignored files copied into a new worktree, and never committed from it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from project_envs import git, write

from tunaflow_tui.core import gitops
from tunaflow_tui.core.gitops.worktree_include import (
    committed_private_paths,
    copy_included,
    private_paths,
)

PROJECT = {
    "app.py": "print('hi')\n",
    ".gitignore": ".env\n*.local.json\nbuild/\n",
    ".worktreeinclude": (
        "# secrets and local config the tests need\n.env\nconfig/*.local.json\n!config/skip.local.json\n"
        "notes.txt\n"
    ),
}
UNTRACKED = {
    ".env": "API_TOKEN=s3cret\n",
    "config/dev.local.json": '{"db": "dev"}\n',
    "config/skip.local.json": '{"db": "skip"}\n',
    "notes.txt": "untracked but not ignored\n",
    "build/out.bin": "ignored but not listed\n",
}


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    write(project, PROJECT)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    write(project, UNTRACKED)
    return project


def _files_in_branch_history(repo: Path, branch: str) -> set[str]:
    out = git(repo, "log", "--format=", "--name-only", branch)
    return {line for line in out.splitlines() if line}


def test_listed_ignored_files_are_copied_and_nothing_else(tmp_path: Path) -> None:
    project = _project(tmp_path)
    worktree = gitops.create_worktree(project, "tunaflow/x", "main", tmp_path / "wt")
    result = copy_included(project, worktree)
    assert result.copied == (".env", "config/dev.local.json")
    assert (worktree / ".env").read_text() == "API_TOKEN=s3cret\n"
    assert (worktree / "config" / "dev.local.json").is_file()
    assert not (worktree / "config" / "skip.local.json").exists(), "a negated pattern is honoured"
    assert not (worktree / "build").exists(), "ignored files not listed stay out"
    assert not (worktree / "notes.txt").exists()
    assert ("notes.txt", "not ignored by git (it would be committed)") in result.skipped
    assert private_paths(worktree) == [".env", "config/dev.local.json"]
    # the list lives in the worktree's git admin dir, not in the tree
    assert gitops.is_clean(worktree)


def test_a_file_already_in_the_worktree_is_left_alone(tmp_path: Path) -> None:
    project = _project(tmp_path)
    worktree = gitops.create_worktree(project, "tunaflow/x", "main", tmp_path / "wt")
    (worktree / ".env").write_text("API_TOKEN=edited-in-the-worktree\n")
    result = copy_included(project, worktree)
    assert (".env", "already in the worktree") in result.skipped
    assert (worktree / ".env").read_text() == "API_TOKEN=edited-in-the-worktree\n"


def test_no_include_file_copies_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / ".worktreeinclude").unlink()
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "no include")
    worktree = gitops.create_worktree(project, "tunaflow/x", "main", tmp_path / "wt")
    assert copy_included(project, worktree).copied == ()
    assert not (worktree / ".env").exists()


def test_copied_files_never_reach_a_commit_even_when_the_developer_unignores_them(tmp_path: Path) -> None:
    project = _project(tmp_path)
    worktree = gitops.create_worktree(project, "tunaflow/x", "main", tmp_path / "wt")
    copy_included(project, worktree)
    # a hostile Developer drops the ignore rules and stages everything
    (worktree / ".gitignore").write_text("build/\n")
    (worktree / "feature.py").write_text("x = 1\n")
    git(worktree, "add", "-A")
    assert ".env" in git(worktree, "diff", "--cached", "--name-only")
    sha = gitops.commit_all(worktree, "tunaflow: work")
    assert sha is not None
    history = _files_in_branch_history(project, "tunaflow/x")
    assert "feature.py" in history and ".gitignore" in history
    assert ".env" not in history and "config/dev.local.json" not in history
    assert (worktree / ".env").is_file(), "the file stays in the worktree"
    assert committed_private_paths(worktree, "main") == []


def test_a_developer_commit_of_a_copied_file_is_found(tmp_path: Path) -> None:
    project = _project(tmp_path)
    worktree = gitops.create_worktree(project, "tunaflow/x", "main", tmp_path / "wt")
    copy_included(project, worktree)
    git(worktree, "add", "-f", ".env")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "oops"],
                   cwd=worktree, check=True)
    assert committed_private_paths(worktree, "main") == [".env"]
    # tunaflow's next commit takes it out of the branch's tree (history keeps the Developer's commit)
    gitops.commit_all(worktree, "tunaflow: work")
    assert ".env" not in git(worktree, "ls-tree", "-r", "--name-only", "HEAD").split()
