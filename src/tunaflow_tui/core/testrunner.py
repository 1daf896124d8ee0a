"""The project's own tests: detect how they are run, and run them with a timeout in the worktree."""

from __future__ import annotations

import configparser
import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from tunaflow_tui.core.processes import LIVE_GROUPS, ProcessIdentity, identify

TestStatus = Literal["passed", "failed", "timeout", "error"]
"""``error``: the tests could not start (interpreter, module or command missing) — not a failure of the code."""

DEFAULT_TIMEOUT_S = 600.0
DEFAULT_MAX_OUTPUT_BYTES = 64_000
_KILL_GRACE_S = 2.0
_NPM_PLACEHOLDER = "no test specified"
_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]")
_PYTEST_SUMMARY_RE = re.compile(r"^=*\s*((?:\d+ \w+|no tests ran)[^=]*? in [\d.]+s(?: \([\d:]+\))?)\s*=*$")
_MAKE_TEST_RE = re.compile(r"^test\s*::?(?!=)", re.MULTILINE)
_UNITTEST_RAN_RE = re.compile(r"^Ran (\d+) tests? in [\d.]+s$")
_UNITTEST_RESULT_RE = re.compile(r"^(OK|FAILED)\b.*$")
_UNITTEST_IMPORT_RE = re.compile(r"^\s*(?:import unittest\b|from unittest\b)", re.MULTILINE)
_PYTEST_IMPORT_RE = re.compile(r"^\s*(?:import pytest\b|from pytest\b|from _pytest\b)", re.MULTILINE)
_SHELL_NOT_FOUND = 127
_SHELL_NOT_EXECUTABLE = 126
_PYTEST_USAGE_ERROR = 4
_MAX_SCANNED_TEST_FILES = 200
_SCAN_BYTES = 64_000


@dataclass(frozen=True)
class TestCommand:
    """An argv to run the project's tests, and a short label for the UI (``pytest``, ``npm test``)."""

    __test__ = False  # not a pytest test class

    argv: tuple[str, ...]
    label: str


@dataclass(frozen=True)
class TestResult:
    """Outcome of one test run: status, exit code, duration, the tail of the output and a one-line summary."""

    __test__ = False

    status: TestStatus
    exit_code: int | None
    duration_s: float
    output: str
    summary: str
    environment: str = ""  # which environment ran the tests (``core.projectenv``), when known


def _project_python(root: Path) -> str:
    for candidate in (".venv/bin/python", "venv/bin/python", ".venv/Scripts/python.exe"):
        path = root / candidate
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return sys.executable


def _test_files(root: Path) -> list[Path]:
    found: list[Path] = list(root.glob("test_*.py"))
    for folder in ("tests", "test"):
        base = root / folder
        if base.is_dir():
            found += [*base.rglob("test_*.py"), *base.rglob("*_test.py")]
    return found[:_MAX_SCANNED_TEST_FILES]


def _is_unittest_module(path: Path) -> bool:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            text = fh.read(_SCAN_BYTES)
    except OSError:
        return False
    return bool(_UNITTEST_IMPORT_RE.search(text)) and "TestCase" in text and not _PYTEST_IMPORT_RE.search(text)


def _has_section(path: Path, section: str) -> bool:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError, OSError):
        return False
    return parser.has_section(section)


def _pytest_configured(root: Path) -> bool:
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
            data = {}
        tool = data.get("tool")
        if isinstance(tool, dict) and "pytest" in tool:
            return True
    if (root / "pytest.ini").is_file() or (root / "conftest.py").is_file():
        return True
    if (root / "setup.cfg").is_file() and _has_section(root / "setup.cfg", "tool:pytest"):
        return True
    return (root / "tox.ini").is_file() and _has_section(root / "tox.ini", "pytest")


def _python_runner(root: Path) -> Literal["pytest", "unittest"] | None:
    """pytest when configured; unittest when every test module is a plain ``unittest`` one; else pytest.

    A suite written for the standard library runs without pytest installed, so it runs green in any
    environment; pytest would run it too, but may not be there.
    """
    if _pytest_configured(root):
        return "pytest"
    files = _test_files(root)
    if not files:
        return None
    return "unittest" if all(_is_unittest_module(f) for f in files) else "pytest"


