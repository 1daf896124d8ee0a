"""Which environment ran the tests, on the verdict card; the failed worktree setup question."""

from __future__ import annotations

from dataclasses import replace

import pytest
from app_harness import screen_text
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Label

from tunaflow_tui.screens.worktree_setup_screen import (
    OPEN_SHELL,
    RETRY_SETUP,
    SKIP_SETUP,
    WorktreeSetupScreen,
)
from tunaflow_tui.viewmodels.plan_rows import SeatView, VerdictView
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]

PASSED_IN_VENV = VerdictView(
    plan_id=3, round_no=1, verdict="pass",
    seats=(SeatView("Reviewer", "claude", "pass"), SeatView("Verifier", "codex", "pass")),
    test_summary="12 passed in 0.8s", test_status="passed",
    test_environment="the project's .venv (.venv/bin/python); worktree code first (src/), "
                     "ahead of the main tree's editable install",
)
COULD_NOT_START = replace(
    PASSED_IN_VENV, verdict="conditional",
    seats=(SeatView("Reviewer", "claude", "conditional", findings=("The tests did not run",)),
           SeatView("Verifier", "codex", "pass")),
    test_status="error", test_summary="pytest is not installed for /home/u/calc/.venv/bin/python",
)

_UNSET = object()


class CardApp(App[None]):
    def __init__(self, view: VerdictView) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield ReviewVerdictCard(self.view)

    def on_mount(self) -> None:
        self.query_one(ReviewVerdictCard).focus()


class SetupQuestionApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.result: object = _UNSET

    def compose(self) -> ComposeResult:
        yield Label("main screen")

    def on_mount(self) -> None:
        screen = WorktreeSetupScreen(
            "Add multiplication", "the worktree setup failed: exited with code 3: npm ERR! missing token",
            "npm ci", "/home/u/.local/share/tunaflow/worktrees/calc-1a2b3c4d/add-multiplication",
        )
        self.push_screen(screen, self._done)

    def _done(self, value: str | None) -> None:
        self.result = value


def _text(app: App[None]) -> str:
    return screen_text(app)


async def test_the_card_says_which_environment_ran_the_tests() -> None:
    app = CardApp(PASSED_IN_VENV)
    async with app.run_test(size=(120, 40)):
        text = _text(app)
        assert "Tests: PASSED — 12 passed in 0.8s" in text
        assert "Ran with: the project's .venv (.venv/bin/python)" in text


async def test_tests_that_could_not_start_read_as_an_error_not_a_failure() -> None:
    app = CardApp(COULD_NOT_START)
    async with app.run_test(size=(120, 40)):
        text = _text(app)
        assert "Tests: ERROR (could not start — not a test failure)" in text
        assert "FAILED" not in text


@pytest.mark.parametrize(("key", "value"), [("r", RETRY_SETUP), ("s", SKIP_SETUP), ("o", OPEN_SHELL),
                                            ("escape", None)])
async def test_setup_question_returns_each_choice(key: str, value: str | None) -> None:
    app = SetupQuestionApp()
    async with app.run_test(size=(100, 30)) as pilot:
        assert isinstance(app.screen, WorktreeSetupScreen)
        text = _text(app)
        assert "npm ERR! missing token" in text and "command: npm ci" in text and "add-multiplication" in text
        await pilot.press(key)
        await pilot.pause()
        assert app.result == value


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("view", [PASSED_IN_VENV, COULD_NOT_START], ids=["environment", "could-not-start"])
def test_snapshot_verdict_card_environment(snap_compare, view: VerdictView, size: tuple[int, int]) -> None:
    assert snap_compare(CardApp(view), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_setup_question(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(SetupQuestionApp(), terminal_size=size)
