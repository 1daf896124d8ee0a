"""What a plan's way on depends on besides its state, read from the plan and its history."""

from __future__ import annotations

from pathlib import Path

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import PlanContext, PlanEventType
from tunaflow_tui.core.workflow.service import WorkflowService, plan_context


def test_the_context_names_a_running_agent_an_unfinished_step_and_what_is_left_to_clean(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        plan = WorkflowService(store).create_plan_from_proposal(title="Ctx", slug="ctx")
        assert plan_context(plan, store.list_plan_events(plan.id)) == PlanContext()
        plan = store.update_plan(plan.id, git_branch="tunaflow/ctx", worktree_path=str(tmp_path / "wt"))
        store.add_plan_event(plan.id, PlanEventType.AGENT_STARTED, "system", {"role": "developer"})
        assert plan_context(plan, store.list_plan_events(plan.id), running=True) == PlanContext(
            agent_running=True, open_step="developer", git_branch="tunaflow/ctx", worktree=True, merged=False)
        store.add_plan_event(plan.id, PlanEventType.AGENT_FINISHED, "system", {"role": "developer"})
        store.add_plan_event(plan.id, PlanEventType.AGENT_STARTED, "system", {})
        store.add_plan_event(plan.id, PlanEventType.MERGED, "system", {})
        assert plan_context(plan, store.list_plan_events(plan.id)) == PlanContext(
            agent_running=False, open_step="agent", git_branch="tunaflow/ctx", worktree=True, merged=True)
