"""Helpers for driving the integrated app: demo settings, screen text, sending a message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App
from textual.notifications import Notification
from textual.strip import Strip
from textual.widget import Widget

from tunaflow_tui import textual_compat
from tunaflow_tui.core.settings import Settings, load_settings

FAILING_REVIEWS = 5
"""How many review rounds the demo Reviewer fails in the ``at_second_failure`` projects (more than the
doom-loop threshold, so the app's next round fails too): open them with ``fail_reviews=FAILING_REVIEWS``."""


def demo_settings(project: Path, *, fail_reviews: int = 0, delay: float = 0.0, **workflow: object) -> Settings:
    """Every role on the demo engine, no pacing between chunks, worktrees beside the project, no bell."""
    settings = load_settings(project, force_demo=True)
    demo = settings.engines["demo"].model_copy(update={"demo_delay_s": delay, "demo_fail_reviews": fail_reviews})
    flow = settings.workflow.model_copy(update={"worktree_root": project.parent / "worktrees", **workflow})
    ui = settings.ui.model_copy(update={"bell": False})
    return settings.model_copy(update={"engines": {**settings.engines, "demo": demo}, "workflow": flow, "ui": ui})


def posted(app: App[Any]) -> list[Any]:
    """Every notification the app posted in this test, in order, toasts that timed out included.

    Kept by the ``notification_history`` fixture of the UI tests (``tests/ui/conftest.py``).
    """
    history: list[Any] = textual_compat.notifications_of(app).__dict__.get("history", [])
    return history


def notifications(app: App[Any]) -> list[Notification]:
    """The notifications the app shows now (the toasts on screen or about to be), oldest first."""
    return list(textual_compat.notifications_of(app))


def screen_strips(app: App[Any]) -> list[Strip]:
    """The rows the terminal shows right now, with their styles."""
    return textual_compat.screen_strips(app.screen)


def screen_rows(app: App[Any]) -> list[str]:
    """The rows the terminal shows right now, as plain text."""
    return [strip.text for strip in screen_strips(app)]


def screen_text(app: App[Any]) -> str:
    """What the terminal shows right now, as plain text."""
    return "\n".join(screen_rows(app))


def in_view(app: App[Any], widget: Widget) -> bool:
    """True when at least part of ``widget`` shows on the screen now."""
    return widget in set(textual_compat.visible_widgets(app.screen))


async def send(pilot: Any, app: Any, text: str) -> None:
    """Write ``text`` in the composer, press enter, and wait until the agents are done."""
    app.composer.focus_input()
    app.composer.input.load_text(text)
    await pilot.press("enter")
    await settle(pilot, app)


async def settle(pilot: Any, app: Any) -> None:
    """Wait for the agents, for every runtime event to reach the screen, and for decision keys to arm.

    A card or question that takes the focus on its own ignores its keys for a moment (so keys typed
    for something else cannot decide); a test, like a user, presses them once they are armed.
    """
    from waiting import HANG_LIMIT

    await pilot.pause()
    await app.controller.wait_idle(HANG_LIMIT)
    await pilot.pause()
    await pilot.pause()
    await armed(pilot, app)


ARMING_WAIT = 5.0
"""More than any card or question waits before its keys act."""


async def armed(pilot: Any, app: Any) -> None:
    """Let the arming time pass, so the focused card or the open question accepts its keys.

    UI tests run on a hand-moved arming clock (``tests/ui/conftest.py``): it is moved forward here,
    the way the user's time passes before they press a key.
    """
    from tunaflow_tui.widgets.decision import arming

    targets = [t for t in (app.screen, app.focused) if t is not None and hasattr(t, "is_armed")]
    if all(t.is_armed for t in targets):
        return
    advance = getattr(arming.now, "advance", None)
    if advance is None:
        raise AssertionError("armed() needs the hand-moved arming clock of the UI tests")
    advance(ARMING_WAIT)
    await pilot.pause()
    assert all(t.is_armed for t in targets), "the decision keys did not arm"


async def quiet(pilot: Any) -> None:
    """Settle and clear the toasts: the steady screen a snapshot shows."""
    from textual.containers import ScrollableContainer
    from waiting import until

    await settle(pilot, pilot.app)
    pilot.app.clear_notifications()

    def thumbs_in_place() -> bool:  # every scrollbar drawn where its view is, for the view's height now
        stale = [view for view in pilot.app.screen.query(ScrollableContainer)
                 if view.show_vertical_scrollbar and view.display and (
                     view.vertical_scrollbar.position != view.scroll_y
                     or view.vertical_scrollbar.window_virtual_size != view.virtual_size.height)]
        for view in stale:  # the next frame lays the bar out again, as any key or resize would
            view.refresh(layout=True)
            view.vertical_scrollbar.refresh()
        return not stale

    await until(pilot, thumbs_in_place, "the scrollbars to show where their views are")
    await until(pilot, lambda: footers_current(pilot.app), "the footer to show the keys in force")
    await pilot.pause()


def footers_current(app: Any) -> bool:
    """True when every key footer on the screens drawn (the top one and those a dialog lets show
    through) shows the keys its screen's bindings give now; a screen hidden under another is laid
    out, and its footer fitted, only when it shows again."""
    from tunaflow_tui.widgets.key_footer import KeyFooter

    drawn = []
    for screen in reversed(app.screen_stack):
        drawn.append(screen)
        if not screen.is_modal:
            break
    return all(footer.shows_current_keys for screen in drawn for footer in screen.query(KeyFooter))


async def palette_offers(pilot: Any, app: Any, name: str) -> None:
    """Wait until the open command palette has searched and highlights a command starting with ``name``."""
    from textual.command import CommandPalette
    from textual.widgets import OptionList
    from waiting import until

    def offered() -> bool:
        screen = app.screen
        if not isinstance(screen, CommandPalette):
            return False
        listed = screen.query_one("CommandList", OptionList)
        index = listed.highlighted
        return index is not None and index < listed.option_count and \
            str(listed.get_option_at_index(index).prompt).startswith(name)

    await until(pilot, offered, f"the command palette offering {name!r}")


async def run_from_palette(pilot: Any, app: Any, name: str) -> None:
    """Open the command palette, enter ``name``, wait for it to be offered and run it with enter.

    The name goes into the palette's input at once, as a paste does: the palette searches for it
    once, not once per letter (``test_help_and_footer.py`` types a name into it letter by letter).
    """
    from textual.command import CommandInput, CommandPalette
    from waiting import until

    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the command palette")
    app.screen.query_one(CommandInput).insert_text_at_cursor(name)
    await palette_offers(pilot, app, name)
    palette = app.screen
    await pilot.press("enter")
    await until(pilot, lambda: palette not in app.screen_stack, "the command palette closing")


def refreshes_of(widget: Any, monkeypatch: Any) -> list[bool]:
    """Record ``widget``'s refreshes from now on: one entry per call, True when it asked for a layout
    (a layout redoes the whole screen; a repaint redraws the widget alone)."""
    layouts: list[bool] = []
    refresh = widget.refresh

    def counted(*regions: Any, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Any:
        layouts.append(layout)
        return refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    monkeypatch.setattr(widget, "refresh", counted)
    return layouts
