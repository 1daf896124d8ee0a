"""SIGTERM and SIGHUP to a real `tunaflow run`, in every phase: the agent's group ends, the stop is recorded.

The stand-in that hangs ignores SIGTERM, so only SIGKILL of its process group ends it; in the
Architect's phase it floods progress lines instead of pausing.
"""

from __future__ import annotations

import os
import signal
import time

import pytest
from run_phases import (
    PHASES,
    kill_groups,
    pids,
    query,
    read_until,
    script_phase,
    start_run,
    wait_gone,
    wait_until_hanging,
)
from runtime_harness import Harness

from tunaflow_tui.core.storage import Store

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("phase", PHASES)
def test_a_signal_ends_every_process_group_and_records_the_interruption(
        harness: Harness, phase: str, sig: signal.Signals) -> None:
    run = script_phase(harness, phase, ignore_sigterm=True, flood=phase == "architect")
    proc = start_run(harness, "--request", "add mul", *run.flags, env=run.env)
    started: list[int] = []
    try:
        partial = wait_until_hanging(harness, run, proc)
        started = pids(run)
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        leftover = wait_gone(started)
        kill_groups(leftover)
    assert proc.returncode == 128 + sig, out
    assert f"stopped by {sig.name}" in out and "--resume" in out
    assert "Traceback" not in out
    assert leftover == [], f"still running after tunaflow ended: {leftover}"
    assert query(harness, "SELECT * FROM running_processes") == []

    interrupted = query(harness, "SELECT content, error_message FROM messages WHERE status = 'interrupted'")
    if run.agent:  # each stopped reply is kept, marked, with what it had said
        assert len(interrupted) == len(started), interrupted
        assert any(content.startswith(partial.strip()[:20]) for content, _error in interrupted)
        assert all(f"stopped by {sig.name}" in (error or "") for _content, error in interrupted), interrupted
    with Store.open(harness.project) as store:
        assert store.recovered_message_ids == ()  # nothing was left streaming: it was recorded on the way out
        plans = store.list_plans()
        if run.plan_phase is None:
            assert plans == ()
        else:
            [plan] = plans
            assert plan.phase == run.plan_phase
            events = [e for e in store.list_plan_events(plan.id) if e.type == "run_interrupted"]
            assert [e.detail["reason"] for e in events] == [f"stopped by {sig.name}"]


@pytest.mark.parametrize("presses", [1, 2], ids=["once", "twice"])
def test_ctrl_c_during_the_tests_stops_them_at_once_and_exits_cleanly(harness: Harness, presses: int) -> None:
    """The project's slow test would run 120 s; ctrl+c (again) must not wait for it, nor print a traceback."""
    run = script_phase(harness, "tests")
    proc = start_run(harness, "--request", "add mul", *run.flags, env=run.env)
    started: list[int] = []
    try:
        wait_until_hanging(harness, run, proc)
        started = pids(run)
        pressed = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on ctrl+c: tunaflow's group only
        early = ""
        if presses == 2:
            early = read_until(proc, "stopping")
            os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        out = early + out
        took = time.monotonic() - pressed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        leftover = wait_gone(started)
        kill_groups(leftover)
    assert proc.returncode == 130, out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out
    assert "interrupted (ctrl+c)" in out and "--resume" in out
    assert leftover == [], "the tests were left running"
    assert took < 20, f"ctrl+c took {took:.1f}s"
    with Store.open(harness.project) as store:
        [plan] = store.list_plans()
        assert plan.phase == "review"
        assert [r.plan_id for r in store.list_processes()] == []
