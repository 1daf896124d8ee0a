"""kill -9 at each phase of a real `tunaflow run` process, then `tunaflow run --resume` finishes the plan."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runtime_harness import PROPOSAL, Harness, dev_turn, verdict

from tunaflow_tui.core.storage import Store

pytestmark = pytest.mark.e2e


def _start_run(h: Harness, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tunaflow_tui", "run", str(h.project), *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )


def _wait_for_partial(db: Path, started: Path, proc: subprocess.Popen[str], timeout: float = 30.0) -> str:
    """Wait until the hanging agent started and its first block reached the database."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"tunaflow run ended early: {proc.stdout.read() if proc.stdout else ''}"
        if started.exists() and db.exists():
            with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
                row = conn.execute(
                    "SELECT content FROM messages WHERE status = 'streaming' AND content != '' ORDER BY id DESC"
                ).fetchone()
            if row:
                return str(row[0])
        time.sleep(0.1)
    raise AssertionError("the agent never started streaming")


@pytest.mark.parametrize("phase", ["architect", "developer", "reviewer", "rework"])
def test_kill_9_then_resume_reaches_done(harness: Harness, phase: str) -> None:
    started = harness.root / f"{phase}.started"
    turns = {
        "architect": [{"text": PROPOSAL}],
        "developer": [dev_turn()],
        "reviewer": [{"text": verdict("pass")}],
        "verifier": [{"text": verdict("pass")}],
    }
    if phase == "rework":
        # the first review fails; the Developer's rework is the step that gets killed
        turns["reviewer"] = [{"text": verdict("fail", "mul() has no docstring")}, {"text": verdict("pass")}]
        turns["developer"] = [dev_turn(), dict(dev_turn(), hang_after_partial=120, started_file=str(started)),
                              dev_turn()]
    else:
        first = dict(turns[phase][0], hang_after_partial=120, started_file=str(started))
        turns[phase] = [first, turns[phase][0]]
    harness.set_script(**turns)
    flags = ("--approve", "--accept", "--on-fail", "rework")
    (harness.project / ".tunaflow").mkdir(exist_ok=True)
    (harness.project / ".tunaflow" / "config.toml").write_text(harness.config_toml())
    db = harness.project / ".tunaflow" / "state.db"

    proc = _start_run(harness, "--request", "add mul", *flags)
    try:
        partial = _wait_for_partial(db, started, proc)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        agent_pid = int(started.read_text()) if started.exists() else None
        if agent_pid:  # the agent runs in its own session; a real crash would orphan it too
            with contextlib.suppress(ProcessLookupError):
                os.killpg(agent_pid, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL

    with Store.open(harness.project) as store:
        interrupted = [store.get_message(i) for i in store.recovered_message_ids]
        assert len(interrupted) == 1 and interrupted[0] is not None
        assert interrupted[0].status == "interrupted"
        assert interrupted[0].content.startswith(partial.strip()[:20])
        plans = store.list_plans()
        if phase == "architect":
            assert plans == ()
        else:
            [plan] = plans
            assert plan.phase == {"developer": "dev", "reviewer": "review", "rework": "rework"}[phase]

    resumed = _start_run(harness, "--resume", *flags)
    out, _ = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, out
    assert "is done" in out
    with Store.open(harness.project) as store:
        [plan] = store.list_plans()
        assert plan.phase == "done"
        assert [s.status for s in plan.subtasks] == ["done", "done"]
        # the interrupted message is still there, marked, next to the finished retry
        statuses = [m.status for m in store.list_messages("main", limit=50)]
        assert "interrupted" in statuses or phase != "architect"
        if phase == "reviewer":
            # the seat that had answered before the crash keeps its answer; the round is not counted twice
            assert plan.review_round == 1
            assert [c["role"] for c in harness.calls()].count("verifier") == 1
            files = harness.git("ls-tree", "-r", "--name-only", f"tunaflow/{plan.slug}").split()
            assert f"docs/plans/{plan.slug}-review-r1.md" in files
        if phase == "rework":
            assert plan.review_round == 2


def test_status_while_the_app_streams_leaves_the_live_message_alone(harness) -> None:  # type: ignore[no-untyped-def]
    """`tunaflow status` (e.g. a tmux status bar polling it) must not mark a live answer interrupted."""
    import subprocess
    import sys

    from tunaflow_tui.core.storage import Store

    with Store.open(harness.project) as live:
        message = live.add_message("main", "assistant", "half an answer", persona="architect", status="streaming")
        status = subprocess.run([sys.executable, "-m", "tunaflow_tui", "status", str(harness.project), "--short"],
                                capture_output=True, text=True, timeout=60)
        assert status.returncode == 0, status.stderr
        assert live.get_message(message.id).status == "streaming"
