"""Real project environments for tests: virtualenvs made with ``python -m venv``, src-layout projects, git worktrees."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DEPENDENCY = "tf_only_in_project_venv"
"""A module that exists only in the project's own virtualenv, never in tunaflow's environment."""


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` and return its stdout."""
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def write(root: Path, files: dict[str, str]) -> None:
    """Write ``files`` (relative path → text) under ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def site_packages(venv: Path) -> Path:
    """The site-packages directory of a virtualenv."""
    return next(venv.glob("lib/python*/site-packages"))


def make_venv(venv: Path, *, with_pytest: bool = True, editable_of: Path | None = None,
              dependency: bool = True) -> Path:
    """A real virtualenv (``--without-pip``, fast) and its interpreter.

    ``with_pytest`` makes the pytest that runs this suite importable in it (a ``.pth`` line, the way
    any path is added to an environment); ``editable_of`` adds the ``.pth`` an editable install of that
    src-layout project writes; ``dependency`` puts :data:`DEPENDENCY` in its site-packages.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    site = site_packages(venv)
    if with_pytest:
        (site / "_test_runner.pth").write_text(str(Path(pytest.__file__).resolve().parent.parent) + "\n")
    if dependency:
        (site / f"{DEPENDENCY}.py").write_text("GREETING = 'from the project venv'\n")
    if editable_of is not None:
        (site / "__editable__.calcpkg-0.1.0.pth").write_text(str((editable_of / "src").resolve()) + "\n")
    return venv / "bin" / "python"


SRC_PROJECT = {
    "pyproject.toml": (
        '[project]\nname = "calcpkg"\nversion = "0.1.0"\n\n'
        '[tool.setuptools.packages.find]\nwhere = ["src"]\n\n'
        "[tool.pytest.ini_options]\naddopts = \"-p no:cacheprovider\"\n"
    ),
    "src/calcpkg/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/test_add.py": (
        f"import {DEPENDENCY}\nfrom calcpkg import add\n\n\n"
        "def test_add():\n    assert add(1, 2) == 3\n"
        f"    assert {DEPENDENCY}.GREETING\n"
    ),
    ".gitignore": ".venv/\n__pycache__/\n",
}

WORKTREE_CHANGE = {
    "src/calcpkg/__init__.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/test_mul.py": "from calcpkg import mul\n\n\ndef test_mul():\n    assert mul(3, 4) == 12\n",
}


def src_layout_project(root: Path, *, venv: bool = True) -> Path:
    """A git repo with a src-layout package, its own ``.venv`` (with an editable install of itself)."""
    project = root / "calc"
    write(project, SRC_PROJECT)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "calc")
    if venv:
        make_venv(project / ".venv", editable_of=project)
    return project


def add_worktree(project: Path, path: Path, branch: str = "tunaflow/mul", files: dict[str, str] | None = None) -> Path:
    """A linked worktree of ``project`` on a new branch, with ``files`` written into it."""
    git(project, "worktree", "add", "-q", "-b", branch, str(path))
    write(path, files if files is not None else WORKTREE_CHANGE)
    return path
