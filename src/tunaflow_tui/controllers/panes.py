"""PaneController: the sidebar, the branch pane and the workflow view, kept current as plans move.

Reading plans, their events, documents and usage takes a moment on a project with history: the
sidebar and the workflow view are built in a thread and only drawn on the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from tunaflow_tui.controllers import branch_views, plan_views
from tunaflow_tui.controllers.sources import recipient_of
from tunaflow_tui.core.workflow.phases import Phase
from tunaflow_tui.screens.workflow import WorkflowScreen
from tunaflow_tui.widgets.branch_thread import BranchThread
from tunaflow_tui.widgets.chat_view import ChatView
from tunaflow_tui.widgets.sidebar import Sidebar

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.sources import MessageSources
    from tunaflow_tui.controllers.workers import Workers
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.viewmodels.plan_rows import BranchView, PlanSummaryView, SidebarSections

BRANCH_WINDOW = 30
"""Messages a branch shows when it opens in the pane."""


class RoundtableThreads(Protocol):
    """Makes the pane's thread of a roundtable (the roundtable controller does)."""

    def thread(self, branch_id: int, chat: ChatView, recipient: str, *, read_only: str, restorable: bool,
               cursor_blink: bool) -> BranchThread | None:
        """The thread of roundtable ``branch_id``; None if it is none."""
        ...


