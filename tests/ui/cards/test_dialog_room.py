"""Dialogs are as tall as what they say, and toasts never cover their buttons (80×24 and 120×40)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from app_harness import in_view
from textual.screen import Screen
from textual.widgets import Button, Static

from tunaflow_tui.app import DemoChatController, TunaflowApp
from tunaflow_tui.screens.decision_screen import dev_stalled_screen
from tunaflow_tui.screens.feedback import FeedbackScreen
from tunaflow_tui.screens.git_init import git_init_screen
from tunaflow_tui.screens.worktree_setup_screen import WorktreeSetupScreen
from tunaflow_tui.textual_compat import Toast

SIZES = [(80, 24), (120, 40)]
DIALOGS: dict[str, Callable[[], Screen[object]]] = {
    "git-init": lambda: git_init_screen("textstats"),
    "dev-stalled": lambda: dev_stalled_screen("Add a word-frequency report to textstats"),
    "worktree-setup": lambda: WorktreeSetupScreen("Add a report", "uv sync exited with 1", "uv sync",
                                                  "/tmp/worktrees/plan-1"),
    "feedback": lambda: FeedbackScreen(),
}


def _wrapped_height(widget: Static) -> int:
    """The rows the widget's text needs at its width."""
    width = widget.content_region.width
    return widget.get_content_height(widget.size, widget.size, width)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
@pytest.mark.parametrize("name", ["git-init", "dev-stalled", "worktree-setup"])
async def test_a_question_is_as_tall_as_its_text(size: tuple[int, int], name: str) -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    async with app.run_test(size=size) as pilot:
        app.push_screen(DIALOGS[name]())
        await pilot.pause()
        body = app.screen.query_one("#body", Static)
        assert body.region.height == _wrapped_height(body), "no blank rows between the question and its choices"
        dialog = app.screen.query_one("#dialog")
        assert dialog.region.height < size[1] - 4, "a short question leaves the screen around it free"


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
@pytest.mark.parametrize("name", list(DIALOGS))
async def test_toasts_never_cover_a_dialogs_buttons(size: tuple[int, int], name: str) -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    async with app.run_test(size=size, notifications=True) as pilot:
        app.push_screen(DIALOGS[name]())
        await pilot.pause()
        for number in range(5):
            app.notify(f"Toast {number}: something happened that takes a few words to explain, "
                       "long enough to wrap onto a second line", timeout=60)
            await pilot.pause()
        await pilot.pause()
        screen = app.screen
        buttons = [button.region for button in screen.query(Button)]
        assert buttons
        toasts = list(screen.query(Toast))
        shown = [toast for toast in toasts if in_view(app, toast)]
        assert toasts[-1] in shown, "the newest toast is in view"
        overlaps = [(toast.region, button) for toast in shown for button in buttons if toast.region.overlaps(button)]
        assert overlaps == []
