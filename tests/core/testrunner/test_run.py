"""Running real test suites: pass, fail, timeout with a process tree, missing binaries, output caps."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from tunaflow_tui.core.testrunner import TestCommand, detect_test_command, run_tests, summarize_output


def write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def pytest_project(root: Path, failing: bool) -> Path:
    write(root, "pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-p no:cacheprovider'\n")
    write(root, "tests/test_math.py", "def test_add():\n    assert 1 + 1 == 2\n")
    if failing:
        write(root, "tests/test_broken.py", "def test_broken():\n    assert 'expected' == 'actual'\n")
    return root


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    if status.exists():  # a zombie waiting for a reaper is not running
        return "\nState:\tZ" not in status.read_text()
    return True


def gone_soon(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_passing_pytest_project(tmp_path: Path) -> None:
    root = pytest_project(tmp_path, failing=False)
    command = detect_test_command(root)
    assert command is not None
    result = run_tests(root, command, timeout_s=60)
    assert result.status == "passed"
    assert result.exit_code == 0
    assert result.summary.startswith("1 passed in ")
    assert "1 passed" in result.output
    assert result.duration_s > 0


def test_summary_survives_a_project_that_already_asks_for_quiet_output(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-q -p no:cacheprovider'\n")
    write(tmp_path, "tests/test_math.py", "def test_add():\n    assert 1 + 1 == 2\n")
    command = detect_test_command(tmp_path)
    assert command is not None
    result = run_tests(tmp_path, command, timeout_s=60)
    assert result.summary.startswith("1 passed in "), result.output


def test_failing_pytest_project(tmp_path: Path) -> None:
    root = pytest_project(tmp_path, failing=True)
    command = detect_test_command(root)
    assert command is not None
    result = run_tests(root, command, timeout_s=60)
    assert result.status == "failed"
    assert result.exit_code == 1
    assert result.summary.startswith("1 failed, 1 passed in ")
    assert "test_broken" in result.output


def test_makefile_project(tmp_path: Path) -> None:
    write(tmp_path, "Makefile", "test:\n\t@echo running checks\n\t@echo all 3 checks ok\n")
    command = detect_test_command(tmp_path)
    assert command == TestCommand(("make", "test"), "make test")
    result = run_tests(tmp_path, command)
    assert result.status == "passed"
    assert result.summary == "all 3 checks ok"

    write(tmp_path, "Makefile", "test:\n\t@echo check 2 broke\n\t@exit 3\n")
    failed = run_tests(tmp_path, command)
    assert failed.status == "failed"
    assert failed.exit_code != 0
    assert "check 2 broke" in failed.output


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    script = "sleep 300 & echo $! > child.pid; echo started; wait"
    started = time.monotonic()
    result = run_tests(tmp_path, TestCommand(("sh", "-c", script), "hang"), timeout_s=1)
    assert time.monotonic() - started < 10
    assert result.status == "timeout"
    assert result.exit_code is None
    assert "timed out after 1s" in result.summary
    assert "started" in result.output
    assert gone_soon(int((tmp_path / "child.pid").read_text()))


def test_a_background_process_left_behind_does_not_hang_the_run(tmp_path: Path) -> None:
    script = "sleep 300 & echo $! > child.pid; echo done"
    started = time.monotonic()
    result = run_tests(tmp_path, TestCommand(("sh", "-c", script), "leaky"), timeout_s=60)
    assert time.monotonic() - started < 10
    assert result.status == "passed"
    assert gone_soon(int((tmp_path / "child.pid").read_text()))


def test_missing_binary_is_an_error_not_a_failure(tmp_path: Path) -> None:
    result = run_tests(tmp_path, TestCommand(("definitely-not-a-test-runner-xyz", "test"), "xyz test"))
    assert result.status == "error"
    assert "command not found: definitely-not-a-test-runner-xyz" in result.summary


def test_stdin_is_closed_so_prompts_cannot_hang(tmp_path: Path) -> None:
    script = "import sys; data = sys.stdin.read(); print('read', len(data))"
    result = run_tests(tmp_path, TestCommand((sys.executable, "-c", script), "py"), timeout_s=10)
    assert result.status == "passed" and result.summary == "read 0"


def test_environment_passes_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TUNAFLOW_PROBE", "from-user")
    script = "import os; print(os.environ['TUNAFLOW_PROBE'], os.environ['EXTRA'])"
    result = run_tests(tmp_path, TestCommand((sys.executable, "-c", script), "py"), env={"EXTRA": "x"})
    assert result.summary == "from-user x"


def test_output_is_capped_to_its_tail(tmp_path: Path) -> None:
    script = "for i in range(100000): print(f'line {i}')\nprint('FINAL LINE')"
    result = run_tests(tmp_path, TestCommand((sys.executable, "-c", script), "py"), max_output_bytes=4000)
    first, rest = result.output.split("\n", 1)
    assert first.startswith("[… output truncated: last 4000 of ")
    assert len(rest.encode("utf-8")) <= 4000
    assert rest.endswith("FINAL LINE\n")
    assert result.summary == "FINAL LINE"


def test_summary_prefers_pytest_count_line_and_strips_colour() -> None:
    output = "....F\n\x1b[31m===== 1 failed, 4 passed, 2 warnings in 0.31s =====\x1b[0m\n\n"
    assert summarize_output(output) == "1 failed, 4 passed, 2 warnings in 0.31s"
    assert summarize_output("ok 1\nok 2\n\n   \n") == "ok 2"
    assert summarize_output("\nno tests ran in 0.01s\n") == "no tests ran in 0.01s"
    assert summarize_output("== 3 passed in 65.32s (0:01:05) ==\n") == "3 passed in 65.32s (0:01:05)"
    # the count line wins over chatter printed after it
    assert summarize_output("= 2 passed in 0.1s =\nteardown finished\n") == "2 passed in 0.1s"
    assert summarize_output("") == ""


def test_unittest_summary_reads_ran_and_ok() -> None:
    output = "....\n----------------------------------------------------------------------\nRan 4 tests in 0.003s\n\nOK\n"
    assert summarize_output(output) == "Ran 4 tests in 0.003s — OK"
    failing = "F.\n======\nFAIL: test_x\n---\nRan 2 tests in 0.001s\n\nFAILED (failures=1)\n"
    assert summarize_output(failing) == "Ran 2 tests in 0.001s — FAILED (failures=1)"
