"""Dev and rework: the implementation branch, its git worktree, the plan documents, the Developer."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tunaflow_tui.core import gitops
from tunaflow_tui.core.gitops import integration
from tunaflow_tui.core.markers import ImplComplete as ImplCompleteMarker
from tunaflow_tui.core.markers import ParseResult
from tunaflow_tui.core.markers import SubtaskDone as SubtaskDoneMarker
from tunaflow_tui.core.plandocs import PlanDocument, PlanSubtask, plan_path, task_path, write_plan_docs
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.workflow import Command, DevStalled, ImplementationReported, MergeConflicted
from tunaflow_tui.core.workflow.event_text import USER_CANCELLED
from tunaflow_tui.core.workflow.phases import Actor, Phase, PlanEventType
from tunaflow_tui.runtime import git_guard, merge_queue, role_prompts, worktree_prep
from tunaflow_tui.runtime.events import NoticeRaised
from tunaflow_tui.runtime.plan_env import plan_environment
from tunaflow_tui.runtime.planning import record_rejections
from tunaflow_tui.runtime.turn_spec import TurnSpec

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import StepContext


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


def worktree_path_for(rt: StepContext, slug: str) -> Path:
    """Where a plan's worktree lives: outside the project, under the user data dir."""
    root = rt.settings.workflow.worktree_root
    if root is None:
        from platformdirs import user_data_dir

        root = Path(user_data_dir("tunaflow")) / "worktrees"
    digest = hashlib.sha256(str(rt.project_dir).encode()).hexdigest()[:8]
    return Path(root) / f"{rt.project_dir.name}-{digest}" / slug


def workdir(rt: StepContext, plan: PlanRecord) -> Path:
    """The directory the Developer and the reviewers work in."""
    return Path(plan.worktree_path) if plan.worktree_path else rt.project_dir


async def prepare_implementation(rt: StepContext, plan: PlanRecord) -> PlanRecord:
    """Create the implementation branch, the git branch and worktree, and write the plan documents."""
    if plan.impl_branch_id is None and not rt.is_git:
        rt.progress("This project is not a git repository: the Developer works in place (no isolation, no merge).")
    is_git = rt.is_git
    # git and file work runs off the event loop so the terminal app stays responsive
    plan, commit_error = await asyncio.to_thread(_prepare_sync, rt, plan, is_git)
    if commit_error:
        rt.service.record(plan.id, PlanEventType.COMMIT_FAILED, Actor.SYSTEM, {"error": commit_error[:2000]})
        rt.emit(NoticeRaised(f"Could not commit the plan documents (they stay in the worktree): {commit_error}",
                             "warning"))
    return plan


def _prepare_sync(rt: StepContext, plan: PlanRecord, is_git: bool) -> tuple[PlanRecord, str | None]:
    store = rt.store
    if plan.impl_branch_id is None:
        git_branch: str | None = None
        worktree: str | None = None
        base: str | None = None
        if is_git and rt.settings.workflow.use_worktree:
            base = gitops.current_branch(rt.project_dir) or gitops.head_sha(rt.project_dir)
            git_branch = f"tunaflow/{plan.slug}"
            path = worktree_path_for(rt, plan.slug)
            set_aside = gitops.set_aside_stale_folder(rt.project_dir, path)
            gitops.create_worktree(rt.project_dir, git_branch, base, path)
            worktree = str(path)
            # a new worktree is made ready (.worktreeinclude, worktree_setup) before the Developer starts
            rt.service.record(plan.id, worktree_prep.CREATED_EVENT, Actor.SYSTEM,
                              {"path": worktree, **({"set_aside": str(set_aside)} if set_aside else {})})
            if set_aside is not None:
                rt.emit(NoticeRaised(f"A folder that is not a worktree of this repository (left by an earlier project "
                                     f"at this path?) was where the plan's worktree goes: it was moved, untouched, "
                                     f"to {set_aside}.", "warning"))
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
        if worktree is not None:  # the hooks tunaflow's own commits will trust: the ones there are now
            git_guard.record_baseline(rt, plan, Path(worktree))
    root = workdir(rt, plan)
    write_plan_docs(root, plan_document(plan))
    # a merge of the base waiting in the worktree (a resolve turn run again) is the Developer's to finish:
    # committing the plan documents now would commit it, conflicts and all
    if plan.worktree_path and not integration.merge_in_progress(root):
        try:
            git_guard.commit_on_plan_branch(rt, plan, root, f"Plan: {plan.title}")
        except gitops.GitError as exc:  # e.g. the project's pre-commit hook refuses: not a reason to stop
            return plan, str(exc)
    return plan, None


def _doc_names(root: Path, plan: PlanRecord) -> tuple[str, list[str]]:
    plan_file = str(plan_path(root, plan.slug).relative_to(root.resolve()))
    tasks = [str(task_path(root, plan.slug, s.index).relative_to(root.resolve())) for s in plan.subtasks]
    return plan_file, tasks


PromptBuilder = Callable[[PlanRecord, Path], str]


