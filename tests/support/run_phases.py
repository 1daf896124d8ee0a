"""`tunaflow run` as a real subprocess, stopped in a chosen phase of the cycle by a stand-in that hangs there.

Phases: the Architect's first answer (``architect``), its redesign after a failed review
(``drafting``), the Developer (``developer``), its rework after a failed review (``rework``), both
reviewers at once (``reviewers``), and the project's own tests (``tests``: a slow test that the
Developer adds). The hanging stand-in writes its pid to a file once it started, streams half of its
reply and a paragraph break, then hangs (or floods, or ignores SIGTERM, as asked).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runtime_harness import PROPOSAL, REVISED, Harness, dev_turn, verdict

PHASES = ("architect", "drafting", "developer", "rework", "reviewers", "tests")

SLOW_TEST = '''import os
import pathlib
import time


def test_slow():
    marker = pathlib.Path(os.environ["TUNAFLOW_SLOW_TEST_MARKER"])
    if not marker.exists():  # slow the first time only, so that a resumed run can finish
        marker.write_text(str(os.getpid()))
        time.sleep(120)
'''


@dataclass
class PhaseRun:
    """How to stop in a phase: the pid files of the stand-ins that hang there, and the flags of the run."""

    phase: str
    started: list[Path]
    flags: tuple[str, ...]
    plan_phase: str | None  # where the plan is while it hangs (None: no plan yet)
    env: dict[str, str] = field(default_factory=dict)

    @property
    def agent(self) -> bool:
        """False for the test-run phase: what hangs there is the project's tests, not an agent."""
        return self.phase != "tests"


def script_phase(h: Harness, phase: str, **hang: Any) -> PhaseRun:
    """Write the script that hangs in ``phase``; ``hang`` adds options to the hanging turns."""
    assert phase in PHASES, phase

    def hanging(turn: dict[str, Any], name: str) -> dict[str, Any]:
        started = h.root / f"{name}.started"
        files.append(started)
        return dict(turn, hang_after_partial=120, started_file=str(started), **hang)

    files: list[Path] = []
    flags: tuple[str, ...] = ("--approve", "--accept", "--on-fail", "rework")
    turns: dict[str, list[dict[str, Any]]] = {
        "architect": [{"text": PROPOSAL}],
        "developer": [dev_turn()],
        "reviewer": [{"text": verdict("pass")}],
        "verifier": [{"text": verdict("pass")}],
    }
    env: dict[str, str] = {}
    plan_phase: str | None = {"architect": None, "drafting": "drafting", "developer": "dev", "rework": "rework",
                              "reviewers": "review", "tests": "review"}[phase]
    if phase == "architect":
        turns["architect"] = [hanging({"text": PROPOSAL}, "architect"), {"text": PROPOSAL}]
    elif phase == "drafting":
        # the first review fails and the flags send it back to the Architect, whose redesign hangs
        flags = ("--approve", "--accept", "--on-fail", "redesign")
        turns["architect"] = [{"text": PROPOSAL}, hanging({"text": REVISED}, "architect"), {"text": REVISED}]
        turns["reviewer"] = [{"text": verdict("fail", "divide is missing")}, {"text": verdict("pass")}]
    elif phase == "developer":
        turns["developer"] = [hanging(dev_turn(), "developer"), dev_turn()]
    elif phase == "rework":
        turns["reviewer"] = [{"text": verdict("fail", "mul() has no docstring")}, {"text": verdict("pass")}]
        turns["developer"] = [dev_turn(), hanging(dev_turn(), "developer"), dev_turn()]
    elif phase == "reviewers":
        turns["reviewer"] = [hanging({"text": verdict("pass")}, "reviewer"), {"text": verdict("pass")}]
        turns["verifier"] = [hanging({"text": verdict("pass")}, "verifier"), {"text": verdict("pass")}]
    else:  # tests: the Developer adds a slow test; the review's test run hangs in it
        marker = h.root / "slow-test.started"
        files.append(marker)
        env["TUNAFLOW_SLOW_TEST_MARKER"] = str(marker)
        slow = dev_turn()
        slow["write"] = {**slow["write"], "tests/test_slow.py": SLOW_TEST}
        turns["developer"] = [slow]
    h.set_script(**turns)
    h.write_config()
    return PhaseRun(phase, files, flags, plan_phase, env)


