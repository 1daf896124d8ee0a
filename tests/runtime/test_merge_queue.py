"""The merge queue: done plans land one at a time; a plan the base moved under is resolved by its Developer.

Plans are seeded done on real branches and worktrees (no agent turn replays them); the resolve turn,
the tests and the review that follow run with the scripted claude/codex stand-ins.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from merge_seeds import CALC_BOTH, CALC_DIV, CALC_MUL, TEST_DIV, done_plan, merge_in_another_process
from runtime_harness import TEST_MUL, Harness, verdict
from waiting import until_sync

from tunaflow_tui.core.gitops.integration import start_base_merge
from tunaflow_tui.core.workflow import MergeConflicted, ResolveConflict
from tunaflow_tui.runtime.events import Progress, RuntimeEvent
from tunaflow_tui.runtime.runtime import WorkflowRuntime

RESOLVED = "I merged main and kept both functions.\n\n<!-- tunaflow:impl-complete -->\n"


def _runtime(h: Harness, events: list[RuntimeEvent] | None = None) -> WorkflowRuntime:
    return WorkflowRuntime(h.project, h.settings(), observer=(events.append if events is not None else None))


def _types(rt: WorkflowRuntime, plan_id: int) -> list[str]:
    return [e.type for e in rt.store.list_plan_events(plan_id)]


def _two_plans_on_calc(rt: WorkflowRuntime) -> tuple[int, int]:
    mul = done_plan(rt, "Add multiplication", "add-mul", {"calc.py": CALC_MUL, "tests/test_mul.py": TEST_MUL})
    div = done_plan(rt, "Add division", "add-div", {"calc.py": CALC_DIV, "tests/test_div.py": TEST_DIV})
    return mul.id, div.id


def _b_stopped_at_its_conflict(rt: WorkflowRuntime) -> int:
    """Both plans done, A merged, B's merge stopped on the conflict A's landing made: B's id."""
    a, b = _two_plans_on_calc(rt)
    rt.merge(a)
    rt.merge(b)
    return b


async def test_b_conflicts_after_a_lands_its_developer_resolves_it_is_reviewed_again_then_merges(
        harness: Harness) -> None:
    rt = _runtime(harness)
    try:
        a, b = _two_plans_on_calc(rt)
        assert str(rt.merge(a).kind) == "fast-forward"
        main_after_a = harness.git("rev-parse", "main").strip()
        b_before = harness.git("rev-parse", "tunaflow/add-div").strip()

        result = rt.merge(b)
        assert str(result.kind) == "conflict" and result.conflicted_files == ("calc.py",)
        plan = rt.get_plan(b)
        assert (plan.phase, plan.pending_decision) == ("done", "merge_conflict")
        assert plan.pending_detail["base"] == "main" and list(plan.pending_detail["files"]) == ["calc.py"]
        assert harness.git("rev-parse", "main").strip() == main_after_a, "nothing is forced onto main"
        assert harness.git("status", "--porcelain").strip() == ""
        assert [d.value for d in rt.way_on(b).decisions] == ["resolve_conflict", "leave_conflict"]
        assert [w.plan_id for w in rt.waiting()] == [b], "the conflict waits for the user like any decision"
        with pytest.raises(ValueError, match="answer its merge conflict first"):
            rt.merge(b)

        harness.set_script(developer=[{"text": RESOLVED, "write": {"calc.py": CALC_BOTH}}],
                           reviewer=[{"text": verdict("pass", "div sits beside mul")}],
                           verifier=[{"text": verdict("pass", "both tested")}])
        plan = await rt.decide(b, "resolve_conflict")
        assert (plan.phase, plan.pending_decision) == ("review", "review")
        assert plan.pending_detail["verdict"] == "pass"

        calls = harness.calls()
        [developer] = [c for c in calls if c["role"] == "developer"]
        assert "`main`" in developer["prompt"] and "- calc.py" in developer["prompt"]
        review = next(c for c in calls if c["role"] == "reviewer")
        assert "+    return a / b  # kept beside mul" in review["prompt"], "the review reads the resolution"
        assert "+def mul" not in review["prompt"], "the diff is against the new base, which has mul"
        tests_ran = [e for e in rt.store.list_plan_events(b) if e.type == "tests_ran"]
        assert tests_ran[-1].detail["status"] == "passed"

        worktree = Path(plan.worktree_path or "")
        merge = harness.git("rev-list", "--merges", "--parents", "-n", "1", f"{main_after_a}..tunaflow/add-div").split()
        assert merge[2:] == [main_after_a], "main merged into the plan's branch"
        subprocess.run(["git", "merge-base", "--is-ancestor", b_before, merge[1]], cwd=worktree, check=True)
        assert harness.git("status", "--porcelain", cwd=worktree).strip() == ""

        plan = await rt.decide(b, "accept")
        assert plan.phase == "done" and plan.pending_decision is None
        assert str(rt.merge(b).kind) == "fast-forward"
        assert (harness.project / "calc.py").read_text() == CALC_BOTH
        assert harness.git("rev-parse", "main").strip() != main_after_a
        types = _types(rt, b)
        assert types.index("merge_conflict") < types.index("conflict_resolution_requested") < types.index("merged")
        records = [m.content for m in rt.store.list_messages("main") if m.role == "system"]
        assert any("stopped on conflicts" in text for text in records)
        assert any("asked the Developer to merge main into" in text for text in records)
    finally:
        rt.close()


