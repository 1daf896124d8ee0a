"""`tunaflow run` with several requests: each plan goes through the same gates beside the others, and
`tunaflow status` (another process, meanwhile) lists every plan in flight.

Stand-in agents from the shell (subprocesses); the Developers meet at a barrier or a gate, so a test
passes only if they really work at the same time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from proposals import proposal
from runtime_harness import Harness, dev_turn, verdict
from waiting import until_sync

from tunaflow_tui.core.storage import Store

pytestmark = pytest.mark.e2e

MUL, DIV = "Add multiplication to calc", "Add division to calc"


def _tunaflow(h: Harness, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tunaflow_tui", *args], capture_output=True, text=True,
                          timeout=240, **kwargs)


def _architect() -> list[dict[str, Any]]:
    return [{"text": proposal(MUL, "Add mul", "Test mul")}, {"text": proposal(DIV, "Add div", "Test div")}]


def _plans(h: Harness) -> dict[str, Any]:
    with Store.open(h.project) as store:
        return {p.title: p for p in store.list_plans()}


def test_two_requests_are_developed_at_once_and_each_stops_at_its_own_review(harness: Harness) -> None:
    meet = [str(harness.root / "dev-a"), str(harness.root / "dev-b")]
    developers = [dev_turn(barrier={"mine": mine, "all": meet, "limit": 60}) for mine in meet]
    harness.set_script(architect=_architect(), developer=developers, reviewer=[{"text": verdict("pass")}],
                       verifier=[{"text": verdict("pass")}])
    harness.write_config(idle_s=120)
    run = _tunaflow(harness, "run", str(harness.project), "--request", "add mul", "--request", "add div",
                    "--approve")
    assert run.returncode == 3, run.stdout + run.stderr
    plans = _plans(harness)
    assert set(plans) == {MUL, DIV}, "one plan per request"
    assert [plans[t].pending_decision for t in (MUL, DIV)] == ["review", "review"], \
        "both Developers finished (they met at the barrier) and both reviews wait for --accept"
    for title in (MUL, DIV):
        plan = plans[title]
        assert f"Waiting for you: plan {plan.id} “{title}” — review" in run.stdout
        assert plan.git_branch and plan.worktree_path, "each plan in its own worktree and branch"
        assert f"developer (fclaude) started for plan {plan.id}" in run.stdout, "each line says its plan"
    assert plans[MUL].worktree_path != plans[DIV].worktree_path


def test_a_requests_file_then_resume_drives_every_plan_while_status_lists_them(harness: Harness) -> None:
    started = [harness.root / "started-a", harness.root / "started-b"]
    release = harness.root / "release"
    developers = [dev_turn(gate={"after": "I added mul", "started": str(s), "release": str(release)})
                  for s in started]
    harness.set_script(architect=_architect(), developer=developers, reviewer=[{"text": verdict("pass")}],
                       verifier=[{"text": verdict("pass")}])
    harness.write_config(idle_s=120)
    requests = harness.root / "requests.txt"
    requests.write_text("add mul\n\n   \nadd div\n")

    first = _tunaflow(harness, "run", str(harness.project), "--requests-file", str(requests))
    assert first.returncode == 3, first.stdout + first.stderr
    assert [p.pending_decision for p in _plans(harness).values()] == ["approval", "approval"]
    listed = json.loads(_tunaflow(harness, "status", str(harness.project), "--json").stdout)["plans"]
    assert [(p["title"], p["in_flight"], p["pending_decision"]["kind"]) for p in listed] == [
        (MUL, True, "approval"), (DIV, True, "approval")]

    resumed = subprocess.Popen([sys.executable, "-m", "tunaflow_tui", "run", str(harness.project), "--resume",
                                "--approve", "--accept"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        until_sync(lambda: all(s.exists() for s in started), "both Developers at work at the same time")
        meanwhile = _tunaflow(harness, "status", str(harness.project), "--json")
        listed = json.loads(meanwhile.stdout)["plans"]
        assert [(p["title"], p["phase"], p["in_flight"], p["waiting"]["kind"]) for p in listed] == [
            (MUL, "dev", True, "working"), (DIV, "dev", True, "working")], "another process sees both at work"
        release.write_text("go")
        out, err = resumed.communicate(timeout=240)
    finally:
        if resumed.poll() is None:
            resumed.kill()
            resumed.wait()
    assert resumed.returncode == 0, out + err
    plans = _plans(harness)
    assert [plans[t].phase for t in (MUL, DIV)] == ["done", "done"]
    assert f"Plan {plans[MUL].id} “{MUL}” is done" in out and f"Plan {plans[DIV].id} “{DIV}” is done" in out


def test_a_requests_file_that_holds_no_request_is_a_usage_error(harness: Harness) -> None:
    empty = harness.root / "empty.txt"
    empty.write_text("\n  \n")
    run = _tunaflow(harness, "run", str(harness.project), "--requests-file", str(empty))
    assert run.returncode == 2 and "holds no request" in run.stderr
    missing = _tunaflow(harness, "run", str(harness.project), "--requests-file", str(harness.root / "none.txt"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    assert not (harness.project / ".tunaflow" / "state.db").exists(), "nothing was started"


def test_resume_starts_the_plans_an_earlier_run_left_queued_in_their_place(harness: Harness) -> None:
    from tunaflow_tui.core.workflow import Approve
    from tunaflow_tui.core.workflow.phases import Actor, PlanEventType
    from tunaflow_tui.core.workflow.service import WorkflowService

    stamps = harness.root / "stamps.jsonl"
    harness.set_script(developer=[dev_turn(stamp=str(stamps))], reviewer=[{"text": verdict("pass")}],
                       verifier=[{"text": verdict("pass")}])
    harness.write_config("max_parallel_plans = 1\n", idle_s=120)  # into the [workflow] table it ends with
    with Store.open(harness.project) as store:  # what a stopped run leaves: B queued before A, neither started
        service = WorkflowService(store)
        a, b = (service.create_plan_from_proposal(title=t, slug=t.lower().replace(" ", "-"),
                                                  subtasks=[("Add mul", ""), ("Test mul", "")]) for t in (MUL, DIV))
        for plan in (b, a):
            service.apply(plan.id, Approve(), actor=Actor.USER)
            service.record(plan.id, PlanEventType.PLAN_QUEUED, Actor.SYSTEM, {"working": 1, "limit": 1})

    run = _tunaflow(harness, "run", str(harness.project), "--resume", "--accept")
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"Plan {b.id} was queued (max_parallel_plans = 1): it starts in its place." in run.stdout
    plans = _plans(harness)
    assert [plans[t].phase for t in (MUL, DIV)] == ["done", "done"], "both started, developed, reviewed, accepted"
    by_dir = {p.worktree_path: p.id for p in plans.values()}
    order = [by_dir[s["cwd"]] for s in map(json.loads, stamps.read_text().splitlines()) if s["at"] == "start"]
    assert order == [b.id, a.id], "one at a time (the cap), in the queue's order"
