"""Snapshots of the permission card in its dock at 80×24: a question waiting (a change, a command), then
allowed, denied, timed out, and withdrawn when the turn was cancelled."""

from __future__ import annotations

from dataclasses import replace

import pytest
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tunaflow_tui.agents.permissions import PermissionRequest
from tunaflow_tui.viewmodels.permission_views import card_view
from tunaflow_tui.widgets.permission.permission_card import PermissionCard
from tunaflow_tui.widgets.permission.permission_dock import PermissionDock

EDIT = card_view(3, "main", PermissionRequest(
    engine="claude-acp", role="developer", session_id="s", tool_call_id="t", title="Write src/limits.py",
    kind="edit", paths=("/work/tree/src/limits.py",),
    diff="--- src/limits.py\n+++ src/limits.py\n@@ -1,2 +1,3 @@\n LIMIT = 10\n-WINDOW = 60\n+WINDOW = 30\n+BURST = 5\n"))
COMMAND = card_view(4, "main", PermissionRequest(
    engine="codex-acp", role="developer", session_id="s", tool_call_id="t", title="Run the tests", kind="execute",
    command="pytest -q tests/test_limits.py"))


class DockApp(App[None]):
    """A chat column: the conversation above, the dock with one card, the composer's place below."""

    CSS = "#chat { height: 1fr; } #composer { height: 3; border: round $panel; }"
    AUTO_FOCUS = None

    def __init__(self, view: object) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("…the conversation…", id="chat")
            yield PermissionDock("main", id="dock")
            yield Static("Write to Architect (claude-acp)", id="composer")

    async def on_mount(self) -> None:
        card = await self.query_one(PermissionDock).show(self.view)  # type: ignore[arg-type]
        if card.view.is_open:
            card.focus()


@pytest.mark.parametrize("view", [
    pytest.param(EDIT, id="pending-edit-with-diff"),
    pytest.param(COMMAND, id="pending-command"),
    pytest.param(replace(EDIT, state="allow_once"), id="allowed"),
    pytest.param(replace(EDIT, state="deny"), id="denied"),
    pytest.param(replace(COMMAND, state="timeout"), id="timed-out"),
    pytest.param(replace(COMMAND, state="withdrawn"), id="withdrawn"),
])
def test_permission_card(snap_compare, view) -> None:
    async def steady(pilot) -> None:
        await pilot.pause()
        card = pilot.app.query_one(PermissionCard)
        assert card.has_focus is card.view.is_open

    assert snap_compare(DockApp(view), terminal_size=(80, 24), run_before=steady)