@dataclass(frozen=True)
class TurnHooks:
    """What a special Developer turn adds around the usual one (the resolve turn of a merge conflict).

    ``before`` runs after tunaflow's own commit of the plan documents and the git guard's snapshot, just
    before the agent; ``left_over`` runs after the agent, before tunaflow commits its work: a command
    it returns (e.g. the conflicts it left) is applied instead, and nothing is committed.
    """

    before: Callable[[PlanRecord, Path], Awaitable[None]] | None = None
    left_over: Callable[[PlanRecord, Path], Awaitable[Command | None]] | None = None


def implementation_prompt_for(plan: PlanRecord, root: Path) -> str:
    """The first implementation prompt, naming the plan documents in the worktree."""
    plan_file, tasks = _doc_names(root, plan)
    return role_prompts.implementation_prompt(plan, tasks, plan_file)


async def run_developer(
    rt: StepContext, plan: PlanRecord, prompt_for: PromptBuilder, *, fresh: bool = False,
    hooks: TurnHooks = TurnHooks(),
) -> PlanRecord:
    """Run one Developer turn in the implementation branch and apply its markers.

    Whatever goes wrong on the way (the worktree cannot be created, the engine fails) ends in a
    pending ``dev_stalled`` decision that carries the reason, never in a plan nobody can move.
    The Developer starts once the plan has one of the ``max_parallel_plans`` slots; until then the
    plan is queued. A plan held or abandoned while queued returns unchanged, its Developer never started.
    """
    if not await rt.slots.take(plan.id):
        return rt.get_plan(plan.id)
    step = {"role": "developer", "step": str(plan.phase)}
    rt.service.record(plan.id, PlanEventType.AGENT_STARTED, Actor.SYSTEM, step)
    ticked: set[int] = set()
    guard = None

    def tick(parse: ParseResult) -> None:
        """Tick each subtask the Developer reports done, as soon as its marker arrives."""
        fresh_ticks = [m.index for m in parse.markers
                       if isinstance(m, SubtaskDoneMarker) and m.accepted and m.index not in ticked]
        for index in fresh_ticks:
            ticked.add(index)
            rt.service.mark_subtask_done(plan.id, index, actor=Actor.AGENT)
        if fresh_ticks:
            rt.plan_changed(rt.get_plan(plan.id))

    try:
        plan = await prepare_implementation(rt, plan)
        preparing = worktree_prep.needs_preparation(rt, plan)
        waiting = await worktree_prep.ensure_ready(rt, plan)
        if waiting is not None:  # the setup failed: the user decides (retry / skip) before the Developer runs
            rt.service.record(plan.id, PlanEventType.AGENT_FINISHED, Actor.SYSTEM, {**step, "status": "setup_failed"})
            return waiting
        if preparing and plan.worktree_path:  # the user's own setup may install hooks (pre-commit install)
            await asyncio.to_thread(git_guard.refresh_baseline, rt, plan, Path(plan.worktree_path))
        root = workdir(rt, plan)
        conversation = f"branch:{plan.impl_branch_id}"
        guard = await git_guard.before_turn(rt, plan)
        if hooks.before is not None:
            await hooks.before(plan, root)
        with plan_environment(rt.project_dir, plan.id, root) as env:
            result = await rt.turns.run(TurnSpec(
                "developer", conversation, prompt_for(plan, root), cwd=root, plan=plan, fresh_session=fresh,
                on_markers=tick, env=env,
            ))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        reason = f"the Developer could not start: {type(exc).__name__}: {exc}"
        rt.service.record(plan.id, PlanEventType.AGENT_FINISHED, Actor.SYSTEM, {**step, "status": "error", "error": reason})
        rt.emit(NoticeRaised(reason, "error"))
        if guard is not None:
            await git_guard.after_turn(rt, plan, guard, actor=git_guard.DEVELOPER)
        if hooks.left_over is not None:  # e.g. a merge started for a resolve turn that never ran
            left = await hooks.left_over(rt.get_plan(plan.id), workdir(rt, plan))
            if left is not None:
                return rt.apply(plan.id, left, Actor.SYSTEM)
        return rt.apply(plan.id, DevStalled(reason=reason[:500]), Actor.SYSTEM)
    cancelled = result.cancelled_by_user
    rt.service.record(
        plan.id, PlanEventType.AGENT_FINISHED, Actor.USER if cancelled else Actor.SYSTEM,
        {**step, "status": "cancelled" if cancelled else result.message.status, "message_id": result.message.id},
    )
    record_rejections(rt, result.parse, "developer", plan.id)
    tick(result.parse)  # the whole reply: markers the stream did not report (e.g. from a final message)
    # before tunaflow commits: HEAD back on the plan's branch, the user's refs and the hooks as they were
    integrity = await git_guard.after_turn(rt, plan, guard, actor=git_guard.DEVELOPER)
    plan = rt.get_plan(plan.id)
    rt.plan_changed(plan)
    left = await hooks.left_over(plan, root) if hooks.left_over is not None else None
    if left is not None:  # e.g. conflicts left: committing would record them as resolved
        return rt.apply(plan.id, left, Actor.SYSTEM)
    if plan.worktree_path:
        try:
            await git_guard.commit(rt, plan, root, f"tunaflow: {plan.title} (developer)")
        except gitops.GitError as exc:  # e.g. a pre-commit hook: the work stays in the worktree, uncommitted
            rt.service.record(plan.id, PlanEventType.COMMIT_FAILED, Actor.SYSTEM, {"error": str(exc)[:2000]})
            rt.emit(NoticeRaised(f"Could not commit the Developer's work (it stays in the worktree): {exc}",
                                 "warning"))
    if integrity.needs_decision:
        return rt.apply(plan.id, DevStalled(reason=f"git: {integrity.reason}"[:1000]), Actor.SYSTEM)
    if cancelled:  # the user stopped it: not an error; they decide how it goes on
        return rt.apply(plan.id, DevStalled(reason=USER_CANCELLED), Actor.SYSTEM)
    if not result.ok:
        reason = f"the Developer's turn ended with an error: {result.message.error_message or result.message.status}"
        return rt.apply(plan.id, DevStalled(reason=reason[:500]), Actor.SYSTEM)
    if any(isinstance(m, ImplCompleteMarker) and m.accepted for m in result.parse.markers):
        return rt.apply(plan.id, ImplementationReported(), Actor.AGENT)
    return rt.apply(plan.id, DevStalled(reason="the Developer stopped without reporting impl-complete"), Actor.SYSTEM)