def _unittest_command(root: Path, python: str) -> TestCommand:
    argv = [python, "-m", "unittest", "discover"]
    start = next((name for name in ("tests", "test") if (root / name).is_dir()), None)
    if start is not None:
        argv += ["-s", start]
        if (root / start / "__init__.py").is_file():
            argv += ["-t", "."]
    files = _test_files(root)
    if files and not any(f.name.startswith("test") for f in files):
        argv += ["-p", "*_test.py"]
    return TestCommand(tuple(argv), "unittest")


def _npm_command(root: Path) -> TestCommand | None:
    package = root / "package.json"
    if not package.is_file():
        return None
    try:
        data = json.loads(package.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    script = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(script, str) or not script.strip() or _NPM_PLACEHOLDER in script:
        return None
    if (root / "pnpm-lock.yaml").is_file():
        return TestCommand(("pnpm", "test"), "pnpm test")
    if (root / "yarn.lock").is_file():
        return TestCommand(("yarn", "test"), "yarn test")
    return TestCommand(("npm", "test"), "npm test")


def _make_command(root: Path) -> TestCommand | None:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        path = root / name
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            return TestCommand(("make", "test"), "make test") if _MAKE_TEST_RE.search(text) else None
    return None


def detect_test_command(
    root: Path, configured: Sequence[str] | str | None = None, *, python: str | None = None
) -> TestCommand | None:
    """How this project runs its tests, or None when no test setup is found.

    A configured command wins (a string is split like a shell would, but never run by one). Otherwise,
    in order: pytest (or unittest, for a suite that only uses it), npm/pnpm/yarn test, cargo test,
    go test ./..., make test. ``python`` is the interpreter to use (see ``core.projectenv``); by
    default a ``.venv``/``venv`` in ``root``, else tunaflow's own.
    """
    root = Path(root)
    if configured:
        argv = tuple(shlex.split(configured) if isinstance(configured, str) else configured)
        if argv:
            return TestCommand(argv, " ".join(argv))
    runner = _python_runner(root)
    interpreter = python or _project_python(root)
    if runner == "pytest":
        return TestCommand((interpreter, "-m", "pytest"), "pytest")
    if runner == "unittest":
        return _unittest_command(root, interpreter)
    npm = _npm_command(root)
    if npm is not None:
        return npm
    if (root / "Cargo.toml").is_file():
        return TestCommand(("cargo", "test"), "cargo test")
    if (root / "go.mod").is_file():
        return TestCommand(("go", "test", "./..."), "go test")
    return _make_command(root)


class _TailBuffer:
    """Keeps the last ``limit`` bytes of a stream and the total size seen."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.total = 0

    def feed(self, stream: IO[bytes]) -> None:
        while chunk := stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536):
            self.total += len(chunk)
            self.chunks.append(chunk)
            self.size += len(chunk)
            while self.size - len(self.chunks[0]) >= self.limit:
                self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        data = b"".join(self.chunks)[-self.limit:]
        text = data.decode("utf-8", "replace")
        if self.total > len(data):
            return f"[… output truncated: last {len(data)} of {self.total} bytes …]\n" + text.lstrip("\ufffd")
        return text


def summarize_output(output: str) -> str:
    """One line describing a test run: pytest's final count line, unittest's "Ran N tests — OK", else the
    last non-empty line."""
    lines = [_ANSI_RE.sub("", line).strip() for line in output.splitlines()]
    lines = [line for line in lines if line]
    for line in reversed(lines):
        match = _PYTEST_SUMMARY_RE.match(line)
        if match:
            return match.group(1).strip()
    if lines and _UNITTEST_RESULT_RE.match(lines[-1]):
        ran = next((line for line in reversed(lines) if _UNITTEST_RAN_RE.match(line)), None)
        if ran is not None:
            return f"{ran} — {lines[-1]}"[:300]
    return lines[-1][:300] if lines else ""


def _module_of(command: TestCommand) -> str | None:
    """``pytest`` for ``python -m pytest …``; None for any other command."""
    argv = command.argv
    return argv[2] if len(argv) >= 3 and argv[1] == "-m" else None


def cannot_start_reason(command: TestCommand, code: int | None, output: str) -> str | None:
    """Why a finished run never got to run the tests, or None when it did (passing or failing).

    A ``python -m MODULE`` whose interpreter has no MODULE, a shell's "command not found" (127) or
    "not executable" (126), and pytest's usage error (4: e.g. an option of a plugin that is not
    installed) are not test failures: the environment is missing something.
    """
    if code is None or code == 0:
        return None
    tail = [line.strip() for line in _ANSI_RE.sub("", output).splitlines() if line.strip()]
    last = tail[-1][:300] if tail else ""
    module = _module_of(command)
    if module is not None and code == 1:
        missing = re.compile(rf": No module named {re.escape(module)}(?:\.__main__)?\s*$"
                             rf"|Error while finding module specification for '{re.escape(module)}'")
        if any(missing.search(line) for line in tail[-5:]):
            return f"{module} is not installed for {command.argv[0]} (No module named {module})"
    if code == _SHELL_NOT_FOUND:
        return f"command not found: {last}" if last else f"{command.label}: command not found (exit 127)"
    if code == _SHELL_NOT_EXECUTABLE:
        return f"command cannot be executed: {last}" if last else f"{command.label}: not executable (exit 126)"
    if module == "pytest" and code == _PYTEST_USAGE_ERROR:
        return f"pytest could not start (usage error): {last}"
    return None


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the whole process group, killing what is left after a grace period."""
    _signal_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=_KILL_GRACE_S)
    # whatever the leader started and left behind goes too
    _signal_group(proc.pid, signal.SIGKILL)
    proc.wait()