def start_run(h: Harness, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`tunaflow run` in its own session (a signal to it reaches it alone, as from another terminal)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tunaflow_tui", "run", str(h.project), *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env={**os.environ, **(env or {})},
    )


def database(h: Harness) -> Path:
    """The project's database file."""
    return h.project / ".tunaflow" / "state.db"


def query(h: Harness, sql: str, *params: object) -> list[tuple[Any, ...]]:
    """Rows from the project's database, read-only, the way a second process reads it."""
    db = database(h)
    if not db.exists():
        return []
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)) as conn:
        return conn.execute(sql, params).fetchall()


def wait_until_hanging(h: Harness, run: PhaseRun, proc: subprocess.Popen[str], timeout: float = 60.0) -> str:
    """Wait until every hanging stand-in started (and an agent's first block is stored); return that block."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            raise AssertionError(f"tunaflow run ended early ({proc.returncode}):\n{out}")
        if all(path.exists() and path.read_text().strip() for path in run.started):
            if not run.agent:
                return ""
            rows = query(h, "SELECT content FROM messages WHERE status = 'streaming' AND content != '' "
                            "ORDER BY id DESC")
            if rows:  # (codex streams no text before its item completes: one block is enough)
                return str(rows[0][0])
        time.sleep(0.1)
    raise AssertionError(f"the {run.phase} stand-in never started hanging")


def pids(run: PhaseRun) -> list[int]:
    """The pids of the hanging stand-ins (each leads its own process group)."""
    return [int(path.read_text()) for path in run.started if path.exists()]


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies waiting to be reaped do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def wait_gone(pgids: list[int], timeout: float = 20.0) -> list[int]:
    """Wait until the groups are gone; return those still alive at the deadline."""
    deadline = time.monotonic() + timeout
    alive = list(pgids)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if group_alive(p)]
        if alive:
            time.sleep(0.05)
    return alive


def kill_groups(pgids: list[int]) -> None:
    """SIGKILL the groups (cleanup: a failed test must not leave stand-ins running)."""
    for pgid in pgids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def read_until(proc: subprocess.Popen[str], text: str, timeout: float = 30.0) -> str:
    """Read the run's output until ``text`` appears; return what was read (call before communicate)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    seen = b""
    deadline = time.monotonic() + timeout
    while text.encode() not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{text!r} never appeared; the output so far:\n{seen.decode(errors='replace')}")
        ready, _, _ = select.select([fd], [], [], min(left, 0.2))
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"the run ended before {text!r}:\n{seen.decode(errors='replace')}")
            seen += chunk
    return seen.decode(errors="replace")


_EARLIER_TUNAFLOW = """
import subprocess, sys
from pathlib import Path
from tunaflow_tui.core.processes import identify
from tunaflow_tui.core.storage import Store

# an agent that ignores SIGTERM, in its own session, like every agent tunaflow starts
agent = subprocess.Popen([sys.executable, "-c",
                          "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"],
                         start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
with Store.open(Path(sys.argv[1])) as store:
    message = store.add_message(sys.argv[2], "assistant", "Working on it", persona=sys.argv[3],
                                status="streaming")
    store.record_process("agent", identify(agent.pid), label=f"{sys.argv[3]} agent (fclaude)",
                         conversation_id=sys.argv[2], message_id=message.id)
print(agent.pid)
# and then this tunaflow is gone, without stopping it
"""


def leave_agent_running(project: Path, conversation: str = "main", role: str = "architect") -> int:
    """What a crashed tunaflow leaves: an agent (deaf to SIGTERM) recorded in ``conversation``; its pid."""
    out = subprocess.run([sys.executable, "-c", _EARLIER_TUNAFLOW, str(project), conversation, role],
                         capture_output=True, text=True, timeout=60, check=True)
    return int(out.stdout.strip())