async def start_dev(rt: StepContext, plan: PlanRecord) -> PlanRecord:
    """On approval: prepare the branch and worktree, then send the implementation prompt."""
    return await run_developer(rt, plan, implementation_prompt_for, fresh=True)


def _mergeable(rt: StepContext, plan_id: int) -> PlanRecord:
    """The plan, when it can be merged now; ValueError saying why not otherwise (nothing is touched)."""
    plan = rt.get_plan(plan_id)
    if plan.phase != Phase.DONE:
        raise ValueError(f"plan {plan_id} is in {plan.phase}: only a done plan can be merged")
    if plan.pending_decision:
        raise ValueError(f"plan {plan_id} no longer merges cleanly: answer its merge conflict first "
                         "(resolve it with the Developer, or leave it)")
    if not plan.git_branch or not plan.base_branch:
        raise ValueError(f"plan {plan_id} has no git branch to merge (the project is not a git repository)")
    if not gitops.branch_exists(rt.project_dir, plan.base_branch):
        raise ValueError(
            f"plan {plan_id} started from a detached HEAD ({plan.base_branch[:12]}); "
            f"merge {plan.git_branch} yourself into the branch you want"
        )
    current = gitops.current_branch(rt.project_dir)
    if current != plan.base_branch:
        raise ValueError(
            f"your project is on {current or 'a detached HEAD'}, not {plan.base_branch}: switch to "
            f"{plan.base_branch} to merge {plan.git_branch} (tunaflow does not switch branches for you)"
        )
    return plan


def merge_plan(rt: StepContext, plan_id: int, on_queued: merge_queue.QueuedBehind | None = None) -> gitops.MergeResult:
    """Merge ``tunaflow/{slug}`` into the base it came from, after the merges asked before it.

    Merges go through the merge queue (:mod:`~tunaflow_tui.runtime.merge_queue`), so two asked at
    once — in this process or another — land one after the other; ``on_queued`` hears which plan this
    one waits behind. A conflict (the base moved: another plan landed first) touches nothing and stops
    the plan at a merge-conflict decision naming the files.
    """
    _mergeable(rt, plan_id)  # refused at once, not after waiting in the queue
    with merge_queue.turn_in_queue(rt, plan_id, on_queued) as closing:
        plan = _mergeable(rt, plan_id)  # again: the plan or the project may have moved while it waited
        result = git_guard.merge_plan_branch(rt, plan)
        closing["outcome"] = "conflict" if result.kind == "conflict" else "merged"
        if result.kind == "conflict":
            rt.apply(plan.id, MergeConflicted(base=plan.base_branch or "", files=result.conflicted_files),
                     Actor.USER)
        else:
            rt.service.record(plan.id, PlanEventType.MERGED, Actor.USER,
                              {"kind": str(result.kind), "sha": result.sha, "conflicted_files": []})
    if result.kind != "conflict" and plan.worktree_path:
        try:
            remove_plan_worktree(rt, plan_id)
        except gitops.GitError as exc:  # the merge itself succeeded; say so, and why the worktree stays
            rt.emit(NoticeRaised(f"Merged, but the worktree could not be removed: {exc}", "warning"))
    rt.plan_changed(rt.get_plan(plan_id))
    return result


def remove_plan_worktree(rt: StepContext, plan_id: int) -> None:
    """Remove the plan's worktree (the git branch keeps the work)."""
    plan = rt.get_plan(plan_id)
    if not plan.worktree_path:
        return
    path = Path(plan.worktree_path)
    if path.exists():
        gitops.remove_worktree(rt.project_dir, path, force=False)
    rt.store.update_plan(plan.id, worktree_path=None)
    rt.service.record(plan.id, PlanEventType.WORKTREE_REMOVED, Actor.USER, {"path": str(path)})
    rt.plan_changed(rt.get_plan(plan.id))  # its card stops offering the removal, whoever asked for it
