"""Several plans at once in the runtime: each in its own worktree, at most ``max_parallel_plans`` working, the rest queued.

The stand-in Developers write when they start and end (``stamp``), so overlap is measured from their
own timestamps; a ``barrier`` makes two Developers wait for each other, which only works if they run
at the same time.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from other_process import OTHER_APPROVES
from runtime_harness import Harness, dev_turn, verdict
from waiting import until

from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.workflow import Approve
from tunaflow_tui.core.workflow.phases import Actor, PlanEventType
from tunaflow_tui.runtime.events import Progress, RuntimeEvent
from tunaflow_tui.runtime.plan_env import plan_temp_area
from tunaflow_tui.runtime.runtime import WorkflowRuntime

LIMIT_S = 60.0



async def _wait(condition: Callable[[], object], what: str) -> None:
    await until(None, condition, what, LIMIT_S)


def _plan(rt: WorkflowRuntime, title: str) -> PlanRecord:
    """A plan at the approval gate (seeded: no Architect turn)."""
    slug = title.lower().replace(" ", "-")
    return rt.service.create_plan_from_proposal(title=title, slug=slug, subtasks=[("Add mul", ""), ("Test mul", "")])


def _stamps(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _intervals(path: Path, rt: WorkflowRuntime) -> dict[int, tuple[float, float]]:
    """Each plan's Developer run, from the stand-in's own stamps, by the plan whose worktree it ran in."""
    by_dir = {p.worktree_path: p.id for p in rt.store.list_plans()}
    starts: dict[int, float] = {}
    spans: dict[int, tuple[float, float]] = {}
    for stamp in _stamps(path):
        plan_id = by_dir[stamp["cwd"]]
        if stamp["at"] == "start":
            starts[plan_id] = stamp["t"]
        else:
            spans[plan_id] = (starts[plan_id], stamp["t"])
    return spans


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _started(path: Path) -> int:
    return sum(1 for s in _stamps(path) if s["at"] == "start")


def _queue_events(rt: WorkflowRuntime, plan_id: int) -> list[tuple[str, object]]:
    return [(e.type, e.detail.get("why")) for e in rt.store.list_plan_events(plan_id)
            if e.type in (PlanEventType.PLAN_QUEUED, PlanEventType.QUEUE_LEFT)]


async def test_two_plans_develop_at_once_each_in_its_own_worktree_and_are_reviewed_apart(harness: Harness) -> None:
    stamps = harness.root / "stamps.jsonl"
    meet = [str(harness.root / "dev-a.here"), str(harness.root / "dev-b.here")]
    # each Developer waits (up to 30 s) until the other one runs too: only two at once get past it
    harness.set_script(
        developer=[dev_turn(stamp=str(stamps), barrier={"mine": meet[0], "all": meet, "limit": 30}),
                   dev_turn(stamp=str(stamps), barrier={"mine": meet[1], "all": meet, "limit": 30})],
        reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    events: list[RuntimeEvent] = []
    rt = WorkflowRuntime(harness.project, harness.settings(), observer=events.append)
    try:
        a, b = _plan(rt, "Plan A"), _plan(rt, "Plan B")
        first = asyncio.create_task(rt.decide(a.id, "approve"))
        await _wait(lambda: _started(stamps) == 1, "A's Developer to start")
        a, b = await asyncio.gather(first, rt.decide(b.id, "approve"))
        spans = _intervals(stamps, rt)
        events_of = {plan.id: [e.type for e in rt.store.list_plan_events(plan.id)] for plan in (a, b)}
    finally:
        rt.close()
    assert a.pending_decision == b.pending_decision == "review"
    assert a.pending_detail["verdict"] == b.pending_detail["verdict"] == "pass", "neither Developer timed out waiting"
    assert a.worktree_path != b.worktree_path
    assert _overlap(spans[a.id], spans[b.id]), spans
    for plan in (a, b):
        worktree = Path(plan.worktree_path or "")
        assert harness.git("rev-parse", "--abbrev-ref", "HEAD", cwd=worktree).strip() == f"tunaflow/{plan.slug}"
        assert "def mul" in harness.git("show", f"tunaflow/{plan.slug}:calc.py")
        # nothing of the other plan's work was mistaken for this plan's agent touching git
        assert PlanEventType.GIT_INTEGRITY not in events_of[plan.id]
        assert events_of[plan.id].count(PlanEventType.REVIEW_FINISHED) == 1
    # every line about a plan's work says which plan
    lines = [e for e in events if isinstance(e, Progress) and e.plan_id is not None]
    assert {e.plan_id for e in lines} == {a.id, b.id}
    assert all(e.text.startswith(f"Plan {e.plan_id}") for e in lines)
    assert {f"Plan {p}: developer (fclaude) is working…" for p in (a.id, b.id)} <= {e.text for e in lines}


async def test_cap_of_one_queues_the_others_and_starts_them_in_approval_order(harness: Harness) -> None:
    stamps = harness.root / "stamps.jsonl"
    harness.set_script(developer=[dev_turn(stamp=str(stamps), pause_after={"I added mul": 0.3})])
    rt = WorkflowRuntime(harness.project, harness.settings(max_parallel_plans=1, auto_review=False))
    try:
        a, b, c = _plan(rt, "Plan A"), _plan(rt, "Plan B"), _plan(rt, "Plan C")
        tasks = [asyncio.create_task(rt.decide(a.id, "approve"))]
        await _wait(lambda: _started(stamps) == 1, "A's Developer to start")
        tasks.append(asyncio.create_task(rt.decide(c.id, "approve")))  # C is approved before B
        await _wait(lambda: [q.plan_id for q in rt.queued_plans()] == [c.id], "C to be queued")
        tasks.append(asyncio.create_task(rt.decide(b.id, "approve")))
        await _wait(lambda: [q.plan_id for q in rt.queued_plans()] == [c.id, b.id], "B to be queued after C")
        assert [q.position for q in rt.queued_plans()] == [1, 2]
        assert rt.way_on(b.id).summary.startswith("queued (number 2 in line)")
        assert rt.store.get_plan(c.id).phase == "dev", "the approval itself is recorded at once"
        done = await asyncio.gather(*tasks)
        spans = _intervals(stamps, rt)
        assert rt.queued_plans() == ()
        assert [_queue_events(rt, p) for p in (a.id, c.id, b.id)] == [
            [], [("plan_queued", None), ("queue_left", "started")], [("plan_queued", None), ("queue_left", "started")]]
    finally:
        rt.close()
    assert [p.phase for p in done] == ["review"] * 3, "each Developer reported its work complete"
    order = sorted(spans, key=lambda plan_id: spans[plan_id][0])
    assert order == [a.id, c.id, b.id]
    for one, other in ((a.id, c.id), (c.id, b.id), (a.id, b.id)):
        assert not _overlap(spans[one], spans[other]), spans
        assert spans[other][0] >= spans[one][1] or spans[one][0] >= spans[other][1]


async def test_cap_of_two_runs_two_and_the_third_starts_when_one_finishes(harness: Harness) -> None:
    stamps = harness.root / "stamps.jsonl"
    meet = [str(harness.root / "dev-1.here"), str(harness.root / "dev-2.here")]
    harness.set_script(developer=[
        dev_turn(stamp=str(stamps), barrier={"mine": meet[0], "all": meet, "limit": 30}),
        dev_turn(stamp=str(stamps), barrier={"mine": meet[1], "all": meet, "limit": 30}),
        dev_turn(stamp=str(stamps))])
    rt = WorkflowRuntime(harness.project, harness.settings(max_parallel_plans=2, auto_review=False))
    try:
        a, b, c = _plan(rt, "Plan A"), _plan(rt, "Plan B"), _plan(rt, "Plan C")
        tasks = [asyncio.create_task(rt.decide(a.id, "approve")), asyncio.create_task(rt.decide(b.id, "approve"))]
        await _wait(lambda: _started(stamps) == 2, "A's and B's Developers to start")
        tasks.append(asyncio.create_task(rt.decide(c.id, "approve")))
        await _wait(lambda: [q.plan_id for q in rt.queued_plans()] == [c.id], "C to be queued")
        done = await asyncio.gather(*tasks)
        spans = _intervals(stamps, rt)
    finally:
        rt.close()
    assert [p.pending_detail.get("reason", "") for p in done if p.pending_decision == "dev_stalled"] == []
    assert _overlap(spans[a.id], spans[b.id]), spans
    assert spans[c.id][0] >= min(spans[a.id][1], spans[b.id][1]), spans


async def test_abandoning_a_queued_plan_takes_it_out_of_the_queue_before_its_developer_starts(harness: Harness) -> None:
    started, release = harness.root / "a.started", harness.root / "a.release"
    harness.set_script(developer=[dev_turn(gate={"after": "I added mul", "started": str(started),
                                                 "release": str(release), "limit": 60})])
    rt = WorkflowRuntime(harness.project, harness.settings(max_parallel_plans=1, auto_review=False))
    try:
        a, b = _plan(rt, "Plan A"), _plan(rt, "Plan B")
        first = asyncio.create_task(rt.decide(a.id, "approve"))
        await _wait(started.exists, "A's Developer to start")
        waiting = asyncio.create_task(rt.decide(b.id, "approve"))
        await _wait(lambda: [q.plan_id for q in rt.queued_plans()] == [b.id], "B to be queued")
        abandoned = await rt.decide(b.id, "abandon", reason="not now")
        assert abandoned.phase == "abandoned"
        assert (await waiting).id == b.id
        assert rt.queued_plans() == ()
        assert _queue_events(rt, b.id) == [("plan_queued", None), ("queue_left", "withdrawn")]
        release.write_text("go")
        await first
    finally:
        release.write_text("go")
        rt.close()
    developers = [c for c in harness.calls() if c["role"] == "developer"]
    assert [Path(c["cwd"]).name for c in developers] == [a.slug], "B's Developer never started"


async def test_a_queued_plan_survives_a_restart_and_starts_by_itself_in_its_place(harness: Harness) -> None:
    stamps = harness.root / "stamps.jsonl"
    harness.set_script(developer=[dev_turn(stamp=str(stamps))])
    settings = harness.settings(max_parallel_plans=1, auto_review=False)
    earlier = WorkflowRuntime(harness.project, settings)
    try:  # what a stopped tunaflow leaves: two approved plans queued, B before A, neither started
        a, b = _plan(earlier, "Plan A"), _plan(earlier, "Plan B")
        for plan in (b, a):
            earlier.service.apply(plan.id, Approve(), actor=Actor.USER)
            earlier.service.record(plan.id, PlanEventType.PLAN_QUEUED, Actor.SYSTEM, {"working": 1, "limit": 1})
    finally:
        earlier.close()
    rt = WorkflowRuntime(harness.project, settings)
    try:
        assert [q.plan_id for q in rt.queued_plans()] == [b.id, a.id]
        assert rt.interrupted_plans() == (), "queued plans are not offered as interrupted: they start by themselves"
        assert rt.way_on(a.id).summary.startswith("queued (number 2 in line): starts by itself")
        assert rt.waiting() == (), "nothing asks the user about a queued plan"
        assert rt.way_on(a.id).decisions == ("hold", "abandon"), "it can be held or abandoned, not started"
        to_start = rt.queued_to_start()
        assert to_start == (b.id, a.id)
        done = await asyncio.gather(*(rt.start_queued(plan_id) for plan_id in to_start))
        spans = _intervals(stamps, rt)
        assert rt.queued_plans() == () and rt.queued_to_start() == ()
    finally:
        rt.close()
    assert [p.phase for p in done] == ["review"] * 2
    assert sorted(spans, key=lambda plan_id: spans[plan_id][0]) == [b.id, a.id]
    assert not _overlap(spans[a.id], spans[b.id])


ENV_PRINTER = """
import json, os, pathlib, sys
tmp = pathlib.Path(os.environ["TMPDIR"])
(tmp / "scratch.txt").write_text("mine")
line = {name: os.environ.get(name) for name in ("TUNAFLOW_PLAN", "TUNAFLOW_WORKTREE", "TMPDIR")}
line["cwd"] = os.getcwd()
line["tmp_files"] = sorted(p.name for p in tmp.iterdir())
with open(sys.argv[1], "a") as fh:
    fh.write(json.dumps(line) + "\\n")
