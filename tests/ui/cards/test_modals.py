"""Doom-loop and generic decision modals: every choice comes back, escape means decide later."""

from __future__ import annotations

import pytest
from app_harness import screen_text
from textual.app import App, ComposeResult
from textual.widgets import Button, Label

from tunaflow_tui.screens.decision_screen import DecisionScreen, dev_stalled_screen
from tunaflow_tui.screens.doom_loop import DoomLoopScreen
from tunaflow_tui.viewmodels.plan_rows import FailureView

FAILURES = (
    FailureView(1, "fail", ("Retry-After header missing",)),
    FailureView(2, "fail", ("Retry-After header missing", "Limit not configurable")),
    FailureView(3, "fail", ("Tests flaky under load",)),
)

_UNSET = object()


class ModalApp(App[None]):
    def __init__(self, doom: bool = True) -> None:
        super().__init__()
        self.doom = doom
        self.result: object = _UNSET

    def compose(self) -> ComposeResult:
        yield Label("main screen")

    def on_mount(self) -> None:
        screen = DoomLoopScreen(FAILURES, threshold=3) if self.doom else dev_stalled_screen("Add rate limiting")
        self.push_screen(screen, self._done)

    def _done(self, value: str | None) -> None:
        self.result = value


@pytest.mark.parametrize(("key", "value"), [("r", "redesign"), ("c", "continue"), ("escape", None)])
async def test_doom_loop_returns_each_choice(key: str, value: str | None) -> None:
    app = ModalApp(doom=True)
    async with app.run_test(size=(100, 30)) as pilot:
        assert isinstance(app.screen, DoomLoopScreen)
        await pilot.press(key)
        await pilot.pause()
        assert app.result == value
        assert not isinstance(app.screen, DoomLoopScreen)


async def test_doom_loop_buttons_choose_too() -> None:
    app = ModalApp(doom=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.click("#choice-1")
        await pilot.pause()
        assert app.result == "continue"


async def test_doom_loop_shows_failure_history() -> None:
    app = ModalApp(doom=True)
    async with app.run_test(size=(100, 30)):
        text = screen_text(app)
        assert "Round 2 · FAIL" in text and "Limit not configurable" in text
        assert "Architect redesigns (r)" in text and "Developer continues (c)" in text


@pytest.mark.parametrize(("key", "value"), [("c", "continue"), ("m", "complete"), ("x", "abandon"), ("escape", None)])
async def test_dev_stalled_decision(key: str, value: str | None) -> None:
    app = ModalApp(doom=False)
    async with app.run_test(size=(100, 30)) as pilot:
        assert isinstance(app.screen, DecisionScreen)
        await pilot.press(key)
        await pilot.pause()
        assert app.result == value


async def test_enter_on_focused_button_picks_the_first_choice() -> None:
    app = ModalApp(doom=False)
    async with app.run_test(size=(100, 30)) as pilot:
        assert isinstance(app.focused, Button)
        await pilot.press("enter")
        await pilot.pause()
        assert app.result == "continue"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize("doom", [True, False], ids=["doom-loop", "dev-stalled"])
def test_snapshot_modals(snap_compare, doom: bool, size: tuple[int, int]) -> None:
    assert snap_compare(ModalApp(doom=doom), terminal_size=size)
