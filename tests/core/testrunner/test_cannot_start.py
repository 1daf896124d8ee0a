"""A test run that cannot start is an error (with the reason), not a failure of the code."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from project_envs import make_venv, write

from tunaflow_tui.core.testrunner import TestCommand, cannot_start_reason, detect_test_command, run_tests


@pytest.fixture(autouse=True)
def _quiet_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def test_an_interpreter_without_pytest_is_an_error_naming_the_module(tmp_path: Path) -> None:
    python = make_venv(tmp_path / ".venv", with_pytest=False, dependency=False)
    write(tmp_path, {"pytest.ini": "[pytest]\n", "tests/test_x.py": "def test_x():\n    assert True\n"})
    command = detect_test_command(tmp_path)
    assert command is not None and command.argv == (str(python), "-m", "pytest")
    result = run_tests(tmp_path, command, timeout_s=60)
    assert result.status == "error"
    assert result.summary == f"pytest is not installed for {python} (No module named pytest)"


def test_a_missing_interpreter_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "gone" / "bin" / "python"
    result = run_tests(tmp_path, TestCommand((str(missing), "-m", "pytest"), "pytest"))
    assert result.status == "error"
    assert result.summary == f"cannot start pytest: {missing} does not exist"


def test_a_command_the_shell_cannot_find_is_an_error(tmp_path: Path) -> None:
    # what `npm test` does when the script's runner is not installed: sh says "not found", exit 127
    result = run_tests(tmp_path, TestCommand(("sh", "-c", "jest-not-installed-xyz --ci"), "npm test"))
    assert result.status == "error"
    assert result.exit_code == 127
    assert result.summary.startswith("command not found: ") and "jest-not-installed-xyz" in result.summary


def test_a_pytest_usage_error_is_an_error(tmp_path: Path) -> None:
    # e.g. addopts for a plugin this environment lacks (pytest-xdist's -n)
    write(tmp_path, {"pytest.ini": "[pytest]\naddopts = -n 4 -p no:cacheprovider\n",
                     "tests/test_x.py": "def test_x():\n    assert True\n"})
    command = detect_test_command(tmp_path, python=sys.executable)
    assert command is not None
    result = run_tests(tmp_path, command, timeout_s=60)
    assert result.status == "error" and result.exit_code == 4
    assert result.summary.startswith("pytest could not start (usage error): ")


def test_a_test_that_fails_on_a_missing_dependency_is_still_a_failure(tmp_path: Path) -> None:
    # the code under test imports something missing: that is the Developer's problem, a real failure
    write(tmp_path, {"pytest.ini": "[pytest]\naddopts = -p no:cacheprovider\n",
                     "tests/test_x.py": "def test_x():\n    import not_a_real_dependency_xyz  # noqa: F401\n"})
    command = detect_test_command(tmp_path, python=sys.executable)
    assert command is not None
    result = run_tests(tmp_path, command, timeout_s=60)
    assert result.status == "failed"
    assert "No module named 'not_a_real_dependency_xyz'" in result.output


@pytest.mark.parametrize(
    ("argv", "code", "output", "expected"),
    [
        (("py", "-m", "pytest"), 1, "/x/py: No module named pytest\n", "pytest is not installed"),
        (("py", "-m", "pytest"), 1, "E   ModuleNotFoundError: No module named 'pytest'\n", None),
        (("py", "-m", "unittest"), 1, "FAILED (failures=1)\n", None),
        (("npm", "test"), 1, "1 failing\n", None),
        (("npm", "test"), 127, "sh: 1: vitest: not found\n", "command not found: sh: 1: vitest: not found"),
        (("py", "-m", "pytest"), 0, "/x/py: No module named pytest\n", None),
    ],
)
def test_cannot_start_reasons(argv: tuple[str, ...], code: int, output: str, expected: str | None) -> None:
    reason = cannot_start_reason(TestCommand(argv, argv[-1]), code, output)
    if expected is None:
        assert reason is None
    else:
        assert reason is not None and reason.startswith(expected)
