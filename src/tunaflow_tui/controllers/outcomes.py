"""OutcomeController: after Done — merge the plan's branch, remove its worktree.

Both run git; both run in a thread, so the screen keeps answering while git works. A merge goes
through the merge queue: one asked while another lands (here or in another tunaflow) is said to be
queued behind it, and one that conflicts puts the plan's merge-conflict card in the dock.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import replace
from typing import TYPE_CHECKING

from tunaflow_tui.controllers.cards import done_view
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.core.workflow.phases import Phase
from tunaflow_tui.keyhints import key_for
from tunaflow_tui.screens.branch_dialogs import ConfirmBranchScreen
from tunaflow_tui.widgets.decision.conflict_card import ConflictCard
from tunaflow_tui.widgets.decision.decision_dock import is_done_card

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.workers import Workers
    from tunaflow_tui.core.storage.records import PlanRecord
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

MERGE = "merge"
REMOVE_WORKTREE = "remove_worktree"


class OutcomeController:
    """Merges finished plans and removes their worktrees, and keeps their done cards current.

    Args:
        app: The app.
        runtime: The project's runtime.
        workers: Where the git work runs.
    """

    def __init__(self, app: AppPort, runtime: WorkflowRuntime, workers: Workers) -> None:
        self._app = app
        self._runtime = runtime
        self._store = runtime.store
        self._workers = workers

    def requested(self, plan_id: int, action: str) -> None:
        """A done card asked to merge or to remove the worktree."""
        if action == MERGE:
            self.merge_plan(plan_id)
        elif action == REMOVE_WORKTREE:
            self.remove_worktree(plan_id)

    def _done_plan(self, plan_id: int | None, need: str) -> PlanRecord | None:
        if plan_id is not None:
            return self._store.get_plan(plan_id)
        done = [p for p in self._store.list_plans() if p.phase == Phase.DONE
                and (p.git_branch if need == "branch" else p.worktree_path)]
        if not done:
            self._app.notify("No finished plan has a branch to merge." if need == "branch"
                             else "No finished plan has a worktree left.", severity="warning")
            return None
        return done[-1]

    def merge_plan(self, plan_id: int | None = None) -> None:
        """Merge a done plan's branch into its base (fast-forward or merge commit; never force)."""
        plan = self._done_plan(plan_id, "branch")
        if plan is not None:
            self._workers.run_ui(self._merge(plan), "merge the plan")

    async def _merge(self, plan: PlanRecord) -> None:
        loop = asyncio.get_running_loop()

        def queued(behind: int) -> None:  # from the merge's thread: told on the app's loop
            loop.call_soon_threadsafe(functools.partial(
                self._app.notify, f"Plan {plan.id}'s merge is queued behind plan {behind}: it merges when that one "
                "has landed.", timeout=8))

        try:
            result = await asyncio.to_thread(self._runtime.merge, plan.id, queued)
        except Exception as exc:
            self._app.notify(f"Merge refused: {neutralize(str(exc))}", severity="error", timeout=12)
            return
        if str(result.kind) == "conflict":
            files = ", ".join(result.conflicted_files[:5]) + (" …" if len(result.conflicted_files) > 5 else "")
            resolve = key_for(self._app, ConflictCard, "conflict.resolve", "r", words=True)
            leave = key_for(self._app, ConflictCard, "conflict.leave", "l", words=True)
            self._app.notify(f"Not merged: {neutralize(result.message)}: {neutralize(files)}. Nothing was changed; "
                             f"on its card, {resolve} lets the Developer merge {plan.base_branch} into "
                             f"{plan.git_branch} and resolve them, {leave} leaves it unmerged.", severity="error",
                             timeout=20)
            return
        self._app.notify(f"Merged: {neutralize(result.message)}.", timeout=10)
        await self._refresh_card(plan.id, merged=str(result.kind))

    def remove_worktree(self, plan_id: int | None = None) -> None:
        """Remove a done plan's worktree (its git branch stays), once the user confirmed which one."""
        plan = self._done_plan(plan_id, "worktree")
        if plan is None:
            return
        if not plan.worktree_path:
            self._app.notify(f"Plan {plan.id} has no worktree left.", severity="warning")
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._workers.run_ui(self._remove(plan), "remove the worktree")
            else:
                self._app.notify(f"Kept the worktree of plan {plan.id}.")

        branch = f" {plan.git_branch} stays." if plan.git_branch else ""
        self._app.push_screen(ConfirmBranchScreen(
            f"Remove plan {plan.id}'s worktree?",
            f"Plan {plan.id} “{neutralize(plan.title)}”: the folder {neutralize(plan.worktree_path)} and "
            f"any files in it that were not committed are deleted.{branch}",
            "Remove it"), confirmed)

    async def _remove(self, plan: PlanRecord) -> None:
        try:
            await asyncio.to_thread(self._runtime.remove_worktree, plan.id)
        except Exception as exc:
            self._app.notify(f"Could not remove the worktree: {neutralize(str(exc))}", severity="error")
            return
        self._app.notify(f"Removed the worktree of “{neutralize(plan.title)}”; {plan.git_branch} stays.")
        await self._refresh_card(plan.id)

    async def _refresh_card(self, plan_id: int, *, merged: str | None = None) -> None:
        card = self._app.decision_dock.card_for(plan_id)
        fresh = self._store.get_plan(plan_id)
        if not is_done_card(card) or fresh is None:
            return
        view = done_view(fresh, self._store.list_plan_events(plan_id))
        current = card.view
        await self._app.decision_dock.show_done(replace(view, merged=merged or current.merged))