print(json.dumps(line))
"""


async def test_two_plans_test_runs_and_developers_get_their_own_plan_worktree_and_tmpdir(harness: Harness) -> None:
    stamps, printed = harness.root / "stamps.jsonl", harness.root / "test-env.jsonl"
    harness.set_script(developer=[dev_turn(stamp=str(stamps))],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    command = [sys.executable, "-c", ENV_PRINTER, str(printed)]
    rt = WorkflowRuntime(harness.project, harness.settings(test_command=command))
    try:
        a, b = _plan(rt, "Plan A"), _plan(rt, "Plan B")
        a, b = await asyncio.gather(rt.decide(a.id, "approve"), rt.decide(b.id, "approve"))
        tests_ran = {p.id: [dict(e.detail) for e in rt.store.list_plan_events(p.id) if e.type == PlanEventType.TESTS_RAN]
                     for p in (a, b)}
    finally:
        rt.close()
    runs = {int(line["TUNAFLOW_PLAN"]): line for line in _stamps(printed)}
    developers = {int(s["env"]["TUNAFLOW_PLAN"]): s for s in _stamps(stamps) if s["at"] == "start"}
    assert set(developers) == {a.id, b.id}
    assert set(runs) == {a.id, b.id}, (tests_ran, (a.phase, a.pending_detail), (b.phase, b.pending_detail))
    for plan in (a, b):
        area = plan_temp_area(harness.project.resolve(), plan.id)
        for seen, env in ((runs[plan.id], runs[plan.id]), (developers[plan.id], developers[plan.id]["env"])):
            assert env["TUNAFLOW_WORKTREE"] == plan.worktree_path == seen["cwd"]
            assert Path(env["TMPDIR"]).parent == area, (env["TMPDIR"], area)
            assert not Path(env["TMPDIR"]).exists(), "each run's TMPDIR is removed when it ends"
        assert runs[plan.id]["tmp_files"] == ["scratch.txt"], "nobody else's files in it"
    assert runs[a.id]["TMPDIR"] != runs[b.id]["TMPDIR"]
    assert developers[a.id]["env"]["TMPDIR"] != developers[b.id]["env"]["TMPDIR"]


async def test_merging_a_done_plan_while_another_plans_developer_works_keeps_the_merge_in_your_tree(
        harness: Harness) -> None:
    started, release = harness.root / "a.started", harness.root / "a.release"
    harness.set_script(
        developer=[dev_turn(), dev_turn(gate={"after": "I added mul", "started": str(started),
                                              "release": str(release), "limit": 60})],
        reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    rt = WorkflowRuntime(harness.project, harness.settings())
    try:
        b, a = _plan(rt, "Plan B"), _plan(rt, "Plan A")
        await rt.decide(b.id, "approve")
        assert (await rt.decide(b.id, "accept")).phase == "done"
        working = asyncio.create_task(rt.decide(a.id, "approve"))
        await _wait(started.exists, "A's Developer to start")
        result = await asyncio.to_thread(rt.merge, b.id)  # the user merges B while A's Developer works
        assert str(result.kind) == "fast-forward"
        release.write_text("go")
        a = await working
        a_events = [(e.type, e.detail.get("summary", "")) for e in rt.store.list_plan_events(a.id)]
    finally:
        release.write_text("go")
        rt.close()
    assert a.pending_decision == "review"
    assert "def mul" in (harness.project / "calc.py").read_text(), "B's merge is still in your working tree"
    assert harness.git("status", "--porcelain") == "", "nothing was put back over the merge"
    assert not [summary for kind, summary in a_events if kind == PlanEventType.GIT_INTEGRITY
                and "put them back" in str(summary)], a_events


OTHER_PROCESS = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from runtime_harness import Harness
from tunaflow_tui.runtime.runtime import WorkflowRuntime

root, project, bin_dir, data_dir = (Path(arg) for arg in sys.argv[2:6])
rt = WorkflowRuntime(project, Harness(root, project, bin_dir, data_dir).settings(max_parallel_plans=1))
try:
    print(json.dumps({"queued": [[q.plan_id, q.position, q.title] for q in rt.queued_plans()],
                      "to_start": list(rt.queued_to_start()),
                      "interrupted": [run.plan_id for run in rt.interrupted_plans()]}))
finally:
    rt.close()
"""