async def test_a_conflict_the_developer_leaves_stops_at_a_decision_naming_the_files(harness: Harness) -> None:
    rt = _runtime(harness)
    try:
        b = _b_stopped_at_its_conflict(rt)
        main = harness.git("rev-parse", "main").strip()
        b_tip = harness.git("rev-parse", "tunaflow/add-div").strip()
        # a hostile Developer: claims success, leaves the markers, and tries to move main onto its branch
        harness.set_script(developer=[{"text": RESOLVED, "run": [["git", "update-ref", "refs/heads/main", "HEAD"]]}])
        plan = await rt.decide(b, "resolve_conflict")
        assert (plan.phase, plan.pending_decision) == ("rework", "conflict_unresolved")
        assert list(plan.pending_detail["files"]) == ["calc.py"]
        way = rt.way_on(b)
        assert "calc.py" in way.summary and way.primary is not None and way.primary.value == "resolve_conflict"
        assert harness.git("rev-parse", "main").strip() == main, "the base is where it was"
        assert harness.git("show", "tunaflow/add-div:calc.py") == CALC_DIV, "nothing with markers was committed"
        assert harness.git("merge-base", "--is-ancestor", b_tip, "tunaflow/add-div") == ""
        tip = harness.git("rev-parse", "tunaflow/add-div").strip()
        assert not [c for c in harness.calls() if c["role"] == "reviewer"], "no review of an unresolved merge"

        plan = await rt.decide(b, "leave_conflict")
        assert (plan.phase, plan.pending_decision) == ("done", None)
        worktree = Path(plan.worktree_path or "")
        assert harness.git("status", "--porcelain", cwd=worktree).strip() == "", "the merge was aborted"
        assert (worktree / "calc.py").read_text() == CALC_DIV, "the branch is back as it was reviewed"
        assert harness.git("rev-parse", "tunaflow/add-div").strip() == tip
        assert rt.way_on(b).primary is not None and rt.way_on(b).primary.value == "merge"
        records = [m.content for m in rt.store.list_messages("main") if m.role == "system"]
        assert any("left plan" in text and "unmerged after its merge conflict" in text for text in records)
    finally:
        rt.close()


async def test_an_undone_merge_is_not_taken_for_a_resolution(harness: Harness) -> None:
    rt = _runtime(harness)
    try:
        b = _b_stopped_at_its_conflict(rt)
        harness.set_script(developer=[{"text": RESOLVED, "run": [["git", "merge", "--abort"]]}])
        plan = await rt.decide(b, "resolve_conflict")
        assert plan.pending_decision == "conflict_unresolved"
        assert list(plan.pending_detail["files"]) == ["calc.py"] and "undone" in plan.pending_detail["reason"]
    finally:
        rt.close()


def _gate_post_merge(h: Harness) -> tuple[Path, Path]:
    """A post-merge hook that holds the first merge until the test releases it."""
    started, release = h.root / "merge-started", h.root / "merge-release"
    hook = h.project / ".git" / "hooks" / "post-merge"
    hook.write_text(f"#!/bin/sh\nif [ ! -e {release} ]; then\n  touch {started}\n"
                    f"  n=0; while [ ! -e {release} ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done\nfi\n")
    hook.chmod(0o755)
    return started, release


