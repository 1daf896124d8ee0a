"""Detecting how a project runs its tests."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tunaflow_tui.core.testrunner import TestCommand, detect_test_command


def write(root: Path, name: str, text: str = "") -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def pytest_argv(root: Path) -> tuple[str, ...]:
    return (sys.executable, "-m", "pytest")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = ['tests']\n"),
        ("pytest.ini", "[pytest]\n"),
        ("setup.cfg", "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n"),
        ("tox.ini", "[tox]\nenvlist = py3\n\n[pytest]\n"),
        ("conftest.py", ""),
        ("tests/test_app.py", "def test_x(): pass\n"),
        ("tests/unit/app_test.py", "def test_x(): pass\n"),
        ("test_root.py", "def test_x(): pass\n"),
    ],
)
def test_pytest_projects(tmp_path: Path, name: str, text: str) -> None:
    write(tmp_path, name, text)
    assert detect_test_command(tmp_path) == TestCommand(pytest_argv(tmp_path), "pytest")


def test_pyproject_without_pytest_config_and_no_tests_is_not_pytest(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[project]\nname = 'x'\n")
    write(tmp_path, "setup.cfg", "[metadata]\nname = x\n")
    write(tmp_path, "tests/helpers.py", "")
    assert detect_test_command(tmp_path) is None


def test_the_projects_own_virtualenv_is_preferred(tmp_path: Path) -> None:
    write(tmp_path, "pytest.ini", "[pytest]\n")
    python = tmp_path / ".venv" / "bin" / "python"
    write(tmp_path, ".venv/bin/python", "#!/bin/sh\n")
    os.chmod(python, 0o755)
    command = detect_test_command(tmp_path)
    assert command is not None and command.argv == (str(python), "-m", "pytest")


@pytest.mark.parametrize(
    ("lockfile", "argv"),
    [(None, ("npm", "test")), ("pnpm-lock.yaml", ("pnpm", "test")), ("yarn.lock", ("yarn", "test"))],
)
def test_node_projects_use_their_package_manager(tmp_path: Path, lockfile: str | None, argv: tuple[str, ...]) -> None:
    write(tmp_path, "package.json", json.dumps({"scripts": {"test": "vitest run"}}))
    if lockfile:
        write(tmp_path, lockfile)
    command = detect_test_command(tmp_path)
    assert command is not None and command.argv == argv and command.label == " ".join(argv)


def test_npm_placeholder_test_script_means_no_tests(tmp_path: Path) -> None:
    script = 'echo "Error: no test specified" && exit 1'
    write(tmp_path, "package.json", json.dumps({"scripts": {"test": script}}))
    assert detect_test_command(tmp_path) is None
    write(tmp_path, "package.json", "{not json")
    assert detect_test_command(tmp_path) is None


def test_cargo_go_and_make(tmp_path: Path) -> None:
    cargo, go, make = tmp_path / "cargo", tmp_path / "go", tmp_path / "make"
    write(cargo, "Cargo.toml", "[package]\nname = 'x'\n")
    write(go, "go.mod", "module example.com/x\n")
    write(make, "Makefile", "build:\n\tcc x.c\n\ntest: build\n\t./run-tests\n")
    assert detect_test_command(cargo) == TestCommand(("cargo", "test"), "cargo test")
    assert detect_test_command(go) == TestCommand(("go", "test", "./..."), "go test")
    assert detect_test_command(make) == TestCommand(("make", "test"), "make test")


def test_makefile_without_a_test_target_is_not_a_test_setup(tmp_path: Path) -> None:
    write(tmp_path, "Makefile", "build:\n\tcc x.c\ntestdata:\n\ttrue\ntest := 1\n")
    assert detect_test_command(tmp_path) is None


def test_pytest_comes_before_make(tmp_path: Path) -> None:
    write(tmp_path, "Makefile", "test:\n\ttrue\n")
    write(tmp_path, "tests/test_a.py", "")
    command = detect_test_command(tmp_path)
    assert command is not None and command.label == "pytest"


def test_configured_command_wins(tmp_path: Path) -> None:
    write(tmp_path, "pytest.ini", "[pytest]\n")
    assert detect_test_command(tmp_path, ["tox", "-e", "py311"]) == TestCommand(("tox", "-e", "py311"), "tox -e py311")
    assert detect_test_command(tmp_path, "make 'check all'") == TestCommand(("make", "check all"), "make check all")


def test_empty_project_has_no_tests(tmp_path: Path) -> None:
    write(tmp_path, "README.md", "# nothing\n")
    assert detect_test_command(tmp_path) is None
    assert detect_test_command(tmp_path, []) is None


UNITTEST_MODULE = (
    "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_x(self) -> None:\n        self.assertTrue(True)\n"
)


def test_a_suite_that_only_uses_unittest_runs_with_unittest(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[project]\nname = 'x'\n")
    write(tmp_path, "tests/test_a.py", UNITTEST_MODULE)
    command = detect_test_command(tmp_path)
    assert command == TestCommand((sys.executable, "-m", "unittest", "discover", "-s", "tests"), "unittest")
    write(tmp_path, "tests/__init__.py")
    command = detect_test_command(tmp_path)
    assert command is not None and command.argv[-4:] == ("-s", "tests", "-t", ".")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("tests/test_b.py", "def test_b():\n    assert True\n"),  # a plain pytest function beside it
        ("tests/test_b.py", "import pytest\n" + UNITTEST_MODULE),  # unittest classes using pytest
        ("pytest.ini", "[pytest]\n"),  # configured for pytest
    ],
)
def test_anything_pytest_about_the_suite_keeps_pytest(tmp_path: Path, name: str, text: str) -> None:
    write(tmp_path, "tests/test_a.py", UNITTEST_MODULE)
    write(tmp_path, name, text)
    command = detect_test_command(tmp_path)
    assert command is not None and command.label == "pytest"


def test_the_interpreter_given_is_used(tmp_path: Path) -> None:
    write(tmp_path, "pytest.ini", "[pytest]\n")
    write(tmp_path, ".venv/bin/python", "#!/bin/sh\n")
    os.chmod(tmp_path / ".venv" / "bin" / "python", 0o755)
    command = detect_test_command(tmp_path, python="/opt/project-env/bin/python")
    assert command is not None and command.argv == ("/opt/project-env/bin/python", "-m", "pytest")