async def test_another_process_sees_the_queue_and_leaves_it_to_the_process_that_runs_it(harness: Harness) -> None:
    started, release = harness.root / "a.started", harness.root / "a.release"
    harness.set_script(developer=[dev_turn(gate={"after": "I added mul", "started": str(started),
                                                 "release": str(release), "limit": 60}), dev_turn()])
    rt = WorkflowRuntime(harness.project, harness.settings(max_parallel_plans=1, auto_review=False))
    try:
        a, b = _plan(rt, "Plan A"), _plan(rt, "Plan B")
        tasks = [asyncio.create_task(rt.decide(a.id, "approve"))]
        await _wait(started.exists, "A's Developer to start")
        tasks.append(asyncio.create_task(rt.decide(b.id, "approve")))
        await _wait(lambda: bool(rt.queued_plans()), "B to be queued")
        other = await asyncio.create_subprocess_exec(
            sys.executable, "-c", OTHER_PROCESS, str(Path(__file__).resolve().parents[1] / "support"),
            str(harness.root), str(harness.project), str(harness.bin_dir), str(harness.data_dir),
            stdout=asyncio.subprocess.PIPE)
        out, _ = await asyncio.wait_for(other.communicate(), LIMIT_S)
        seen = json.loads(out.decode().strip().splitlines()[-1])
        release.write_text("go")
        done = await asyncio.gather(*tasks)
    finally:
        release.write_text("go")
        rt.close()
    assert seen == {"queued": [[b.id, 1, "Plan B"]], "to_start": [], "interrupted": []}, seen
    assert [p.phase for p in done] == ["review", "review"]
    developers = [c for c in harness.calls() if c["role"] == "developer"]
    assert [Path(c["cwd"]).name for c in developers] == [a.slug, b.slug], "B ran once, here, after A"



