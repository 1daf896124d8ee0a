"""The command palette lists every action under its stable name, and each one does something visible."""

from __future__ import annotations

import pytest
from app_harness import posted, run_from_palette, settle
from textual.command import CommandPalette
from textual.widgets import OptionList
from waiting import until

from tunaflow_tui.palette import COMMAND_NAMES
from tunaflow_tui.screens.feedback import FeedbackScreen
from tunaflow_tui.screens.pickers import ContextPackScreen, PickerScreen
from tunaflow_tui.screens.workflow import WorkflowScreen
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard

REQUIRED = (
    "Approve plan", "Request plan revision", "Hold plan", "Accept review", "Rework", "Redesign",
    "Retry review seat", "Toggle branch pane", "Pin branch pane", "Open workflow", "Open plan documents",
    "Cancel agent", "Open native CLI", "Switch engine", "Change theme", "Show context pack",
)


async def test_palette_lists_every_required_name(open_app) -> None:
    assert set(REQUIRED) <= set(COMMAND_NAMES)
    app, _controller, _runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the command palette")
        listed = app.screen.query_one("CommandList", OptionList)
        await until(pilot, lambda: listed.option_count >= len(REQUIRED), "the palette listing its commands")
        prompts = {str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)}
        missing = [name for name in REQUIRED if not any(p.startswith(name) for p in prompts)]
        assert missing == []


async def _run_from_palette(pilot, app, name: str) -> None:
    await run_from_palette(pilot, app, name)
    await settle(pilot, app)


def _notes(app) -> list[str]:
    return [n.message for n in posted(app)]


DECIDING = ("Approve plan", "Request plan revision", "Hold plan")
"""Commands that decide on the waiting plan: each runs in an app of its own."""

SHARED = tuple(name for name in REQUIRED if name not in DECIDING)
"""Commands that leave the plan waiting: they run one after the other in one app, back at the chat
in between (as a user trying them in turn would be)."""

PROPOSAL = "Add a word-frequency report to textstats"


def _expect(app, runtime, name: str, new_notes: list[str]) -> None:
    """What running ``name`` from the palette must have done."""
    plan = runtime.store.list_plans()[0]
    assert not [n for n in posted(app) if n.severity == "error"]
    if name == "Approve plan":
        assert plan.pending_decision == "review"
    elif name == "Request plan revision":
        assert isinstance(app.screen, FeedbackScreen)
    elif name == "Hold plan":
        assert plan.phase == "held"
    elif name in ("Accept review", "Rework", "Redesign", "Retry review seat"):
        assert any("No plan waits for" in n for n in new_notes), new_notes
    elif name == "Toggle branch pane":
        assert app.workspace.mode == "drawer"
    elif name == "Pin branch pane":
        assert app.workspace.mode == "pinned"
    elif name in ("Open workflow", "Open plan documents"):
        assert isinstance(app.screen, WorkflowScreen)
    elif name == "Cancel agent":
        assert "No agent is running." in new_notes
    elif name == "Open native CLI":
        assert any("no interactive CLI" in n for n in new_notes), new_notes
    elif name in ("Switch engine", "Change theme"):
        assert isinstance(app.screen, PickerScreen)
    elif name == "Show context pack":
        assert isinstance(app.screen, ContextPackScreen)
        assert "recent" in str(app.screen.query_one("#sections").get_row_at(1)) or app.screen.pack.rows
    else:
        raise AssertionError(f"no expectation for {name!r}")


@pytest.mark.parametrize("name", DECIDING)
async def test_each_deciding_palette_command_runs(open_app, at_approval, name: str) -> None:
    # the Architect's proposal waits for approval (seeded: its turn ran once, headless)
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert [card.view.title for card in app.query(PlanProposalCard)] == [PROPOSAL]
        before = len(posted(app))
        await _run_from_palette(pilot, app, name)
        _expect(app, runtime, name, _notes(app)[before:])


async def test_every_other_palette_command_runs_and_leaves_the_plan_waiting(open_app, at_approval) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        chat = app.screen
        failed: dict[str, str] = {}
        for name in SHARED:  # every command is run and checked; the failures are reported together
            assert [card.view.title for card in app.query(PlanProposalCard)] == [PROPOSAL]
            assert runtime.store.list_plans()[0].pending_decision == "approval"
            before = len(posted(app))
            await _run_from_palette(pilot, app, name)
            try:
                _expect(app, runtime, name, _notes(app)[before:])
            except AssertionError as error:
                failed[name] = str(error)
            while app.screen is not chat:  # back to the chat: the screen it opened closes …
                app.pop_screen()
                await until(pilot, lambda: app.screen is chat or len(app.screen_stack) > 1, "the screen closed")
            app.workspace.mode = "hidden"  # … and the branch pane it showed goes
            await settle(pilot, app)
        assert failed == {}


async def test_change_theme_applies_the_picked_theme(open_app) -> None:
    app, controller, _runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        controller.tools.change_theme()
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        values = [value for value, _ in picker.choices]
        assert values[:2] == ["tunaflow-dark", "tunaflow-light"]
        options = picker.query_one(OptionList)
        options.highlighted = 1
        await pilot.press("enter")
        await pilot.pause()
        assert app.theme == "tunaflow-light"


async def test_switch_engine_changes_who_answers(open_app, demo_project) -> None:
    app, controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        controller.tools.switch_engine()
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        values = [value for value, _ in picker.choices]
        options = picker.query_one(OptionList)
        options.highlighted = values.index("claude")
        await pilot.press("enter")
        await pilot.pause()
        assert runtime.settings.roles.architect == "claude"
        assert "→ Architect (claude)" in str(app.composer.query_one("#composer-recipient").render())


async def test_the_decisions_in_the_palette_name_the_card_key_that_does_the_same(open_app) -> None:
    app, _controller, _runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the command palette")
        listed = app.screen.query_one("CommandList", OptionList)
        await until(pilot, lambda: listed.option_count >= len(REQUIRED), "the palette listing its commands")
        prompts = [str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)]

        def help_of(name: str) -> str:
            return next(" ".join(p.split()) for p in prompts if p.startswith(name))

        for name, key in (("Approve plan", "(a)"), ("Request plan revision", "(r)"), ("Hold plan", "(h)"),
                          ("Accept review", "(a)"), ("Rework", "(w)"), ("Redesign", "(d)")):
            assert help_of(name).endswith(key), help_of(name)
