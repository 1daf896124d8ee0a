"""kill -9 at each phase of a real `tunaflow run` process, then `tunaflow run --resume` finishes the plan.

The stand-in that hangs in the phase outlives tunaflow, as a real agent in a long tool call would:
a plain ``--resume`` refuses to start a second agent beside it; ``--stop-leftovers`` ends it first.
"""

from __future__ import annotations

import os
import signal

import pytest
from run_phases import (
    PHASES,
    kill_groups,
    pids,
    query,
    script_phase,
    start_run,
    wait_gone,
    wait_until_hanging,
)
from runtime_harness import Harness
from waiting import HANG_LIMIT

from tunaflow_tui.core.storage import Store

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("phase", PHASES)
def test_kill_9_then_resume_reaches_done_and_never_doubles_an_agent(harness: Harness, phase: str) -> None:
    run = script_phase(harness, phase)
    proc = start_run(harness, "--request", "add mul", *run.flags, env=run.env)
    hanging: list[int] = []
    try:
        partial = wait_until_hanging(harness, run, proc)
        hanging = pids(run)
        os.killpg(proc.pid, signal.SIGKILL)  # tunaflow dies at once; its agents live in their own groups
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        assert wait_gone(hanging, timeout=0.5) == hanging, "a real crash leaves the stand-in running"

        with Store.open(harness.project) as store:
            interrupted = [store.get_message(i) for i in store.recovered_message_ids]
            if run.agent:
                assert interrupted and all(m is not None and m.status == "interrupted" for m in interrupted), [
                    (m.role, m.status, m.content[:40]) for m in interrupted if m is not None]
                # the paragraph it had finished before its long pause is there, not 0 characters
                assert any(m.content.startswith(partial.strip()[:20]) for m in interrupted if m is not None)
            plans = store.list_plans()
            if run.plan_phase is None:
                assert plans == ()
            else:
                [plan] = plans
                assert plan.phase == run.plan_phase

        calls_before = len(harness.calls())
        if run.agent:
            # the earlier agent still works in the worktree: no second one beside it, and the user is told
            refused = start_run(harness, "--resume", *run.flags, env=run.env)
            out, _ = refused.communicate(timeout=120)
            assert refused.returncode == 3, out
            assert "Still running:" in out and "--stop-leftovers" in out and "agent" in out
            assert len(harness.calls()) == calls_before
            assert wait_gone(hanging, timeout=0.2) == hanging, "refusing must not stop it either"
            resume_flags: tuple[str, ...] = ("--resume", "--stop-leftovers", *run.flags)
        else:
            resume_flags = ("--resume", *run.flags)  # a leftover test run is stopped without asking

        resumed = start_run(harness, *resume_flags, env=run.env)
        out, _ = resumed.communicate(timeout=180)
        assert resumed.returncode == 0, out
        assert "is done" in out and "Stopped" in out and "earlier tunaflow left running" in out
        assert wait_gone(hanging, timeout=HANG_LIMIT) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        kill_groups(hanging)

    assert query(harness, "SELECT * FROM running_processes") == []
    with Store.open(harness.project) as store:
        [plan] = store.list_plans()
        assert plan.phase == "done"
        assert [s.status for s in plan.subtasks][:2] == ["done", "done"]  # the stand-in ticks two
        if phase == "reviewers":
            # the round is not counted twice
            assert plan.review_round == 1
            files = harness.git("ls-tree", "-r", "--name-only", f"tunaflow/{plan.slug}").split()
            assert f"docs/plans/{plan.slug}-review-r1.md" in files
        if phase in ("rework", "drafting"):
            assert plan.review_round == 2
        stopped = [e.detail for e in store.list_plan_events(plan.id) if e.type == "leftover_stopped"]
        if run.plan_phase is not None:
            assert len(stopped) == len(hanging), stopped


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