async def test_a_plan_another_process_develops_takes_a_slot_here_too(harness: Harness) -> None:
    stamps = harness.root / "stamps.jsonl"
    started, release = harness.root / "x.started", harness.root / "x.release"
    harness.set_script(developer=[
        dev_turn(stamp=str(stamps), gate={"after": "I added mul", "started": str(started), "release": str(release),
                                          "limit": 60}),
        dev_turn(stamp=str(stamps))])
    rt = WorkflowRuntime(harness.project, harness.settings(max_parallel_plans=1, auto_review=False))
    other: asyncio.subprocess.Process | None = None
    try:
        x, y = _plan(rt, "Plan X"), _plan(rt, "Plan Y")
        other = await asyncio.create_subprocess_exec(
            sys.executable, "-c", OTHER_APPROVES, str(Path(__file__).resolve().parents[1] / "support"),
            str(harness.root), str(harness.project), str(harness.bin_dir), str(harness.data_dir), str(x.id),
            stdout=asyncio.subprocess.PIPE)
        await _wait(started.exists, "X's Developer to start in the other process")
        here = asyncio.create_task(rt.decide(y.id, "approve"))
        await _wait(lambda: [q.plan_id for q in rt.queued_plans()] == [y.id], "Y to be queued behind X")
        assert _started(stamps) == 1, "Y's Developer waits while X's works in the other process"
        release.write_text("go")
        y = await asyncio.wait_for(here, LIMIT_S)
        out, _ = await asyncio.wait_for(other.communicate(), LIMIT_S)
        spans = _intervals(stamps, rt)
    finally:
        release.write_text("go")
        if other is not None and other.returncode is None:
            other.kill()
            await other.wait()
        rt.close()
    assert out.decode().strip().splitlines()[-1] == "review" and y.phase == "review"
    assert not _overlap(spans[x.id], spans[y.id]), spans


