"""Dev and rework: the implementation branch, its git worktree, the plan documents, the Developer."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from tunaflow_tui.core import gitops
from tunaflow_tui.core.markers import ImplComplete as ImplCompleteMarker
from tunaflow_tui.core.markers import SubtaskDone as SubtaskDoneMarker
from tunaflow_tui.core.plandocs import PlanDocument, PlanSubtask, plan_path, task_path, write_plan_docs
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.workflow import DevStalled, ImplComplete
from tunaflow_tui.core.workflow.phases import Actor, Phase
from tunaflow_tui.runtime import prompts
from tunaflow_tui.runtime.planning import record_rejections

if TYPE_CHECKING:
    from tunaflow_tui.runtime.runtime import WorkflowRuntime


def plan_document(plan: PlanRecord) -> PlanDocument:
    """The plan as plan documents see it."""
    return PlanDocument(
        title=plan.title,
        slug=plan.slug,
        description=plan.description,
        expected_outcome=plan.expected_outcome or "",
        constraints=plan.constraints,
        non_goals=plan.non_goals,
        subtasks=tuple(PlanSubtask(s.index, s.title, s.details, s.status) for s in plan.subtasks),
        revision=plan.revision + 1,
    )


def worktree_path_for(rt: WorkflowRuntime, slug: str) -> Path:
    """Where a plan's worktree lives: outside the project, under the user data dir."""
    root = rt.settings.workflow.worktree_root
    if root is None:
        from platformdirs import user_data_dir

        root = Path(user_data_dir("tunaflow")) / "worktrees"
    digest = hashlib.sha256(str(rt.project_dir).encode()).hexdigest()[:8]
    return Path(root) / f"{rt.project_dir.name}-{digest}" / slug


def workdir(rt: WorkflowRuntime, plan: PlanRecord) -> Path:
    """The directory the Developer and the reviewers work in."""
    return Path(plan.worktree_path) if plan.worktree_path else rt.project_dir


async def prepare_implementation(rt: WorkflowRuntime, plan: PlanRecord) -> PlanRecord:
    """Create the implementation branch, the git branch and worktree, and write the plan documents."""
    if plan.impl_branch_id is None and not rt.is_git:
        rt.progress("This project is not a git repository: the Developer works in place (no isolation, no merge).")
    is_git = rt.is_git
    # git and file work runs off the event loop so the terminal app stays responsive
    return await asyncio.to_thread(_prepare_sync, rt, plan, is_git)


def _prepare_sync(rt: WorkflowRuntime, plan: PlanRecord, is_git: bool) -> PlanRecord:
    store = rt.store
    if plan.impl_branch_id is None:
        git_branch: str | None = None
        worktree: str | None = None
        base: str | None = None
        if is_git and rt.settings.workflow.use_worktree:
            base = gitops.current_branch(rt.project_dir) or gitops.head_sha(rt.project_dir)
            git_branch = f"tunaflow/{plan.slug}"
            path = worktree_path_for(rt, plan.slug)
            gitops.create_worktree(rt.project_dir, git_branch, base, path)
            worktree = str(path)
        branch = store.create_branch(
            conversation_id="main",
            checkpoint_id=plan.source_message_id,
            parent_branch_id=None,
            mode="chat",
            kind="implementation",
            label=f"Implement: {plan.title}"[:120],
            git_branch=git_branch,
            worktree_path=worktree,
        )
        plan = store.update_plan(
            plan.id, impl_branch_id=branch.id, git_branch=git_branch, worktree_path=worktree, base_branch=base
        )
    root = workdir(rt, plan)
    write_plan_docs(root, plan_document(plan))
    if plan.worktree_path:
        gitops.commit_all(root, f"Plan: {plan.title}")
    return plan


def _doc_names(root: Path, plan: PlanRecord) -> tuple[str, list[str]]:
    plan_file = str(plan_path(root, plan.slug).relative_to(root.resolve()))
    tasks = [str(task_path(root, plan.slug, s.index).relative_to(root.resolve())) for s in plan.subtasks]
    return plan_file, tasks


