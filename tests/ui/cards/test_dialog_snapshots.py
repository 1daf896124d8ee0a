"""Snapshots of the dialogs not opened by the app's snapshot tests, at 80×24 and 120×40: one frame
style, wrapped text, labelled fields, each with its own footer."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Label

from tunaflow_tui.core.roundtable.seats import Seat
from tunaflow_tui.screens.branch_dialogs import ConfirmBranchScreen, RenameBranchScreen
from tunaflow_tui.screens.feedback import FeedbackScreen
from tunaflow_tui.screens.git_init import git_init_screen, initial_commit_screen
from tunaflow_tui.screens.help import BindingRow, BindingSection, HelpScreen
from tunaflow_tui.screens.roundtable_seat import AddSeatScreen
from tunaflow_tui.screens.roundtable_setup import RoundtableSetupScreen
from tunaflow_tui.screens.trust_screen import trust_screen
from tunaflow_tui.screens.worktree_setup_screen import WorktreeSetupScreen

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
SEATS = (Seat(name="claude", engine="claude", role="proposer"), Seat(name="codex", engine="codex", role="critic"))


class DialogApp(App[None]):
    """A dialog over a plain screen."""

    def __init__(self, dialog: object) -> None:
        super().__init__()
        self.dialog = dialog

    def compose(self) -> ComposeResult:
        yield Label("main screen")

    def on_mount(self) -> None:
        self.push_screen(self.dialog)  # type: ignore[arg-type]
        self.call_after_refresh(self._steady_cursor)

    def _steady_cursor(self) -> None:
        """The text cursor shown, not blinking: a snapshot must not catch it off."""
        for field in self.screen.query("Input, TextArea"):
            field.cursor_blink = False  # type: ignore[attr-defined]


SECTIONS = (
    BindingSection("App", tuple(BindingRow(keys, what, binding_id) for keys, what, binding_id in (
        ("f1 / ?", "Help", "app.help"), ("^q", "Quit", "app.quit"), ("^b", "Sidebar", "app.sidebar"),
        ("f2 / ^g", "Decision", "decision.jump"), ("f5 / ^f", "Search", "search.open")))),
    BindingSection("Branch pane", tuple(BindingRow(keys, what, binding_id) for keys, what, binding_id in (
        ("f6", "Branch pane", "pane.toggle"), ("a", "Adopt the branch into its parent", "branch.adopt"),
        ("r", "Rename the branch", "branch.rename")))),
)


def _roundtable_setup() -> RoundtableSetupScreen:
    return RoundtableSetupScreen(topic="", seats=SEATS, presets=[("Last line-up (2)", SEATS)],
                                 estimate=lambda setup: [(seat.name, 1234) for seat in setup.seats],
                                 engines=["claude", "codex", "gemini"])


DIALOGS = [
    pytest.param(lambda: HelpScreen(SECTIONS), id="help"),
    pytest.param(_roundtable_setup, id="roundtable-setup"),
    pytest.param(lambda: RenameBranchScreen("stop-words idea"), id="rename-branch"),
    pytest.param(lambda: ConfirmBranchScreen(
        "Delete branch", "Delete branch 3 “stop-words idea”? Its 4 messages are deleted with it; this cannot be "
        "undone.", "Delete"), id="delete-branch"),
    pytest.param(lambda: FeedbackScreen(), id="revision-feedback"),
    pytest.param(lambda: AddSeatScreen(seats=SEATS, engines=["claude", "codex", "gemini"]), id="add-seat"),
    pytest.param(lambda: WorktreeSetupScreen("Add a word frequency report", "npm ci exited with status 1",
                                             "npm ci", "/srv/textstats/.tunaflow/worktrees/plan-1"),
                 id="worktree-setup-failed"),
    pytest.param(lambda: git_init_screen("textstats"), id="not-a-git-repository"),
    pytest.param(lambda: initial_commit_screen("textstats"), id="no-commits-yet"),
    pytest.param(lambda: trust_screen("textstats", ["[workflow] test_command = \"pytest -q\"",
                                                    "[workflow] worktree_setup = \"npm ci\""]), id="trust-commands"),
]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dialog", DIALOGS)
def test_dialog(snap_compare, dialog, size: tuple[int, int]) -> None:
    assert snap_compare(DialogApp(dialog()), terminal_size=size)
