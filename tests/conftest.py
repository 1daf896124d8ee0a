"""Shared test set-up: a deterministic git identity and a clean environment for subprocesses."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # Tests create real git repositories; CI machines may have no global git identity.
    os.environ.setdefault("GIT_AUTHOR_NAME", "tunaflow-tests")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "tests@tunaflow.invalid")
    os.environ.setdefault("GIT_COMMITTER_NAME", "tunaflow-tests")
    os.environ.setdefault("GIT_COMMITTER_EMAIL", "tests@tunaflow.invalid")
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A fresh git repository with one commit on branch main."""
    repo = tmp_path / "project"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "README.md").write_text("# sample\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "initial"], check=True)
    return repo
