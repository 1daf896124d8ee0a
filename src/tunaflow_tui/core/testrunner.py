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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

TestStatus = Literal["passed", "failed", "timeout", "not_found", "error"]

DEFAULT_TIMEOUT_S = 600.0
DEFAULT_MAX_OUTPUT_BYTES = 64_000
_KILL_GRACE_S = 2.0
_NPM_PLACEHOLDER = "no test specified"
_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]")
_PYTEST_SUMMARY_RE = re.compile(r"^=*\s*((?:\d+ \w+|no tests ran)[^=]*? in [\d.]+s(?: \([\d:]+\))?)\s*=*$")
_MAKE_TEST_RE = re.compile(r"^test\s*::?(?!=)", re.MULTILINE)


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


def _project_python(root: Path) -> str:
    for candidate in (".venv/bin/python", "venv/bin/python", ".venv/Scripts/python.exe"):
        path = root / candidate
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return sys.executable


def _has_section(path: Path, section: str) -> bool:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError, OSError):
        return False
    return parser.has_section(section)


def _uses_pytest(root: Path) -> bool:
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
    if (root / "tox.ini").is_file() and _has_section(root / "tox.ini", "pytest"):
        return True
    if any(root.glob("test_*.py")):
        return True
    tests = root / "tests"
    if tests.is_dir():
        return any(tests.rglob("test_*.py")) or any(tests.rglob("*_test.py"))
    return False


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


def detect_test_command(root: Path, configured: Sequence[str] | str | None = None) -> TestCommand | None:
    """How this project runs its tests, or None when no test setup is found.

    A configured command wins (a string is split like a shell would, but never run by one). Otherwise,
    in order: pytest, npm/pnpm/yarn test, cargo test, go test ./..., make test.
    """
    root = Path(root)
    if configured:
        argv = tuple(shlex.split(configured) if isinstance(configured, str) else configured)
        if argv:
            return TestCommand(argv, " ".join(argv))
    if _uses_pytest(root):
        return TestCommand((_project_python(root), "-m", "pytest"), "pytest")
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
    """One line describing a test run: pytest's final count line if present, else the last non-empty line."""
    lines = [_ANSI_RE.sub("", line).strip() for line in output.splitlines()]
    lines = [line for line in lines if line]
    for line in reversed(lines):
        match = _PYTEST_SUMMARY_RE.match(line)
        if match:
            return match.group(1).strip()
    return lines[-1][:300] if lines else ""


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
) -> TestResult:
    """Run ``command`` in ``root`` in its own process group; on timeout the whole group is killed.

    stdin is closed, the environment passes through (plus ``env``), stdout and stderr are merged and
    only their last ``max_output_bytes`` are kept. Never raises for a failing or missing command.
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
        return TestResult("not_found", None, 0.0, "", f"{binary or 'test command'} not found: is it installed and on PATH?")
    except (PermissionError, OSError) as exc:
        return TestResult("error", None, 0.0, "", f"cannot start {command.label}: {exc}")
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
    reader.join(timeout=_KILL_GRACE_S)
    proc.stdout.close()
    duration = time.monotonic() - started
    output = buffer.text()
    if timed_out:
        return TestResult("timeout", None, duration, output, f"{command.label} timed out after {timeout_s:g}s")
    code = proc.returncode
    summary = summarize_output(output) or f"{command.label} exited with code {code}"
    return TestResult("passed" if code == 0 else "failed", code, duration, output, summary)
