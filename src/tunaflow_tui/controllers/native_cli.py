"""NativeCliController: "Open native CLI" in a terminal pane, one live session per conversation.

The engine's own interactive CLI resumes the conversation's stored session in its folder and runs in
the branch pane (drawer or pinned 50:50), drawn by :class:`~tunaflow_tui.widgets.terminal_pane.TerminalPane`.
Leaving the pane (ctrl+] or Escape twice) leaves the CLI running; opening it again on the same
conversation shows the same session. When the CLI ends, the conversation gets a record with the
session id and how long it lasted, and the next tunaflow turn there resumes that session. Every running
CLI is listed in the sidebar's "Live sessions" (picking one shows its pane again) until it ends.

Where a pane cannot work (``[ui] native_cli = "suspend"``, or the app served in a browser) the app
suspends and hands the whole terminal over instead, as before.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tunaflow_tui.runtime.native_sessions import (
    NativeLaunch,
    NativeSessionUnavailable,
    announce_record,
    native_launch,
    write_record,
)
from tunaflow_tui.viewmodels.plan_rows import SidebarItem
from tunaflow_tui.widgets.branch_pane import BranchHeader
from tunaflow_tui.widgets.sidebar import Sidebar

if TYPE_CHECKING:
    from tunaflow_tui.agents.terminal.pty_session import PtySession
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.panes import PaneController
    from tunaflow_tui.controllers.workers import Workers
    from tunaflow_tui.runtime.runtime import WorkflowRuntime


@dataclass
class LiveNative:
    """A native CLI running for a conversation."""

    launch: NativeLaunch
    session: PtySession
    started: float


class NativeCliController:
    """Opens, shows again and records the end of native CLI sessions.

    Args:
        app: The app.
        runtime: The project's runtime.
        panes: The branch pane's owner (the terminal takes the pane's place).
        workers: Where short UI work runs.
    """

    def __init__(self, app: AppPort, runtime: WorkflowRuntime, panes: PaneController, workers: Workers) -> None:
        self._app = app
        self._runtime = runtime
        self._panes = panes
        self._workers = workers
        self.live: dict[str, LiveNative] = {}
        """Conversation id → its running native CLI."""

    def in_pane(self) -> bool:
        """Whether "Open native CLI" opens a pane here (else it hands the terminal over)."""
        return self._runtime.settings.ui.native_cli == "pane" and not self._app.is_web

    def running_in(self, conversation_id: str) -> bool:
        """Whether a native CLI runs for ``conversation_id`` now."""
        live = self.live.get(conversation_id)
        return live is not None and live.session.running

    def open(self, conversation_id: str) -> None:
        """Open (or show again) the conversation's native CLI in the pane."""
        self._workers.run_ui(self._open(conversation_id), "open the native CLI")

    async def _open(self, conversation_id: str) -> None:
        live = self.live.get(conversation_id)
        if live is None or not live.session.running:
            try:
                launch = await asyncio.to_thread(native_launch, self._runtime, conversation_id)
            except NativeSessionUnavailable as exc:
                self._app.notify(str(exc), severity="warning", timeout=8)
                return
            live = self._start(launch)
            if live is None:
                return
        await self._show(live)

    def _start(self, launch: NativeLaunch) -> LiveNative | None:
        from tunaflow_tui.agents.terminal.pty_session import PtySession, PtySpec

        workspace = self._app.workspace
        size = workspace.size
        spec = PtySpec(launch.argv, launch.cwd, launch.env, lines=max(5, size.height - 3), columns=max(20, size.width // 2 - 2),
                       scrollback=self._runtime.settings.ui.terminal_scrollback)
        session = PtySession(spec)
        live = LiveNative(launch, session, time.time())
        session.on_exit = lambda code: self._ended(live, code)
        try:
            session.start()
        except OSError as exc:
            self._app.notify(f"Could not start {launch.argv[0]}: {exc.strerror or exc}", severity="error")
            return None
        self.live[launch.conversation_id] = live
        self._mark_live(launch.conversation_id, True)
        return live

    def _mark_live(self, conversation_id: str, running: bool) -> None:
        """A native CLI started or ended: the sidebar's live sessions (and a branch's live mark) follow."""
        running_now = [(cid, live.launch.engine) for cid, live in self.live.items() if live.session.running]
        self._workers.run_ui(self._list_live(running_now), "list the live sessions")
        if not conversation_id.startswith("branch:"):
            return
        branch_id = int(conversation_id.removeprefix("branch:"))
        if running:
            self._panes.native_live.add(branch_id)
        else:
            self._panes.native_live.discard(branch_id)
        self._workers.run_ui(self._panes.refresh_sidebar(), "refresh the sidebar")

    async def _list_live(self, running: list[tuple[str, str]]) -> None:
        items = await asyncio.to_thread(self._live_items, running)
        if {cid for cid, _ in running} != {cid for cid, live in self.live.items() if live.session.running}:
            return  # one started or ended meanwhile: the list made for that change is the one to show
        for sidebar in self._app.query(Sidebar):
            sidebar.show_live_sessions(items)

    def _live_items(self, running: list[tuple[str, str]]) -> tuple[SidebarItem, ...]:
        """The sidebar's rows for the running CLIs: the main conversation first, then branches by label."""
        rows: list[SidebarItem] = []
        for conversation_id, engine in running:
            label = "Main"
            if conversation_id.startswith("branch:"):
                branch = self._runtime.store.get_branch(int(conversation_id.removeprefix("branch:")))
                label = branch.label if branch is not None and branch.label else conversation_id
            rows.append(SidebarItem("native", conversation_id, label, detail=engine, live=True))
        return tuple(sorted(rows, key=lambda row: (row.id != "main", row.label.casefold())))

    def _title(self, live: LiveNative) -> str:
        from tunaflow_tui.keyhints import key_for
        from tunaflow_tui.widgets.terminal_pane import TerminalPane

        where = "main" if live.launch.conversation_id == "main" else live.launch.conversation_id
        if live.session.ended:
            return f"{live.launch.engine} · {where} · ended, read-only"
        back = key_for(self._app, TerminalPane, "terminal.leave", "ctrl+]", words=True)
        return f"{live.launch.engine} · {where} · session {live.launch.session_id} · {back} back to tunaflow"

    async def _show(self, live: LiveNative) -> None:
        from tunaflow_tui.widgets.terminal_pane import TerminalPane

        pane = TerminalPane(live.session)
        self._panes.branch_conversation = None  # the pane shows a terminal now, not a branch's chat
        await self._app.workspace.pane.show_live(self._title(live), pane)
        workspace = self._app.workspace
        if workspace.mode == "hidden":
            workspace.mode = "drawer"
        if workspace.mode == "pinned" and workspace.narrow:
            workspace.showing_pane = True
        pane.focus()

    def _ended(self, live: LiveNative, exit_code: int | None) -> None:
        """The CLI ended: record it in its conversation, say so, and show the pane as read-only."""
        if self.live.get(live.launch.conversation_id) is live:
            del self.live[live.launch.conversation_id]
            self._mark_live(live.launch.conversation_id, False)
        seconds = time.time() - live.started
        self._workers.run_ui(self._record(live, seconds, exit_code), "record the native session")

    async def _record(self, live: LiveNative, seconds: float, exit_code: int | None) -> None:
        from tunaflow_tui.widgets.terminal_pane import TerminalPane

        record = await asyncio.to_thread(write_record, self._runtime.store, live.launch, seconds, exit_code)
        announce_record(self._runtime, record)
        body = self._app.workspace.pane.body
        if isinstance(body, TerminalPane) and body.session is live.session:
            self._app.workspace.pane.query_one(BranchHeader).show_title(self._title(live))
        self._app.notify(f"The native {live.launch.engine} session ended; the next turn here resumes it.")

    def end(self, conversation_id: str) -> None:
        """End the native CLI in the pane (else the conversation's), after the user confirms."""
        from tunaflow_tui.screens.branch_dialogs import ConfirmBranchScreen
        from tunaflow_tui.widgets.terminal_pane import TerminalPane

        body = self._app.workspace.pane.body
        live = next((candidate for candidate in self.live.values()
                     if isinstance(body, TerminalPane) and candidate.session is body.session), None)
        live = live or self.live.get(conversation_id)
        if live is None or not live.session.running:
            self._app.notify("No native CLI is running here.", severity="warning")
            return
        text = (f"End the native {live.launch.engine} session {live.launch.session_id}? Its process group is "
                "sent SIGHUP, then SIGTERM and SIGKILL; what it saved of the session stays, and the next turn "
                "in the conversation resumes it.")

        def chosen(confirmed: bool | None) -> None:
            if confirmed and live.session.running:
                self._workers.run_ui(live.session.close(), "end the native CLI")

        self._app.push_screen(ConfirmBranchScreen("End native CLI", text, "End it"), chosen)

    async def close_all(self) -> None:
        """End every live native CLI (the app is closing)."""
        sessions = [live.session for live in self.live.values()]
        self.live.clear()
        await asyncio.gather(*(session.close() for session in sessions))
