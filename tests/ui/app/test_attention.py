"""Calling the user back: bell and desktop notification when a decision waits or agents finish elsewhere."""

from __future__ import annotations

from app_harness import demo_settings, settle

from tunaflow_tui.textual_compat import driver_of
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard

REQUEST = "Add a word frequency report"


def _settings(project, *, notify_desktop: bool):
    settings = demo_settings(project)
    ui = settings.ui.model_copy(update={"bell": True, "notify_desktop": notify_desktop})
    return settings.model_copy(update={"ui": ui})


def _record(app) -> tuple[list[str], list[int]]:
    """What the app writes to the terminal outside frames, and how often it rings."""
    written: list[str] = []
    bells: list[int] = []
    driver = driver_of(app)
    plain_write = driver.write
    driver.write = lambda data: (written.append(data), plain_write(data))[-1]
    app.bell = lambda: bells.append(1)
    return written, bells


async def test_decision_while_in_the_background_rings_and_notifies_the_desktop(open_app, demo_project) -> None:
    app, controller, _runtime = open_app(settings=_settings(demo_project, notify_desktop=True))
    async with app.run_test(size=(120, 40)) as pilot:
        written, bells = _record(app)
        app.app_focus = False  # the terminal window went to the background
        controller.send("main", REQUEST)
        await settle(pilot, app)
        assert isinstance(app.focused, PlanProposalCard)
        assert bells
        [note] = [w for w in written if w.startswith("\x1b]9;")]
        assert note.endswith("\x07") and note.count("\x1b") == 1 and note.count("\x07") == 1
        assert "tunaflow: Plan “Add a word-frequency report to textstats” waits for your approval." in note


async def test_no_desktop_notification_unless_enabled(open_app, demo_project) -> None:
    app, controller, _runtime = open_app(settings=_settings(demo_project, notify_desktop=False))
    async with app.run_test(size=(120, 40)) as pilot:
        written, bells = _record(app)
        app.app_focus = False
        controller.send("main", REQUEST)
        await settle(pilot, app)
        assert bells  # the bell still rings
        assert not [w for w in written if "\x1b]" in w]


async def test_nothing_rings_while_the_user_watches(open_app, demo_project) -> None:
    app, _controller, _runtime = open_app(settings=_settings(demo_project, notify_desktop=True))
    async with app.run_test(size=(120, 40)) as pilot:
        written, bells = _record(app)
        app.composer.focus_input()
        app.composer.input.load_text(REQUEST)
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.focused, PlanProposalCard)
        assert bells == [] and written == []


async def test_agent_finishing_behind_the_workflow_view_rings(open_app, demo_project) -> None:
    app, controller, _runtime = open_app(settings=_settings(demo_project, notify_desktop=True))
    async with app.run_test(size=(120, 40)) as pilot:
        written, bells = _record(app)
        await pilot.press("f3")  # the workflow view covers the chat
        await pilot.pause()
        controller.send("main", "How many words does textstats count?")
        await settle(pilot, app)
        assert bells == [1]
        assert any(w.startswith("\x1b]9;tunaflow: Architect finished.") for w in written)


async def test_agent_text_in_a_notification_is_inert_and_short(open_app, demo_project) -> None:
    app, controller, _runtime = open_app(settings=_settings(demo_project, notify_desktop=True))
    async with app.run_test(size=(120, 40)) as pilot:
        written, _bells = _record(app)
        await pilot.press("f3")
        await pilot.pause()
        title = "Evil\x1b]52;c;aGk=\x07 title\x1b[2J\nsecond line\x07" + "x" * 500
        assert controller.attention.call(f"Plan “{title}” waits for your approval.", decision=True)
        [note] = [w for w in written if w.startswith("\x1b]9;")]
        assert note.count("\x1b") == 1 and note.count("\x07") == 1 and "\n" not in note
        assert "52;" not in note and "Evil title second line" in note
        assert len(note) <= len("\x1b]9;\x07") + 160