def test_two_merges_from_two_processes_land_one_after_the_other(harness: Harness) -> None:
    harness.write_config()
    started, release = _gate_post_merge(harness)  # before the plans: their trusted hooks include it
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    other: subprocess.Popen[str] | None = None
    try:
        a = done_plan(rt, "Add multiplication", "add-mul", {"mul.py": "MUL = 1\n"}).id
        b = done_plan(rt, "Add division", "add-div", {"div.py": "DIV = 1\n"}).id
        other = subprocess.Popen(merge_in_another_process(harness.project, a), stdout=subprocess.PIPE, text=True)
        until_sync(started.exists, "the other process to be inside its merge")
        behind: list[int] = []
        with ThreadPoolExecutor(1) as pool:
            mine = pool.submit(rt.merge, b, behind.append)
            until_sync(lambda: behind == [a], "this merge to queue behind the other process's")
            assert "merged" not in _types(rt, b), "nothing of plan B lands while plan A's merge runs"
            assert any(isinstance(e, Progress) and f"queued behind plan {a}" in e.text for e in events)
            release.touch()
            result = mine.result(timeout=60)
        out, _ = other.communicate(timeout=60)
        assert other.returncode == 0 and out.strip() == "fast-forward"
        assert str(result.kind) == "merge-commit"
        assert (harness.project / "mul.py").exists() and (harness.project / "div.py").exists()
        a_events = rt.store.list_plan_events(a)
        b_events = rt.store.list_plan_events(b)
        a_done = next(e.id for e in a_events if e.type == "merge_unqueued")
        b_merged = next(e.id for e in b_events if e.type == "merged")
        assert next(e.id for e in a_events if e.type == "merged") < a_done < b_merged, "one after the other"
        assert harness.git("status", "--porcelain").strip() == ""
    finally:
        release.touch()
        if other is not None and other.poll() is None:
            other.kill()
            other.wait()
        rt.close()


def test_a_merge_queued_behind_a_process_that_died_goes_ahead(harness: Harness) -> None:
    from other_process import idle_holder

    rt = _runtime(harness)
    try:
        a = done_plan(rt, "Add multiplication", "add-mul", {"mul.py": "MUL = 1\n"}).id
        b = done_plan(rt, "Add division", "add-div", {"div.py": "DIV = 1\n"}).id
        behind: list[int] = []
        with ThreadPoolExecutor(1) as pool:
            with idle_holder() as holder:
                # plan A's merge was asked by a process that is alive now, and killed as the block ends
                rt.service.record(a, "merge_queued", "user", {"host": holder.host, "boot_id": holder.boot_id,
                                                              "pid": holder.pid, "pid_start": holder.pid_start})
                mine = pool.submit(rt.merge, b, behind.append)
                until_sync(lambda: behind == [a], "this merge to queue behind plan A's")
                assert not mine.done()
            assert str(mine.result(timeout=60).kind) == "fast-forward"
        assert (harness.project / "div.py").exists()
    finally:
        rt.close()


async def test_a_resolve_turn_that_fails_or_cannot_start_stops_at_the_conflict_not_a_commit(harness: Harness) -> None:
    rt = _runtime(harness)
    try:
        b = _b_stopped_at_its_conflict(rt)
        harness.set_script(developer=[{"crash": True}])  # the Developer's CLI dies mid-turn
        plan = await rt.decide(b, "resolve_conflict")
        assert plan.pending_decision == "conflict_unresolved" and list(plan.pending_detail["files"]) == ["calc.py"]
        assert harness.git("show", "tunaflow/add-div:calc.py") == CALC_DIV
        plan = await rt.decide(b, "leave_conflict")
        # the base it was to merge is gone meanwhile: the merge cannot start, and the plan says so
        rt.store.update_plan(b, base_branch="gone")
        rt.apply(b, MergeConflicted("gone", ("calc.py",)), "user")  # seeded: the question asked again
        harness.set_script(developer=[{"text": RESOLVED, "write": {"calc.py": CALC_BOTH}}])
        plan = await rt.decide(b, "resolve_conflict")
        assert plan.pending_decision == "conflict_unresolved"
        assert "did not start" in plan.pending_detail["reason"]
        assert len([c for c in harness.calls() if c["role"] == "developer"]) == 1, "no turn without its merge"
        assert harness.git("show", "tunaflow/add-div:calc.py") == CALC_DIV
    finally:
        rt.close()


async def test_a_resolve_turn_interrupted_by_a_crash_is_run_again_as_a_resolve(harness: Harness) -> None:
    rt = _runtime(harness)
    try:
        b = _b_stopped_at_its_conflict(rt)
        # seeded: the user asked for the resolve, the merge started in the worktree, then tunaflow was killed
        plan = rt.apply(b, ResolveConflict(), "user")
        start_base_merge(Path(plan.worktree_path or ""), "main")
        rt.service.record(b, "agent_started", "system", {"role": "developer", "step": "rework"})
        harness.set_script(developer=[{"text": RESOLVED}])  # claims success, leaves the markers
        plan = await rt.resume_interrupted(b, how="retry")
        [developer] = [c for c in harness.calls() if c["role"] == "developer"]
        assert "Resolve every conflict" in developer["prompt"] and "Review findings" not in developer["prompt"]
        assert plan.pending_decision == "conflict_unresolved"
        assert harness.git("show", "tunaflow/add-div:calc.py") == CALC_DIV, "no markers were committed"
    finally:
        rt.close()
