"""Snapshots of the permission card at 80×24: a question with its change, and one the turn's end withdrew."""

from __future__ import annotations

from dataclasses import replace

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from tunaflow_tui.agents.permissions import PermissionRequest
from tunaflow_tui.viewmodels.permissions import card_view
from tunaflow_tui.widgets.permission_card import PermissionCard

EDIT = card_view(3, "main", PermissionRequest(
    engine="claude-acp", role="developer", session_id="s", tool_call_id="t", title="Write src/limits.py",
    kind="edit", paths=("/work/tree/src/limits.py",),
    diff="--- src/limits.py\n+++ src/limits.py\n@@ -1,2 +1,3 @@\n LIMIT = 10\n-WINDOW = 60\n+WINDOW = 30\n+BURST = 5\n"))
COMMAND = card_view(4, "main", PermissionRequest(
    engine="codex-acp", role="developer", session_id="s", tool_call_id="t", title="Run the tests", kind="execute",
    command="pytest -q tests/test_limits.py"))


class CardApp(App[None]):
    """One card in a scrolling column, focused."""

    def __init__(self, card: PermissionCard) -> None:
        super().__init__()
        self.card = card

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield self.card

    def on_mount(self) -> None:
        self.card.focus()


@pytest.mark.parametrize("view", [pytest.param(EDIT, id="edit-with-diff"), pytest.param(COMMAND, id="command"),
                                  pytest.param(replace(COMMAND, state="withdrawn"), id="withdrawn")])
def test_permission_card(snap_compare, view) -> None:
    assert snap_compare(CardApp(PermissionCard(view)), terminal_size=(80, 24))