async def test_a_shared_git_change_while_two_plans_work_names_the_other_plan_too(harness: Harness) -> None:
    gates = {name: (harness.root / f"{name}.started", harness.root / f"{name}.release") for name in ("a", "b")}

    def gated(name: str, **extra: Any) -> dict[str, Any]:
        started, release = gates[name]
        return dev_turn(gate={"after": "I added mul", "started": str(started), "release": str(release),
                              "limit": 60}, **extra)

    # B's Developer (hostile) writes an alias into the repository's shared config while A's Developer works
    harness.set_script(developer=[gated("a"), gated("b", run=[["git", "config", "alias.st", "!touch pwned"]])])
    rt = WorkflowRuntime(harness.project, harness.settings(auto_review=False))
    try:
        a, b = _plan(rt, "Plan A"), _plan(rt, "Plan B")
        first = asyncio.create_task(rt.decide(a.id, "approve"))
        await _wait(gates["a"][0].exists, "A's Developer to start")
        second = asyncio.create_task(rt.decide(b.id, "approve"))
        await _wait(gates["b"][0].exists, "B's Developer to start")
        assert "alias.st" in harness.git("config", "--list", "--local")
        gates["a"][1].write_text("go")  # A's turn ends first: its guard finds the alias and puts the config back
        await first
        gates["b"][1].write_text("go")
        await second
        found = [e.detail for e in rt.store.list_plan_events(a.id) if e.type == PlanEventType.GIT_INTEGRITY]
    finally:
        for _started, release in gates.values():
            release.write_text("go")
        rt.close()
    assert "alias.st" not in harness.git("config", "--list", "--local"), "the shared config was put back"
    assert found, "the change was found"
    assert f"(Plan {b.id} was at work at the same time: it may have been its doing.)" in str(found[0]["summary"])


async def test_a_developer_moving_an_idle_plans_branch_is_reported_not_ignored(harness: Harness) -> None:
    harness.set_script(developer=[dev_turn(), dev_turn(run=[["git", "update-ref", "refs/heads/tunaflow/plan-b", "main"]])])
    rt = WorkflowRuntime(harness.project, harness.settings(auto_review=False))
    try:
        b, a = _plan(rt, "Plan B"), _plan(rt, "Plan A")
        b = await rt.decide(b.id, "approve")  # B's work is on its branch; B waits for its review
        developed = harness.git("rev-parse", "tunaflow/plan-b").strip()
        await rt.decide(a.id, "approve")  # A's (hostile) Developer points B's branch back at main
        found = [str(e.detail["summary"]) for e in rt.store.list_plan_events(a.id)
                 if e.type == PlanEventType.GIT_INTEGRITY]
    finally:
        rt.close()
    assert b.phase == "review"
    assert found and "tunaflow/plan-b, another plan's branch, changed during the Developer's turn while that plan " \
                     f"was not at work; tunaflow left it as it is (it was at {developed[:10]})" in found[0], found
