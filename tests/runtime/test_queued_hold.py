"""Holding a plan that waits in the queue for a slot: it leaves the queue and does not start when a slot
frees (in this process or another one); resuming it puts it back at the end of the queue, or starts it
when a slot is free.

Plans are seeded at the approval gate (no Architect turn); the stand-in Developer of the plan at work
waits on a gate file, so the slot frees exactly when the test says.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

from other_process import OTHER_APPROVES
from runtime_harness import Harness, dev_turn, verdict
from waiting import until

from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.workflow.phases import PlanEventType
from tunaflow_tui.runtime.runtime import WorkflowRuntime

LIMIT_S = 60.0
SUPPORT = Path(__file__).resolve().parents[1] / "support"



async def _wait(condition: Callable[[], object], what: str) -> None:
    await until(None, condition, what, LIMIT_S)


def _plan(rt: WorkflowRuntime, title: str) -> PlanRecord:
    """A plan at the approval gate (seeded: no Architect turn)."""
    return rt.service.create_plan_from_proposal(title=title, slug=title.lower().replace(" ", "-"),
                                                subtasks=[("Add mul", "")])


def _developers(harness: Harness) -> list[str]:
    """The worktrees (plan slugs) the stand-in Developers ran in, in order."""
    return [Path(call["cwd"]).name for call in harness.calls() if call["role"] == "developer"]


def _queue_events(rt: WorkflowRuntime, plan_id: int) -> list[tuple[str, object]]:
    return [(e.type, e.detail.get("why")) for e in rt.store.list_plan_events(plan_id)
            if e.type in (PlanEventType.PLAN_QUEUED, PlanEventType.QUEUE_LEFT)]


def _gated(harness: Harness, name: str) -> tuple[dict[str, object], Path, Path]:
    started, release = harness.root / f"{name}.started", harness.root / f"{name}.release"
    turn = dev_turn(gate={"after": "I added mul", "started": str(started), "release": str(release), "limit": 60})
    return turn, started, release


async def test_a_held_queued_plan_leaves_the_queue_and_does_not_start_when_the_slot_frees(harness: Harness) -> None:
    turn, started, release = _gated(harness, "a")
    harness.set_script(developer=[turn, dev_turn()])
    rt = WorkflowRuntime(harness.project, harness.settings(max_parallel_plans=1, auto_review=False))
    try:
        a, b = _plan(rt, "Plan A"), _plan(rt, "Plan B")
        first = asyncio.create_task(rt.decide(a.id, "approve"))
        await _wait(started.exists, "A's Developer to start")
        waiting = asyncio.create_task(rt.decide(b.id, "approve"))
        await _wait(lambda: [q.plan_id for q in rt.queued_plans()] == [b.id], "B to be queued")
        assert "hold" in rt.way_on(b.id).decisions, "a queued plan can be held"

        held = await asyncio.wait_for(rt.decide(b.id, "hold"), LIMIT_S)
        assert held.phase == "held" and held.held_from == "dev" and held.pending_decision is None
        assert (await asyncio.wait_for(waiting, LIMIT_S)).phase == "held", "the approval's wait ended, not started"
        assert rt.queued_plans() == ()
        way = rt.way_on(b.id)
        assert way.held and way.decisions == ("resume", "abandon") and way.summary.startswith("on hold")
        assert [w.plan_id for w in rt.waiting()] == [b.id], "a held plan waits for you"

        release.write_text("go")  # A reaches its gate: its slot frees
        assert (await asyncio.wait_for(first, LIMIT_S)).phase == "review"
        assert rt.store.get_plan(b.id).phase == "held"  # type: ignore[union-attr]
        assert _developers(harness) == [a.slug], "B's Developer never started"

        resumed = await asyncio.wait_for(rt.decide(b.id, "resume"), LIMIT_S)  # a slot is free: it starts
        queue_events = _queue_events(rt, b.id)
    finally:
        release.write_text("go")
        rt.close()
    assert resumed.phase == "review"
    assert _developers(harness) == [a.slug, b.slug]
    assert queue_events == [("plan_queued", None), ("queue_left", "withdrawn")], \
        "resumed with a free slot, it started without queueing again"


async def test_resuming_a_held_plan_while_every_slot_is_taken_queues_it_at_the_end(harness: Harness) -> None:
    turn, started, release = _gated(harness, "a")
    harness.set_script(developer=[turn, dev_turn(), dev_turn()])
    rt = WorkflowRuntime(harness.project, harness.settings(max_parallel_plans=1, auto_review=False))
    try:
        a, b, c = _plan(rt, "Plan A"), _plan(rt, "Plan B"), _plan(rt, "Plan C")
        tasks = [asyncio.create_task(rt.decide(a.id, "approve"))]
        await _wait(started.exists, "A's Developer to start")
        tasks.append(asyncio.create_task(rt.decide(b.id, "approve")))
        await _wait(lambda: [q.plan_id for q in rt.queued_plans()] == [b.id], "B to be queued")
        tasks.append(asyncio.create_task(rt.decide(c.id, "approve")))
        await _wait(lambda: [q.plan_id for q in rt.queued_plans()] == [b.id, c.id], "C to be queued after B")
        await rt.decide(b.id, "hold")
        assert [q.plan_id for q in rt.queued_plans()] == [c.id], "C moves up"
        tasks.append(asyncio.create_task(rt.decide(b.id, "resume")))
        await _wait(lambda: [q.plan_id for q in rt.queued_plans()] == [c.id, b.id], "B back in line, after C")
        assert rt.store.get_plan(b.id).phase == "dev"  # type: ignore[union-attr]
        release.write_text("go")
        done = await asyncio.wait_for(asyncio.gather(*tasks), LIMIT_S)
    finally:
        release.write_text("go")
        rt.close()
    assert [p.phase for p in done] == ["review", "held", "review", "review"]
    assert _developers(harness) == [a.slug, c.slug, b.slug]



async def _other(harness: Harness, plan_id: int) -> asyncio.subprocess.Process:
    """Another tunaflow process approving ``plan_id`` (its Developer runs there)."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-c", OTHER_APPROVES, str(SUPPORT), str(harness.root), str(harness.project),
        str(harness.bin_dir), str(harness.data_dir), str(plan_id), stdout=asyncio.subprocess.PIPE)


