"""keep_files: what an agent wrote in the user's tree, kept under a commit before tunaflow puts the tree back.

What a user finds afterwards with ``git show`` on the rescue: exactly the paths named that still exist, with the
content they had, in a commit of its own; the user's HEAD, index and branches as they were.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tunaflow_tui.core.gitops import keep_files


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_the_paths_named_are_kept_as_they_are_in_a_commit_of_their_own(git_repo: Path) -> None:
    (git_repo / ".gitignore").write_text("*.log\n")
    git(git_repo, "add", ".gitignore")
    git(git_repo, "commit", "-q", "-m", "ignore logs")
    (git_repo / "README.md").write_text("# sample, edited by the agent\n")
    (git_repo / "notes").mkdir()
    (git_repo / "notes" / "a*b.txt").write_text("star\n")  # a pathspec character, taken literally
    (git_repo / "notes" / "aXb.txt").write_text("not named\n")
    (git_repo / "debug.log").write_text("ignored, but written by the agent\n")
    os.symlink("README.md", git_repo / "link")
    head, index, branches = git(git_repo, "rev-parse", "HEAD"), git(git_repo, "ls-files", "-s"), git(
        git_repo, "for-each-ref")
    status = git(git_repo, "status", "--porcelain")

    sha = keep_files(git_repo, ["README.md", "notes/a*b.txt", "debug.log", "link", "gone.txt"],
                     "developer wrote these in the main working tree")

    assert sha is not None and len(sha) == 40
    assert git(git_repo, "rev-list", "--parents", "-n", "1", sha) == sha, "no parent"
    assert git(git_repo, "log", "-1", "--format=%s", sha) == "developer wrote these in the main working tree"
    assert git(git_repo, "ls-tree", "-r", "--name-only", sha).splitlines() == [
        "README.md", "debug.log", "link", "notes/a*b.txt"], "exactly the named paths that exist"
    assert git(git_repo, "show", f"{sha}:README.md") == "# sample, edited by the agent"
    assert git(git_repo, "show", f"{sha}:notes/a*b.txt") == "star"
    assert git(git_repo, "show", f"{sha}:debug.log") == "ignored, but written by the agent"
    mode, kind, blob = git(git_repo, "ls-tree", sha, "link").split()[:3]
    assert (mode, kind, git(git_repo, "cat-file", "-p", blob)) == ("120000", "blob", "README.md"), "a link as a link"
    assert (git(git_repo, "rev-parse", "HEAD"), git(git_repo, "ls-files", "-s"), git(git_repo, "for-each-ref"),
            git(git_repo, "status", "--porcelain")) == (head, index, branches, status), "nothing of the user's moved"


def test_nothing_is_kept_when_none_of_the_paths_is_there(git_repo: Path) -> None:
    before = git(git_repo, "count-objects")
    assert keep_files(git_repo, ["gone.txt", "dir/also-gone"], "nothing") is None
    assert git(git_repo, "count-objects") == before, "no object written"


def test_the_commit_needs_no_identity_the_user_has_not_set(git_repo: Path, tmp_path: Path, monkeypatch) -> None:
    """A machine with no git identity anywhere: the rescue is still made, signed by tunaflow's own."""
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    for key in ("user.name", "user.email"):
        subprocess.run(["git", "-C", str(git_repo), "config", "--unset", key], check=False)
    (git_repo / "README.md").write_text("changed\n")
    sha = keep_files(git_repo, ["README.md"], "kept")
    assert sha is not None
    assert git(git_repo, "show", f"{sha}:README.md") == "changed"
