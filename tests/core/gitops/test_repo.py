"""Repository queries and commit_all on real git repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tunaflow_tui.core.gitops import (
    GitError,
    add_local_exclude,
    branch_exists,
    commit_all,
    current_branch,
    has_commits,
    head_sha,
    init_repo,
    is_clean,
    is_git_repo,
    repo_root,
    validate_branch_name,
)


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def test_is_git_repo_distinguishes_repo_plain_dir_and_missing_path(git_repo: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert is_git_repo(git_repo)
    (git_repo / "sub").mkdir()
    assert is_git_repo(git_repo / "sub")
    assert not is_git_repo(plain)
    assert not is_git_repo(tmp_path / "missing")


def test_init_repo_creates_an_empty_repository_on_the_chosen_branch(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "new" / "proj")
    assert root == (tmp_path / "new" / "proj").resolve()
    assert is_git_repo(root)
    assert current_branch(root) == "main"
    assert not has_commits(root)
    with pytest.raises(GitError):
        head_sha(root)


def test_repo_root_from_a_subdirectory(git_repo: Path) -> None:
    (git_repo / "a" / "b").mkdir(parents=True)
    assert repo_root(git_repo / "a" / "b") == git_repo.resolve()


def test_current_branch_is_none_when_detached(git_repo: Path) -> None:
    assert current_branch(git_repo) == "main"
    git(git_repo, "checkout", "-q", "--detach")
    assert current_branch(git_repo) is None


def test_head_sha_and_branch_exists(git_repo: Path) -> None:
    assert head_sha(git_repo) == git(git_repo, "rev-parse", "HEAD")
    assert branch_exists(git_repo, "main")
    assert not branch_exists(git_repo, "tunaflow/nothing")


def test_is_clean_sees_modifications_and_untracked_files(git_repo: Path) -> None:
    assert is_clean(git_repo)
    (git_repo / "new.txt").write_text("x\n", encoding="utf-8")
    assert not is_clean(git_repo)
    assert is_clean(git_repo, include_untracked=False)
    (git_repo / "README.md").write_text("changed\n", encoding="utf-8")
    assert not is_clean(git_repo, include_untracked=False)


def test_commit_all_commits_new_modified_and_deleted_files(git_repo: Path) -> None:
    (git_repo / "README.md").unlink()
    (git_repo / "src").mkdir()
    (git_repo / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    sha = commit_all(git_repo, "Add the app")
    assert sha == git(git_repo, "rev-parse", "HEAD")
    assert git(git_repo, "log", "-1", "--format=%s") == "Add the app"
    assert git(git_repo, "ls-files") == "src/app.py"
    assert is_clean(git_repo)


def test_commit_all_returns_none_when_nothing_changed(git_repo: Path) -> None:
    before = head_sha(git_repo)
    assert commit_all(git_repo, "nothing") is None
    assert head_sha(git_repo) == before


def test_commit_all_works_in_a_fresh_repository(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "fresh")
    assert commit_all(root, "empty") is None
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    assert commit_all(root, "first") == head_sha(root)


def test_commit_all_falls_back_to_a_tunaflow_identity_when_none_is_configured(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty_home = tmp_path / "home"
    empty_home.mkdir()
    monkeypatch.setenv("HOME", str(empty_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(empty_home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # no hostname-derived identity either: git must be told explicitly
    monkeypatch.setenv("EMAIL", "")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(name, raising=False)
    unset = subprocess.run(["git", "-C", str(git_repo), "config", "--get", "user.email"], capture_output=True)
    assert unset.returncode != 0, "the test needs a machine state without any configured identity"
    (git_repo / "file.txt").write_text("content\n", encoding="utf-8")
    sha = commit_all(git_repo, "Commit without identity")
    assert sha is not None
    assert git(git_repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>") == (
        "tunaflow <tunaflow@localhost>|tunaflow <tunaflow@localhost>"
    )


def test_commit_all_keeps_the_users_identity_when_configured(git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(name, raising=False)
    git(git_repo, "config", "user.name", "Ada")
    git(git_repo, "config", "user.email", "ada@example.org")
    (git_repo / "file.txt").write_text("content\n", encoding="utf-8")
    commit_all(git_repo, "mine")
    assert git(git_repo, "log", "-1", "--format=%an <%ae>") == "Ada <ada@example.org>"


@pytest.mark.parametrize("name", ["tunaflow/add-login", "tunaflow/plan-12", "feature/x-2"])
def test_valid_branch_names_are_accepted(git_repo: Path, name: str) -> None:
    assert validate_branch_name(git_repo, name) == name


@pytest.mark.parametrize(
    "name", ["", "-rf", "a..b", "tunaflow/x.lock", "a b", "x\x00y", "trail/", "@{-1}", "a~1", "ques?tion"]
)
def test_invalid_branch_names_are_refused(git_repo: Path, name: str) -> None:
    with pytest.raises(GitError):
        validate_branch_name(git_repo, name)


def test_add_local_exclude_is_idempotent_and_hides_the_path(git_repo: Path) -> None:
    (git_repo / ".tunaflow").mkdir()
    (git_repo / ".tunaflow" / "db.sqlite").write_bytes(b"x")
    assert not is_clean(git_repo)
    assert add_local_exclude(git_repo, ".tunaflow/") is True
    assert add_local_exclude(git_repo, ".tunaflow/") is False
    assert is_clean(git_repo)
    assert git(git_repo, "status", "--porcelain") == ""


def test_missing_git_binary_is_a_clear_error(git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(git_repo))
    with pytest.raises(GitError, match="git is not installed"):
        head_sha(git_repo)
    assert not is_git_repo(git_repo)