async def test_a_plan_held_here_while_another_process_frees_the_slot_does_not_start(harness: Harness) -> None:
    turn, started, release = _gated(harness, "x")
    harness.set_script(developer=[turn, dev_turn()])
    rt = WorkflowRuntime(harness.project, harness.settings(max_parallel_plans=1, auto_review=False))
    other: asyncio.subprocess.Process | None = None
    try:
        x, y = _plan(rt, "Plan X"), _plan(rt, "Plan Y")
        other = await _other(harness, x.id)
        await _wait(started.exists, "X's Developer to start in the other process")
        here = asyncio.create_task(rt.decide(y.id, "approve"))
        await _wait(lambda: [q.plan_id for q in rt.queued_plans()] == [y.id], "Y to be queued behind X")
        await rt.decide(y.id, "hold")
        assert (await asyncio.wait_for(here, LIMIT_S)).phase == "held"
        release.write_text("go")  # the other process's Developer ends: the slot frees
        out, _ = await asyncio.wait_for(other.communicate(), LIMIT_S)
    finally:
        release.write_text("go")
        if other is not None and other.returncode is None:
            other.kill()
            await other.wait()
        rt.close()
    assert out.decode().strip().splitlines()[-1] == "review"
    assert _developers(harness) == [x.slug], "Y's Developer never started"


async def test_a_plan_queued_in_another_process_and_held_here_does_not_start_there(harness: Harness) -> None:
    turn, started, release = _gated(harness, "x")
    harness.set_script(developer=[turn, dev_turn()])
    rt = WorkflowRuntime(harness.project, harness.settings(max_parallel_plans=1, auto_review=False))
    other: asyncio.subprocess.Process | None = None
    try:
        x, y = _plan(rt, "Plan X"), _plan(rt, "Plan Y")
        working = asyncio.create_task(rt.decide(x.id, "approve"))
        await _wait(started.exists, "X's Developer to start here")
        other = await _other(harness, y.id)  # Y approved in the other process: queued there behind X
        await _wait(lambda: [q.plan_id for q in rt.queued_plans()] == [y.id], "Y to be queued in the other process")
        held = await rt.decide(y.id, "hold")
        assert held.phase == "held"
        out, _ = await asyncio.wait_for(other.communicate(), LIMIT_S)  # its wait ends there, before X's slot frees
        assert out.decode().strip().splitlines()[-1] == "held"
        release.write_text("go")
        await asyncio.wait_for(working, LIMIT_S)
        queue_events = _queue_events(rt, y.id)
    finally:
        release.write_text("go")
        if other is not None and other.returncode is None:
            other.kill()
            await other.wait()
        rt.close()
    assert _developers(harness) == [x.slug], "Y's Developer never started in either process"
    assert queue_events == [("plan_queued", None), ("queue_left", "withdrawn")], "the wait closed once"


def test_tunaflow_run_resume_leaves_a_plan_held_in_the_queue_held_and_status_says_so(harness: Harness) -> None:
    import subprocess

    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.core.workflow import Approve, Hold
    from tunaflow_tui.core.workflow.phases import Actor
    from tunaflow_tui.core.workflow.service import WorkflowService

    harness.set_script(developer=[dev_turn()], reviewer=[{"text": verdict("pass")}],
                       verifier=[{"text": verdict("pass")}])
    harness.write_config("max_parallel_plans = 1\n", idle_s=120)  # into the [workflow] table it ends with
    with Store.open(harness.project) as store:  # what a stopped run leaves: two plans queued, the first held since
        service = WorkflowService(store)
        held, other = (service.create_plan_from_proposal(title=t, slug=t.lower().replace(" ", "-"),
                                                         subtasks=[("Add mul", "")]) for t in ("Plan H", "Plan O"))
        for plan in (held, other):
            service.apply(plan.id, Approve(), actor=Actor.USER)
            service.record(plan.id, PlanEventType.PLAN_QUEUED, Actor.SYSTEM, {"working": 1, "limit": 1})
        service.apply(held.id, Hold(), actor=Actor.USER)

    def tunaflow(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tunaflow_tui", *args], capture_output=True, text=True,
                              timeout=240)

    run = tunaflow("run", str(harness.project), "--resume", "--accept")
    assert run.returncode == 3, run.stdout + run.stderr  # the held plan waits for you
    said = next(line for line in run.stdout.splitlines() if f"plan {held.id}" in line)
    assert "on hold — held while it waited for a slot" in said and "(on hold)" not in said, said  # said once
    assert _developers(harness) == [other.slug], "only the plan still in the queue started"
    status = tunaflow("status", str(harness.project))
    assert f"#{held.id}" in status.stdout and "held (from dev)" in status.stdout, status.stdout
    assert "waiting for you: held — held while it waited for a slot" in status.stdout, status.stdout