async def run_developer(rt: WorkflowRuntime, plan: PlanRecord, prompt: str, *, fresh: bool = False) -> PlanRecord:
    """Send ``prompt`` to the Developer in the implementation branch and apply its markers."""
    assert plan.impl_branch_id is not None
    conversation = f"branch:{plan.impl_branch_id}"
    root = workdir(rt, plan)
    rt.store.add_plan_event(plan.id, "agent_started", "system", {"role": "developer", "step": plan.phase})
    result = await rt.run_role_turn("developer", conversation, prompt, cwd=root, plan=plan, fresh_session=fresh)
    rt.store.add_plan_event(
        plan.id, "agent_finished", "system",
        {"role": "developer", "step": plan.phase, "status": result.message.status, "message_id": result.message.id},
    )
    record_rejections(rt, result.parse, "developer", plan.id)
    for marker in result.parse.markers:
        if isinstance(marker, SubtaskDoneMarker) and marker.accepted:
            rt.service.mark_subtask_done(plan.id, marker.index, actor="agent")
    plan = rt.get_plan(plan.id)
    rt.plan_changed(plan)
    if plan.worktree_path:
        await asyncio.to_thread(gitops.commit_all, root, f"tunaflow: {plan.title} (developer)")
    if not result.ok:
        reason = f"the Developer's turn ended with an error: {result.message.error_message or result.message.status}"
        return rt.apply(plan.id, DevStalled(reason=reason[:500]), Actor.SYSTEM)
    if any(isinstance(m, ImplCompleteMarker) and m.accepted for m in result.parse.markers):
        return rt.apply(plan.id, ImplComplete(), Actor.AGENT)
    return rt.apply(plan.id, DevStalled(reason="the Developer stopped without reporting impl-complete"), Actor.SYSTEM)


async def start_dev(rt: WorkflowRuntime, plan: PlanRecord) -> PlanRecord:
    """On approval: prepare the branch and worktree, then send the implementation prompt."""
    plan = await prepare_implementation(rt, plan)
    root = workdir(rt, plan)
    plan_file, tasks = _doc_names(root, plan)
    return await run_developer(rt, plan, prompts.implementation_prompt(plan, tasks, plan_file), fresh=True)


def merge_plan(rt: WorkflowRuntime, plan_id: int) -> gitops.MergeResult:
    """Merge ``tunaflow/{slug}`` into the base it came from; a conflict is reported, nothing lost."""
    plan = rt.get_plan(plan_id)
    if plan.phase != Phase.DONE:
        raise ValueError(f"plan {plan_id} is in {plan.phase}: only a done plan can be merged")
    if not plan.git_branch or not plan.base_branch:
        raise ValueError(f"plan {plan_id} has no git branch to merge (the project is not a git repository)")
    if not gitops.branch_exists(rt.project_dir, plan.base_branch):
        raise ValueError(
            f"plan {plan_id} started from a detached HEAD ({plan.base_branch[:12]}); "
            f"merge {plan.git_branch} yourself into the branch you want"
        )
    result = gitops.merge_branch(rt.project_dir, plan.git_branch, plan.base_branch)
    rt.store.add_plan_event(
        plan.id, "merged" if result.kind != "conflict" else "merge_conflict", "user",
        {"kind": str(result.kind), "sha": result.sha, "conflicted_files": list(result.conflicted_files)},
    )
    if result.kind != "conflict" and plan.worktree_path:
        remove_plan_worktree(rt, plan_id)
    return result


def remove_plan_worktree(rt: WorkflowRuntime, plan_id: int) -> None:
    """Remove the plan's worktree (the git branch keeps the work)."""
    plan = rt.get_plan(plan_id)
    if not plan.worktree_path:
        return
    path = Path(plan.worktree_path)
    if path.exists():
        gitops.remove_worktree(rt.project_dir, path, force=False)
    rt.store.update_plan(plan.id, worktree_path=None)
    rt.store.add_plan_event(plan.id, "worktree_removed", "user", {"path": str(path)})
