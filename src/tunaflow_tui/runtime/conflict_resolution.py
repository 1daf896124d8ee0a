"""A done plan whose merge conflicted: its Developer resolves it, or the user leaves it unmerged.

Resolving sends the plan back to rework: tunaflow starts merging the base into the plan's branch in
the plan's worktree (after its own commit of the plan documents, so that commit cannot take the
conflicted files), the Developer resolves the conflicts under the usual guards (the ref guard keeps
the base and every other ref where they were), and tunaflow commits the merge only when nothing is
left in conflict. Then the tests and the review run again on the new diff against the new base,
and the user decides as usual. A resolve that leaves conflicts — markers, unmerged paths, the merge
undone, a failed turn — stops at a decision naming the files; nothing is committed.

Leaving it aborts a merge in progress in the worktree: the branch is back as it was reviewed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from tunaflow_tui.core import gitops
from tunaflow_tui.core.gitops import integration
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.workflow import Command, ConflictUnresolved, LeaveConflict, ResolveConflict
from tunaflow_tui.core.workflow.phases import Actor, Phase, PlanEventType
from tunaflow_tui.runtime import development, git_guard, role_prompts

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import StepContext

# the transitions that send a plan (back) to the Developer: the latest says what its rework is
_INTO_REWORK = frozenset({PlanEventType.REWORK_REQUESTED, PlanEventType.CONFLICT_RESOLUTION_REQUESTED,
                          PlanEventType.DEV_STARTED})


def _files(plan: PlanRecord) -> tuple[str, ...]:
    files = (plan.pending_detail or {}).get("files")
    return tuple(str(f) for f in files) if isinstance(files, list | tuple) else ()


async def resolve(rt: StepContext, plan: PlanRecord, feedback: str = "") -> PlanRecord:
    """The Developer merges the base into the plan's branch and resolves the conflicts (one turn).

    Returns the plan after the turn: in review when the conflicts are resolved and the Developer
    reported the work complete, at a ``conflict_unresolved`` decision when any is left.
    """
    if not plan.worktree_path or not plan.base_branch:
        raise ValueError(f"plan {plan.id} has no worktree to resolve its conflicts in")
    known = _files(plan)
    plan = rt.apply(plan.id, ResolveConflict(feedback=feedback), Actor.USER)
    return await _resolve_turn(rt, plan, known, feedback, fresh=True)


def resolving(rt: StepContext, plan: PlanRecord) -> bool:
    """Whether the plan's rework is the resolve of a merge conflict (what an interrupted step re-runs)."""
    if plan.phase != Phase.REWORK:
        return False
    cause = [e for e in rt.store.list_plan_events(plan.id) if e.type in _INTO_REWORK]
    return bool(cause) and cause[-1].type == PlanEventType.CONFLICT_RESOLUTION_REQUESTED


async def resume(rt: StepContext, plan: PlanRecord, *, fresh: bool) -> PlanRecord:
    """Run an interrupted resolve turn again (``fresh``: a new session), the merge in progress kept."""
    asked = [e for e in rt.store.list_plan_events(plan.id) if e.type == PlanEventType.CONFLICT_RESOLUTION_REQUESTED]
    detail = asked[-1].detail if asked else {}
    files = detail.get("files")
    known = tuple(str(f) for f in files) if isinstance(files, list | tuple) else ()
    return await _resolve_turn(rt, plan, known, str(detail.get("feedback") or ""), fresh=fresh)


async def _resolve_turn(rt: StepContext, plan: PlanRecord, known: tuple[str, ...], feedback: str, *,
                        fresh: bool) -> PlanRecord:
    base = plan.base_branch or ""
    started: list[integration.BaseMerge] = []

    async def start(current: PlanRecord, root: Path) -> None:
        with gitops.trusted_hooks(root, git_guard.hook_baseline(rt, current)) as hooks:
            started.append(await asyncio.to_thread(integration.start_base_merge, root, base,
                                                   git_config=hooks.config_args))

    def prompt(current: PlanRecord, _root: Path) -> str:
        merge = started[-1] if started else None
        files = (merge.conflicted if merge is not None and merge.conflicted else known)
        return role_prompts.resolve_conflict_prompt(current, base, files, feedback)

    async def left_over(current: PlanRecord, root: Path) -> Command | None:
        if not started:
            return ConflictUnresolved(files=known, reason="the merge of the base did not start")
        try:
            left = await asyncio.to_thread(integration.left_unresolved, root, started[-1], base)
        except gitops.GitError as exc:  # what git cannot tell is not taken for resolved
            return ConflictUnresolved(files=started[-1].conflicted or known, reason=f"git: {exc}"[:300])
        if left is None:
            return None
        return ConflictUnresolved(files=left.files or known, reason=left.reason)

    return await development.run_developer(rt, plan, prompt, fresh=fresh,
                                           hooks=development.TurnHooks(before=start, left_over=left_over))


async def leave(rt: StepContext, plan: PlanRecord) -> PlanRecord:
    """The plan stays done and unmerged: a merge the resolve left in its worktree is aborted."""
    if plan.worktree_path and Path(plan.worktree_path).is_dir():
        await asyncio.to_thread(integration.abort_base_merge, Path(plan.worktree_path))
    plan = rt.apply(plan.id, LeaveConflict(), Actor.USER)
    rt.plan_changed(plan)
    return plan
