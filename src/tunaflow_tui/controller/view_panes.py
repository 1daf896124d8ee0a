"""The sidebar, the branch pane and the workflow view, as the runtime controller keeps them current."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import OptionList

from tunaflow_tui.controller import plan_views
from tunaflow_tui.screens.workflow import WorkflowScreen
from tunaflow_tui.widgets.chat_view import ChatView
from tunaflow_tui.widgets.sidebar import Sidebar

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from tunaflow_tui.app import TunaflowApp
    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.views.chat import MessageSource


class ViewPanes:
    """Mixed into the runtime controller: sidebar selection, the branch pane and the workflow view."""

    runtime: WorkflowRuntime
    store: Store
    _branch_cid: str | None
    _told_branch: set[str]

    if TYPE_CHECKING:
        @property
        def app(self) -> TunaflowApp: ...

        def run_agent(self, work: Coroutine[Any, Any, object], what: str) -> None: ...

        def message_source(self, conversation_id: str) -> MessageSource: ...

    def _refresh_sidebar(self) -> None:
        for sidebar in self.app.query(Sidebar):
            sidebar.update(plan_views.sidebar_sections(self.store))

    def sidebar_selected(self, event: Sidebar.Selected) -> None:
        if event.kind == "conversation":
            self.app.show_branch_pane(False)
            self.app.composer.focus_input()
        elif event.kind == "branch" and isinstance(event.id, int):
            self.run_agent(self.open_branch(event.id), "open the branch")
        elif event.kind == "plan" and isinstance(event.id, int):
            self.open_workflow(focus_plan=event.id)

    async def open_branch(self, branch_id: int, *, reveal: bool = True) -> None:
        """Show a branch's shadow conversation (read-only) in the branch pane."""
        view = plan_views.branch_view(self.store, branch_id)
        if view is None:
            self.app.notify("That branch no longer exists.", severity="warning")
            return
        cid = f"branch:{branch_id}"
        chat = ChatView(self.message_source(cid), window=30)
        self._branch_cid = cid
        await self.app.workspace.pane.show(view, chat)
        if reveal and self.app.workspace.mode == "hidden":
            self.app.workspace.mode = "drawer"

    async def _load_branch_if_free(self, cid: str) -> None:
        """Put a branch that starts streaming into the pane, unless the user is looking at another one."""
        workspace = self.app.workspace
        if self._branch_cid is not None and workspace.mode != "hidden":
            return
        await self.open_branch(int(cid.removeprefix("branch:")), reveal=False)
        if cid not in self._told_branch and workspace.mode == "hidden":
            self._told_branch.add(cid)
            self.app.notify("An agent is working in a branch: f6 shows it live.", timeout=6)

    def _refresh_branch_header(self) -> None:
        if self._branch_cid is None:
            return
        view = plan_views.branch_view(self.store, int(self._branch_cid.removeprefix("branch:")))
        if view is not None:
            self.app.workspace.pane.update_view(view)

    def _plan_summaries(self) -> tuple[Any, ...]:
        plans = self.store.list_plans()
        slugs = [plan.slug for plan in plans]
        return tuple(
            plan_views.plan_summary(self.store, plan, self.runtime.project_dir,
                                    self.runtime.service.failures_since_reset(plan.id), slugs)
            for plan in plans
        )

    def open_workflow(self, *, focus_plan: int | None = None, documents: bool = False) -> None:
        stack = self.app.screen_stack
        if any(isinstance(screen, WorkflowScreen) for screen in stack):
            # already open (perhaps under the document viewer): go back to it rather than stack another
            while not isinstance(self.app.screen, WorkflowScreen):
                self.app.pop_screen()
            if documents:
                self.app.screen.query_one("#documents", OptionList).focus()
            return
        if focus_plan is None and documents:
            active = [p for p in self.store.list_plans() if p.phase not in ("abandoned",)]
            focus_plan = active[-1].id if active else None
        self.app.push_screen(WorkflowScreen(self._plan_summaries(), focus_plan=focus_plan, focus_documents=documents))

    def _refresh_workflow(self) -> None:
        screens = [s for s in self.app.screen_stack if isinstance(s, WorkflowScreen)]
        if screens:
            summaries = self._plan_summaries()
            for screen in screens:
                screen.update_plans(summaries)