def run_tests(
    root: Path,
    command: TestCommand,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    env: Mapping[str, str] | None = None,
    on_start: Callable[[ProcessIdentity], None] | None = None,
) -> TestResult:
    """Run ``command`` in ``root`` in its own process group; on timeout the whole group is killed.

    stdin is closed, the environment passes through (plus ``env``), stdout and stderr are merged and
    only their last ``max_output_bytes`` are kept. Never raises for a failing or missing command.
    The group is listed in :data:`~tunaflow_tui.core.processes.LIVE_GROUPS` while it runs (so a
    signal to tunaflow ends it too); ``on_start`` is told its identity as soon as it started.
    """
    started = time.monotonic()
    full_env = {**os.environ, **(env or {})}
    try:
        proc = subprocess.Popen(
            list(command.argv),
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=full_env,
            start_new_session=True,
        )
    except FileNotFoundError:
        if not Path(root).is_dir():
            return TestResult("error", None, 0.0, "", f"project folder not found: {root}")
        binary = command.argv[0] if command.argv else ""
        if os.path.isabs(binary):
            broken = " (a broken link: was its environment moved or its Python removed?)" \
                if os.path.islink(binary) else ""
            return TestResult("error", None, 0.0, "", f"cannot start {command.label}: {binary} does not exist{broken}")
        return TestResult("error", None, 0.0, "", f"command not found: {binary or 'test command'} (is it installed and on PATH?)")
    except (PermissionError, OSError) as exc:
        return TestResult("error", None, 0.0, "", f"cannot start {command.label}: {exc}")
    identity = identify(proc.pid)
    LIVE_GROUPS.add(identity)
    if on_start is not None:
        on_start(identity)
    buffer = _TailBuffer(max_output_bytes)
    assert proc.stdout is not None
    reader = threading.Thread(target=buffer.feed, args=(proc.stdout,), daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        # also reaps children a finished run left behind, which would otherwise hold the pipe open
        _kill_group(proc)
        LIVE_GROUPS.discard(identity.pgid)
    reader.join(timeout=_KILL_GRACE_S)
    proc.stdout.close()
    duration = time.monotonic() - started
    output = buffer.text()
    if timed_out:
        return TestResult("timeout", None, duration, output, f"{command.label} timed out after {timeout_s:g}s")
    code = proc.returncode
    reason = cannot_start_reason(command, code, output)
    if reason is not None:
        return TestResult("error", code, duration, output, reason)
    summary = summarize_output(output) or f"{command.label} exited with code {code}"
    return TestResult("passed" if code == 0 else "failed", code, duration, output, summary)
