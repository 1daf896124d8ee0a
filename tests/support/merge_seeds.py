"""Done plans with real branches and worktrees, seeded without agent turns, for merge-queue tests."""

from __future__ import annotations

import sys
from pathlib import Path

from tunaflow_tui.core import gitops
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.workflow import (
    Accept,
    Approve,
    ImplementationReported,
    ReviewFinished,
    ReviewStarted,
    SeatResult,
    aggregate,
)
from tunaflow_tui.runtime import development, git_guard
from tunaflow_tui.runtime.runtime import WorkflowRuntime

BASE_CALC = "def add(a, b):\n    return a + b\n"
CALC_MUL = BASE_CALC + "\n\ndef mul(a, b):\n    return a * b\n"
CALC_DIV = BASE_CALC + "\n\ndef div(a, b):\n    return a / b\n"
CALC_BOTH = CALC_MUL + "\n\ndef div(a, b):\n    return a / b  # kept beside mul\n"
TEST_DIV = "from calc import div\n\n\ndef test_div():\n    assert div(8, 2) == 4\n"

MERGE_PROCESS = """
import sys
from pathlib import Path
from tunaflow_tui.core.settings import load_settings
from tunaflow_tui.runtime.runtime import WorkflowRuntime

project = Path(sys.argv[1])
rt = WorkflowRuntime(project, load_settings(project))
try:
    result = rt.merge(int(sys.argv[2]))
    print(result.kind, flush=True)
finally:
    rt.close()
"""


def done_plan(rt: WorkflowRuntime, title: str, slug: str, files: dict[str, str]) -> PlanRecord:
    """A plan approved, implemented (``files`` committed on ``tunaflow/<slug>`` in its own worktree from the
    project's current branch), reviewed with a pass from both seats and accepted."""
    service = rt.service
    plan = service.create_plan_from_proposal(title=title, slug=slug, subtasks=[(title, "")])
    base = gitops.current_branch(rt.project_dir) or "main"
    path = development.worktree_path_for(rt, slug)
    gitops.create_worktree(rt.project_dir, f"tunaflow/{slug}", base, path)
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    gitops.commit_all(path, title)
    branch = rt.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                                    kind="implementation", label=f"Implement: {title}", git_branch=f"tunaflow/{slug}",
                                    worktree_path=str(path))
    plan = rt.store.update_plan(plan.id, impl_branch_id=branch.id, git_branch=f"tunaflow/{slug}",
                                worktree_path=str(path), base_branch=base)
    git_guard.record_baseline(rt, plan, path)
    service.apply(plan.id, Approve(), actor="user")
    service.mark_subtask_done(plan.id, 1)
    service.apply(plan.id, ImplementationReported(), actor="agent")
    service.apply(plan.id, ReviewStarted(), actor="system")
    seats = [SeatResult(seat=s, engine="fclaude", verdict="pass", findings=()) for s in ("reviewer", "verifier")]
    service.apply(plan.id, ReviewFinished(aggregate(seats)), actor="agent")
    service.apply(plan.id, Accept(), actor="user")
    return rt.get_plan(plan.id)


def merge_in_another_process(project: Path, plan_id: int) -> list[str]:
    """The argv of a second tunaflow process that merges ``plan_id`` (as ``tunaflow run --merge`` does)."""
    return [sys.executable, "-c", MERGE_PROCESS, str(project), str(plan_id)]
