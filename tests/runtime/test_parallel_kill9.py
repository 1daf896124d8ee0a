"""kill -9 while two plans' Developers work at once and a third waits queued: on restart both are found, the
queued one keeps its place, nothing is lost, and each goes on on its own."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_phases import kill_groups, query, wait_gone
from runtime_harness import Harness, dev_turn
from waiting import HANG_LIMIT

from tunaflow_tui.core.workflow.phases import PlanEventType
from tunaflow_tui.runtime.runtime import WorkflowRuntime

pytestmark = pytest.mark.e2e

SUPPORT = Path(__file__).resolve().parents[1] / "support"

# a tunaflow that approves seeded plans at once, two at a time (then it is killed)
TWO_AT_ONCE = """
import asyncio, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from runtime_harness import Harness
from tunaflow_tui.runtime.runtime import WorkflowRuntime

root, project, bin_dir, data_dir = (Path(arg) for arg in sys.argv[2:6])
plans = [int(arg) for arg in sys.argv[6:]]


async def main() -> None:
    settings = Harness(root, project, bin_dir, data_dir).settings(auto_review=False, max_parallel_plans=2)
    rt = WorkflowRuntime(project, settings)
    await asyncio.gather(*(rt.decide(plan_id, "approve") for plan_id in plans))


asyncio.run(main())
"""


def _wait_for_both(harness: Harness, started: list[Path], proc: subprocess.Popen[str]) -> None:
    """Until both Developers hang mid-reply (their first paragraph stored), or the run ended early."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the run ended early ({proc.returncode}):\n{proc.stdout.read() if proc.stdout else ''}")
        if all(p.exists() and p.read_text().strip() for p in started) and len(query(
                harness, "SELECT id FROM messages WHERE status = 'streaming' AND content != ''")) == 2:
            return
        time.sleep(0.05)
    raise AssertionError("the two Developers never both started")


def test_kill_9_during_two_parallel_developers_then_each_resumes_on_its_own_and_the_queued_one_starts(
        harness: Harness) -> None:
    started = [harness.root / "dev-1.started", harness.root / "dev-2.started"]
    harness.set_script(developer=[
        dev_turn(hang_after_partial=120, started_file=str(started[0])),
        dev_turn(hang_after_partial=120, started_file=str(started[1])),
        dev_turn(), dev_turn()])
    rt = WorkflowRuntime(harness.project, harness.settings(auto_review=False))
    try:
        ids = [rt.service.create_plan_from_proposal(title=f"Plan {n}", slug=f"plan-{n}",
                                                    subtasks=[("Add mul", ""), ("Test mul", "")]).id for n in "abc"]
    finally:
        rt.close()
    proc = subprocess.Popen(
        [sys.executable, "-c", TWO_AT_ONCE, str(SUPPORT), str(harness.root), str(harness.project),
         str(harness.bin_dir), str(harness.data_dir), *map(str, ids)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    hanging: list[int] = []
    try:
        _wait_for_both(harness, started, proc)
        deadline = time.monotonic() + 30  # and the third plan queued behind them
        while not query(harness, "SELECT plan_id FROM plan_events WHERE type = 'plan_queued'"):
            assert time.monotonic() < deadline, "the third plan was never queued"
            time.sleep(0.05)
        hanging = [int(p.read_text()) for p in started]
        os.killpg(proc.pid, signal.SIGKILL)  # tunaflow dies at once; its agents live in their own groups
        proc.wait(timeout=10)
        assert wait_gone(hanging, timeout=0.5) == hanging, "a real crash leaves both stand-ins running"
        asyncio.run(_restart_and_resume(harness, ids, hanging))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        kill_groups(hanging)
    assert query(harness, "SELECT * FROM running_processes") == []


async def _restart_and_resume(harness: Harness, all_ids: list[int], hanging: list[int]) -> None:
    rt = WorkflowRuntime(harness.project, harness.settings(auto_review=False, max_parallel_plans=2))
    try:
        # which two started first is up to the dead process; the other one was queued
        queued = [q.plan_id for q in rt.queued_plans()]
        ids = [i for i in all_ids if i not in queued]
        assert len(queued) == 1 and len(ids) == 2, (queued, ids)
        # both are found: their interrupted steps, and the agents the dead tunaflow left behind
        assert sorted((run.plan_id, run.role) for run in rt.interrupted_plans()) == [(i, "developer") for i in ids]
        assert rt.queued_to_start() == tuple(queued), "the queued plan keeps its place"
        plans = [rt.get_plan(i) for i in ids]
        assert sorted(str(left.record.conversation_id) for left in rt.leftover_agents()) == sorted(
            f"branch:{plan.impl_branch_id}" for plan in plans)
        assert all(left.stoppable for left in rt.leftover_agents())
        # nothing lost: each Developer's first paragraph is kept, and the files it wrote are in its own worktree
        for plan in plans:
            replies = rt.store.list_messages(f"branch:{plan.impl_branch_id}")
            assert [m.status for m in replies if m.role == "assistant"] == ["interrupted"]
            assert next(m.content for m in replies if m.role == "assistant").startswith("I added mul")
            assert "def mul" in (Path(plan.worktree_path or "") / "calc.py").read_text()
        assert len({plan.worktree_path for plan in plans}) == 2
        stopped = await rt.stop_leftover_agents()
        assert len(stopped) == 2
        assert wait_gone(hanging, timeout=HANG_LIMIT) == []
        done = await asyncio.gather(rt.start_queued(queued[0]), *(rt.resume_interrupted(i) for i in ids))
        assert [p.phase for p in done] == ["review"] * 3, [(p.phase, p.pending_detail) for p in done]
        for plan in done:
            assert [s.status for s in plan.subtasks] == ["done", "done"]
            assert "def mul" in harness.git("show", f"tunaflow/{plan.slug}:calc.py")
            events = [e.type for e in rt.store.list_plan_events(plan.id)]
            assert events.count(PlanEventType.LEFTOVER_STOPPED) == (0 if plan.id in queued else 1)
        assert rt.interrupted_plans() == () and rt.leftover_agents() == () and rt.queued_plans() == ()
        developers = [c for c in harness.calls() if c["role"] == "developer"]
        # every Developer of a plan, before and after the crash, worked in that plan's worktree, and only there
        by_slug = {p.slug: [c for c in developers if Path(c["cwd"]).name == p.slug] for p in done}
        assert sum(len(calls) for calls in by_slug.values()) == len(developers)
        assert all(len(calls) >= (1 if slug == rt.get_plan(queued[0]).slug else 2) for slug, calls in by_slug.items()), \
            {k: len(v) for k, v in by_slug.items()}
    finally:
        rt.close()