class PaneController:
    """Owns what the sidebar, the branch pane and the workflow view show.

    Args:
        app: The app.
        runtime: The project's runtime.
        sources: The conversations' message sources (the branch pane shows one).
        workers: Where background work runs.
        roundtables: What makes a roundtable's thread (its board, the seats' answers, the moderator's
            composer) when the pane opens one; asked for then, not before.
    """

    def __init__(self, app: AppPort, runtime: WorkflowRuntime, sources: MessageSources,
                 workers: Workers, roundtables: Callable[[], RoundtableThreads]) -> None:
        self._app = app
        self._roundtables = roundtables
        self._runtime = runtime
        self._store = runtime.store
        self._sources = sources
        self._workers = workers
        self.branch_conversation: str | None = None
        """The conversation the branch pane shows (``branch:{id}``), if any."""
        self._branch_chat: ChatView | None = None
        self.live: dict[int, int] = {}
        """Branch id → how many agents are writing in it now (the tree's and the header's live mark)."""
        self.on_branch_shown: Callable[[str], Awaitable[None]] | None = None
        """Called with the branch's conversation each time the pane shows a branch anew."""
        self.native_live: set[int] = set()
        """Branches whose native CLI runs in a terminal pane now (the tree's live mark too)."""

    # ------------------------------------------------------------------ sidebar
    async def mount_sidebar(self) -> None:
        """Put the sidebar in its slot, filled from the store."""
        sections = await asyncio.to_thread(self._sidebar_sections)
        await self._app.query_one("#sidebar").mount(Sidebar(sections, id="project-sidebar"))

    async def refresh_sidebar(self) -> None:
        """Show plans and branches as they are now."""
        sidebars = list(self._app.query(Sidebar))
        if not sidebars:
            return
        sections = await asyncio.to_thread(self._sidebar_sections)
        for sidebar in sidebars:
            sidebar.update(sections)

    def _sidebar_sections(self) -> SidebarSections:
        """The sidebar as the store has it, with the live marks of what this process runs (read in a thread)."""
        return plan_views.sidebar_sections(self._store, tuple({*self.live, *self.native_live}),
                                           self._runtime.busy_plan_ids())

    def sidebar_selected(self, event: Sidebar.Selected) -> None:
        """Open what was chosen in the sidebar."""
        if event.kind == "conversation":
            self._app.show_branch_pane(False)
            self._app.composer.focus_input()
        elif event.kind == "branch" and isinstance(event.id, int):
            self._workers.run_ui(self.open_branch(event.id, focus=True), "open the branch")
        elif event.kind == "plan" and isinstance(event.id, int):
            self._workers.run_ui(self.open_workflow(focus_plan=event.id), "open the workflow view")

    # ------------------------------------------------------------------ branch pane
    def chat_for(self, conversation_id: str) -> ChatView | None:
        """The pane's chat when it shows ``conversation_id``."""
        chat = self._branch_chat
        if self.branch_conversation == conversation_id and chat is not None and chat.is_attached:
            return chat
        return None

    def branch_in_focus(self) -> str | None:
        """The branch conversation when the pane is open and has the focus."""
        workspace = self._app.workspace
        if self.branch_conversation and workspace.mode != "hidden" and workspace.pane.has_focus_within:
            return self.branch_conversation
        return None

    def _branch_view(self, branch_id: int) -> BranchView | None:
        return branch_views.branch_view(self._store, branch_id, live=branch_id in self.live,
                                        default_engine=self._runtime.settings.roles.architect)

    async def open_branch(self, branch_id: int, *, reveal: bool = True, focus: bool = False) -> None:
        """Show a branch in the branch pane: its chat and, while it is active, its own composer.

        ``reveal`` opens a hidden pane as a drawer; ``focus`` puts the cursor in the branch's composer
        (in its chat when it is read-only).
        """
        view = self._branch_view(branch_id)
        if view is None:
            self._app.notify("That branch no longer exists.", severity="warning")
            return
        cid = f"branch:{branch_id}"
        chat = ChatView(self._sources.of(cid), window=BRANCH_WINDOW)
        thread: BranchThread | None = None
        if view.mode == "roundtable" and view.kind == "general":  # its board, the seats' answers, the moderator
            thread = self._roundtables().thread(branch_id, chat, self._recipient(cid),
                                                read_only=self._read_only_note(view), restorable=view.read_only,
                                                cursor_blink=self._app.composer_cursor_blink)
        if thread is None:
            thread = BranchThread(cid, chat, self._recipient(cid), read_only=self._read_only_note(view),
                                  restorable=view.read_only, cursor_blink=self._app.composer_cursor_blink)
        self.branch_conversation = cid
        self._branch_chat = chat
        await self._app.workspace.pane.show(view, thread)
        if self.on_branch_shown is not None:  # what waits in the branch (an agent's question) comes with it
            await self.on_branch_shown(cid)
        workspace = self._app.workspace
        if reveal and workspace.mode == "hidden":
            workspace.mode = "drawer"
        if reveal and workspace.mode == "pinned" and workspace.narrow:
            workspace.showing_pane = True
        if focus:
            composer = thread.composer
            if composer is not None:
                composer.focus_input()
            else:
                chat.focus()

    def _recipient(self, conversation_id: str) -> str:
        return recipient_of(self._runtime, conversation_id)

    def _read_only_note(self, view: BranchView) -> str:
        """Why the branch takes no message here (empty when it does)."""
        from tunaflow_tui.keyhints import key_for
        from tunaflow_tui.widgets.message_block import MessageBlock

        branch_key = key_for(self._app, MessageBlock, "message.branch", "b", words=True)
        if view.read_only:
            restore = key_for(self._app, BranchThread, "branch.restore", "u", words=True)
            return f"This branch is {view.status} and read-only: {restore} restores it to continue it."
        if view.mode == "roundtable" and view.kind == "general":
            return ""  # the moderator writes to every seat
        if view.kind != "general" or view.mode != "chat":
            return (f"The workflow drives this branch. Select a message and press {branch_key} to fork it "
                    "and talk about it.")
        return ""

    async def branch_changed(self, branch_id: int) -> None:
        """A branch's label, engine or status changed: the pane follows when it shows that branch.

        The header and the composer's recipient change in place (a draft in the composer stays); a
        branch that became read-only, or writable again, is shown anew.
        """
        cid = f"branch:{branch_id}"
        if self.branch_conversation != cid:
            return
        view = self._branch_view(branch_id)
        if view is None:
            await self.close_branch()
            return
        found = self._app.workspace.pane.query(BranchThread)
        thread = found.first() if found else None
        if thread is None or thread.read_only != self._read_only_note(view):
            await self.open_branch(branch_id, reveal=False, focus=self.branch_in_focus() is not None)
            return
        self._app.workspace.pane.update_view(view)
        if thread.composer is not None:
            thread.composer.recipient = self._recipient(cid)

    async def close_branch(self) -> None:
        """Show no branch (the one shown was deleted); a pane with the focus hands it to the chat."""
        self.branch_conversation = None
        self._branch_chat = None
        workspace = self._app.workspace
        if workspace.pane.has_focus_within:
            self._app.action_focus_chat()
        await workspace.pane.clear()

    async def live_changed(self, conversation_id: str, writing: bool) -> None:
        """An agent started (``writing``) or stopped writing in a branch: the live marks follow."""
        branch_id = int(conversation_id.removeprefix("branch:"))
        before = self.live.get(branch_id, 0)
        after = max(0, before + (1 if writing else -1))
        if after:
            self.live[branch_id] = after
        else:
            self.live.pop(branch_id, None)
        if bool(before) != bool(after):  # the mark came or went
            await self.refresh_sidebar()
            self.refresh_branch_header()
            await self.refresh_workflow()

    async def branch_started(self, conversation_id: str) -> None:
        """An agent started in a branch: show it in the pane unless the user looks at another one."""
        if conversation_id == self.branch_conversation:
            return
        workspace = self._app.workspace
        if self.branch_conversation is not None and workspace.mode != "hidden":
            return
        await self.open_branch(int(conversation_id.removeprefix("branch:")), reveal=False)

    def live_hint(self, conversation_id: str) -> str:
        """How to watch an agent working in a branch while the pane is hidden ("f6 shows it live"), else "".

        It stands on the agent's status line, so it goes when the agent stops (a toast would outlive it).
        """
        if not conversation_id.startswith("branch:") or self._app.workspace.mode != "hidden":
            return ""
        from tunaflow_tui.keyhints import key_for
        from tunaflow_tui.widgets.workspace import Workspace

        return f"{key_for(self._app, Workspace, 'pane.toggle', 'f6')} shows it live"

    def refresh_branch_header(self) -> None:
        """The pane's header as the branch is now (its status may have changed)."""
        if self.branch_conversation is None:
            return
        view = self._branch_view(int(self.branch_conversation.removeprefix("branch:")))
        if view is not None:
            self._app.workspace.pane.update_view(view)

    def toggle_pane(self) -> None:
        """Show or hide the branch pane."""
        self._app.workspace.action_toggle_pane()

    def pin_pane(self) -> None:
        """Pin the branch pane 50:50, or unpin it."""
        self._app.workspace.action_pin_pane()

    # ------------------------------------------------------------------ workflow view
    def _plan_summaries(self) -> tuple[PlanSummaryView, ...]:
        return plan_views.board_summaries(self._store, self._runtime.service, self._runtime.project_dir,
                                          self._runtime.busy_plan_ids())

    async def open_workflow(self, *, focus_plan: int | None = None, documents: bool = False) -> None:
        """Show the workflow view (or go back to it when it is already open under other screens)."""
        app = self._app
        if any(isinstance(screen, WorkflowScreen) for screen in app.screen_stack):
            while not isinstance(app.screen, WorkflowScreen):
                app.pop_screen()
            if documents and isinstance(app.screen, WorkflowScreen):
                app.screen.focus_documents()
            return
        summaries = await asyncio.to_thread(self._plan_summaries)
        if focus_plan is None and documents:
            active = [s for s in summaries if s.phase != Phase.ABANDONED]
            focus_plan = active[-1].plan_id if active else None
        if any(isinstance(screen, WorkflowScreen) for screen in app.screen_stack):
            return  # opened twice in quick succession: the first one is showing
        await app.push_screen(WorkflowScreen(summaries, focus_plan=focus_plan, focus_documents=documents))

    async def refresh_workflow(self) -> None:
        """Bring an open workflow view up to date."""
        screens = [s for s in self._app.screen_stack if isinstance(s, WorkflowScreen)]
        if screens:
            summaries = await asyncio.to_thread(self._plan_summaries)
            for screen in screens:
                screen.update_plans(summaries)

    async def plan_changed(self) -> None:
        """A plan moved: the sidebar, the workflow view and the pane's header follow."""
        await self.refresh_sidebar()
        await self.refresh_workflow()
        self.refresh_branch_header()
