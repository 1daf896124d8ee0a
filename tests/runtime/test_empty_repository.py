"""A git repository with no commits: asked about up front, never a plan stuck on "unknown revision"."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from runtime_harness import PROPOSAL, Harness, dev_turn, verdict

from tunaflow_tui.core.storage import Store
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _empty_repo(h: Harness) -> Path:
    """The calc project as a fresh ``git init`` with nothing committed yet."""
    shutil.rmtree(h.project / ".git")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=h.project, check=True)
    return h.project


def _script(h: Harness) -> None:
    h.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                 reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])


async def test_approval_in_an_empty_repository_is_refused_with_the_way_out_and_the_plan_waits(
        harness: Harness) -> None:
    project = _empty_repo(harness)
    _script(harness)
    rt = WorkflowRuntime(project, harness.settings())
    try:
        await rt.send_user_message("Please add multiplication")
        [plan] = rt.store.list_plans()
        with pytest.raises(ValueError, match="no commits yet") as refused:
            await rt.decide(plan.id, "approve")
        assert "initial commit" in str(refused.value)
        plan = rt.get_plan(plan.id)
        assert plan.phase == "approval" and plan.pending_decision == "approval", "the proposal still waits"
        assert not [c for c in harness.calls() if c["role"] == "developer"]

        assert rt.needs_initial_commit
        rt.create_initial_commit()
        assert not rt.needs_initial_commit
        plan = await rt.decide(plan.id, "approve")
        assert plan.pending_decision == "review"
    finally:
        rt.close()
    tracked = subprocess.run(["git", "ls-files"], cwd=project, capture_output=True, text=True, check=True).stdout
    assert "calc.py" in tracked.split() and ".tunaflow" not in tracked


def _run(h: Harness, *args: str) -> subprocess.CompletedProcess[str]:
    h.write_config()
    return subprocess.run([sys.executable, "-m", "tunaflow_tui", "run", str(h.project), *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.e2e
def test_tunaflow_run_says_what_to_do_in_an_empty_repository_and_can_make_the_commit(harness: Harness) -> None:
    _empty_repo(harness)
    _script(harness)
    refused = _run(harness, "--request", "add mul", "--approve")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "no commits yet" in refused.stderr and "--initial-commit" in refused.stderr
    assert harness.calls() == [], "nothing was asked of the Architect"

    done = _run(harness, "--request", "add mul", "--approve", "--accept", "--initial-commit")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Created the initial commit" in done.stdout
    with Store.open(harness.project) as store:
        [plan] = store.list_plans()
        assert plan.phase == "done"
