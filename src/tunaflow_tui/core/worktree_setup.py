"""``[workflow] worktree_setup``: the user's command that makes a new worktree ready to work in.

It runs once in each new worktree, before the Developer starts (``uv sync``, ``npm ci``, code
generation, …), with ``TUNAFLOW_WORKTREE``, ``TUNAFLOW_PROJECT`` and ``TUNAFLOW_BRANCH`` set. A string
is run by ``/bin/sh -c`` (it is the user's own configuration, never agent output); a list is an argv.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tunaflow_tui.core.testrunner import TestCommand, run_tests

DEFAULT_SETUP_TIMEOUT_S = 900.0
SETUP_OUTPUT_BYTES = 32_000


@dataclass(frozen=True)
class SetupResult:
    """How the setup command ended: ``ok``, its exit code, duration, output tail, and why it failed."""

    ok: bool
    command: str
    exit_code: int | None
    duration_s: float
    output: str
    reason: str = ""


def setup_command(configured: str | Sequence[str]) -> TestCommand:
    """The argv for the configured setup: a string through ``/bin/sh -c``, a list as it is."""
    if isinstance(configured, str):
        return TestCommand(("/bin/sh", "-c", configured), configured)
    argv = tuple(configured)
    return TestCommand(argv, " ".join(argv))


def run_setup(
    configured: str | Sequence[str],
    worktree: Path,
    *,
    project: Path,
    branch: str,
    timeout_s: float = DEFAULT_SETUP_TIMEOUT_S,
) -> SetupResult:
    """Run the setup command in ``worktree``; never raises for a failing, missing or hanging command."""
    command = setup_command(configured)
    if not command.argv:
        return SetupResult(True, "", 0, 0.0, "")
    env = {"TUNAFLOW_WORKTREE": str(worktree), "TUNAFLOW_PROJECT": str(project), "TUNAFLOW_BRANCH": branch}
    result = run_tests(Path(worktree), command, timeout_s=timeout_s, max_output_bytes=SETUP_OUTPUT_BYTES, env=env)
    if result.status == "passed":
        return SetupResult(True, command.label, result.exit_code, result.duration_s, result.output)
    if result.status == "timeout":
        reason = f"timed out after {timeout_s:g}s"
    elif result.exit_code is None:
        reason = result.summary
    else:
        last = result.summary if result.status == "error" else _last_line(result.output)
        reason = f"exited with code {result.exit_code}" + (f": {last}" if last else "")
    return SetupResult(False, command.label, result.exit_code, result.duration_s, result.output, reason)


def _last_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
