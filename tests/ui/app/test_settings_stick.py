"""Settings that stick: the chosen theme comes back next start; screenshots say where or why not;
under 16 colours what waits for the user is not shown in the error colour."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from app_harness import demo_settings, notifications, screen_strips
from rich.color import ColorSystem
from textual import constants
from textual.widgets import OptionList

from tunaflow_tui.app import DemoChatController, TunaflowApp
from tunaflow_tui.controllers.opener import ProjectOpener
from tunaflow_tui.screens.decision_screen import DecisionScreen
from tunaflow_tui.screens.doom_loop import DoomLoopScreen
from tunaflow_tui.screens.git_init import git_init_screen
from tunaflow_tui.screens.pickers import PickerScreen
from tunaflow_tui.screens.worktree_setup_screen import WorktreeSetupScreen
from tunaflow_tui.subcommands.open_command import open_project_app
from tunaflow_tui.viewmodels.plan_rows import FailureView

SIZES = [(80, 24), (120, 40)]


def said(app: TunaflowApp) -> list[str]:
    return [notification.message for notification in notifications(app)]


async def _pick(pilot, app: TunaflowApp, name: str) -> None:
    assert isinstance(app.screen, PickerScreen)
    options = app.screen.query_one(OptionList)
    options.highlighted = next(index for index in range(options.option_count)
                               if options.get_option_at_index(index).id == name)
    await pilot.press("enter")
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
async def test_the_chosen_theme_is_saved_and_the_next_start_uses_it(open_app, demo_project: Path,
                                                                    size: tuple[int, int]) -> None:
    app, _controller, _runtime = open_app()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert app.theme != "tunaflow-light"
        app.action_change_theme()  # what the palette's "Theme" and "Change theme" commands run
        await pilot.pause()
        await _pick(pilot, app, "tunaflow-light")
        assert app.theme == "tunaflow-light"
        config = Path(app.session.runtime.project_dir).parent / "xdg-config" / "tunaflow" / "config.toml"
        assert any(f"saved in {config}" in message for message in said(app)), said(app)
    assert 'theme = "tunaflow-light"' in config.read_text(encoding="utf-8")

    again = open_project_app(demo_project, lambda: demo_settings(demo_project), cursor_blink=False)
    assert isinstance(again.controller, ProjectOpener)
    try:
        async with again.run_test(size=size) as pilot:
            await pilot.pause()
            assert again.theme == "tunaflow-light", "the first frame already has the saved theme"
            await again.controller.wait_opened()
            await pilot.pause()
            assert again.theme == "tunaflow-light"
    finally:
        again.controller.close()


async def test_a_theme_that_cannot_be_saved_says_why(open_app, demo_project: Path) -> None:
    app, _controller, _runtime = open_app()
    config = demo_project.parent / "xdg-config" / "tunaflow" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[ui\nbroken", encoding="utf-8")
    async with app.run_test(size=(80, 24)) as pilot:
        app.action_change_theme()
        await pilot.pause()
        await _pick(pilot, app, "tunaflow-light")
        assert app.theme == "tunaflow-light"
        [message] = [m for m in said(app) if "theme" in m]
        assert "could not be saved" in message and str(config) in message and "not valid TOML" in message
    assert config.read_text(encoding="utf-8") == "[ui\nbroken"


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
async def test_a_saved_screenshot_says_where_in_plain_words(tmp_path: Path, size: tuple[int, int]) -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    async with app.run_test(size=size) as pilot:
        app.deliver_screenshot("shot.svg", str(tmp_path))
        for _ in range(500):
            if said(app):
                break
            await pilot.pause(0.01)
        assert said(app) == [f"Saved the screenshot to {tmp_path / 'shot.svg'}."]
        assert all(notification.markup is False for notification in notifications(app))
        assert (tmp_path / "shot.svg").read_text(encoding="utf-8").startswith("<svg")


async def test_a_screenshot_that_cannot_be_saved_says_why(tmp_path: Path) -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    missing = tmp_path / "no-such-folder"
    async with app.run_test(size=(80, 24)) as pilot:
        app.deliver_screenshot("shot.svg", str(missing))
        for _ in range(500):
            if said(app):
                break
            await pilot.pause(0.01)
        assert said(app) == [f"Could not save the screenshot: No such file or directory: {missing / 'shot.svg'}"]
        assert [notification.severity for notification in notifications(app)] == ["error"]


def _border_colour(app: TunaflowApp) -> int | None:
    """The 16-colour palette entry the open dialog's frame is drawn in (its top-left corner: the title
    beside it has the text's colour)."""
    dialog = app.screen.query_one("#dialog")
    strip = screen_strips(app)[dialog.region.y]
    x = 0
    for segment in strip:
        if x + len(segment.text) > dialog.region.x:
            assert segment.style is not None and segment.style.color is not None
            return segment.style.color.downgrade(ColorSystem.STANDARD).number
        x += len(segment.text)
    raise AssertionError("no border drawn")


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
@pytest.mark.parametrize("theme", ["textual-dark", "textual-light", "gruvbox", "tunaflow-dark", "tunaflow-light"])
async def test_under_16_colours_a_question_is_not_drawn_in_the_error_colour(
        monkeypatch: pytest.MonkeyPatch, size: tuple[int, int], theme: str) -> None:
    monkeypatch.setattr(constants, "COLOR_SYSTEM", "standard")
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    from tunaflow_tui.themes import register_all

    register_all(app, extra_dirs=[])
    app.theme = theme
    assert app.console.color_system == "standard"
    async with app.run_test(size=size) as pilot:
        app.push_screen(git_init_screen("textstats"))  # a question: drawn in the attention colour
        await pilot.pause()
        assert isinstance(app.screen, DecisionScreen)
        attention = _border_colour(app)
        app.pop_screen()
        app.push_screen(WorktreeSetupScreen("Plan", "it failed", "uv sync", "/tmp/x"))  # drawn in the error colour
        await pilot.pause()
        error = _border_colour(app)
        assert attention != error, f"{theme}: both are palette colour {error}"
        app.pop_screen()
        app.push_screen(DoomLoopScreen((FailureView(1, "fail", ("off by one",)),), threshold=3))  # a failure too
        await pilot.pause()
        assert _border_colour(app) == error, f"{theme}: reviews that keep failing are framed as a failure"


def test_a_theme_is_adapted_to_16_colours_once_and_again_when_it_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(constants, "COLOR_SYSTEM", "standard")
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    from tunaflow_tui import themes

    calls: list[str] = []
    adapt = themes.for_color_system
    monkeypatch.setattr(themes, "for_color_system", lambda theme, system: calls.append(theme.name) or adapt(theme, system))
    first = app.get_theme("textual-dark")
    assert first is not None and app.get_theme("textual-dark") is first  # every widget drawn asks for it
    assert calls.count("textual-dark") <= 1
    calls.clear()
    original = app.available_themes["textual-dark"]
    app.register_theme(dataclasses.replace(original, primary="#ff0000"))  # the theme replaced: adapted anew
    again = app.get_theme("textual-dark")
    assert again is not None and again.primary == "#ff0000" and calls == ["textual-dark"]
