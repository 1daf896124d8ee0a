"""One dialog style: every dialog fits 80×24 with its own footer, opens at the current selection,
labels its fields and says what is wrong only after the user acted; help is a key list to filter."""

from __future__ import annotations

import re
from typing import Any

import pytest
from app_harness import footers_current, posted, screen_text, settle
from branch_seeds import fork_seeded, open_in_pane, seed_branch, seed_main
from textual.widgets import Input, OptionList, Static, TextArea
from waiting import until

from tunaflow_tui.app import DemoChatController, TunaflowApp
from tunaflow_tui.core.roundtable.seats import Seat
from tunaflow_tui.core.workflow import Actor, ProposalReceived
from tunaflow_tui.screens.branch_dialogs import ConfirmBranchScreen, RenameBranchScreen
from tunaflow_tui.screens.confirm import ConfirmDecisionScreen
from tunaflow_tui.screens.decision_screen import dev_stalled_screen
from tunaflow_tui.screens.dialog import DialogScreen
from tunaflow_tui.screens.doom_loop import DoomLoopScreen
from tunaflow_tui.screens.feedback import FeedbackScreen
from tunaflow_tui.screens.git_init import git_init_screen, initial_commit_screen
from tunaflow_tui.screens.help import HelpScreen
from tunaflow_tui.screens.pickers import PickerScreen
from tunaflow_tui.screens.proposal_editor import ProposalEditorScreen
from tunaflow_tui.screens.roundtable_seat import AddSeatScreen
from tunaflow_tui.screens.roundtable_setup import RoundtableSetupScreen
from tunaflow_tui.screens.search_screen import SearchScreen
from tunaflow_tui.screens.trust_screen import trust_screen
from tunaflow_tui.screens.worktree_setup_screen import WorktreeSetupScreen
from tunaflow_tui.viewmodels.plan_rows import FailureView
from tunaflow_tui.viewmodels.search_views import SearchResultsView
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard
from tunaflow_tui.widgets.key_footer import KeyFooter

LONG = ("The worktree setup for “Add a word frequency report” failed, so the Developer has not started. "
        "Retry runs it again; skip starts the Developer without it; a shell lets you fix it by hand.")
SEATS = (Seat(name="claude", engine="demo", role="proposer"),)


def _setup(topic: str = "") -> RoundtableSetupScreen:
    return RoundtableSetupScreen(topic=topic, seats=SEATS, presets=[("Last line-up (1)", SEATS)],
                                 estimate=lambda setup: [(seat.name, 1234) for seat in setup.seats],
                                 engines=["claude", "codex", "demo", "gemini"])


DIALOGS = {
    "help": lambda app: HelpScreen(app.binding_sections()),
    "search": lambda app: SearchScreen(lambda query: SearchResultsView(query, (), "fts")),
    "theme": lambda app: PickerScreen("Change theme", "Themes from the themes folder are listed too. "
                                      "Your choice is saved for next time.",
                                      [(name, name) for name in sorted(app.available_themes)], app.theme),
    "roundtable": lambda app: _setup(),
    "add-seat": lambda app: AddSeatScreen(seats=SEATS, engines=["demo"]),
    "rename": lambda app: RenameBranchScreen("stop-words idea"),
    "delete": lambda app: ConfirmBranchScreen("Delete branch", "Delete branch 3 “stop-words idea”? " * 3, "Delete"),
    "confirm": lambda app: ConfirmDecisionScreen("Abandon the plan?", LONG, "Abandon"),
    "dev-stalled": lambda app: dev_stalled_screen("Add a word frequency report"),
    "doom-loop": lambda app: DoomLoopScreen(tuple(FailureView(n, "fail", ("Counts are off by one",) * 3)
                                                  for n in range(1, 5)), threshold=3),
    "worktree-setup": lambda app: WorktreeSetupScreen("Add a word frequency report", "npm ci: exit status 1\n" * 3,
                                                      "npm ci", "/tmp/textstats/.tunaflow/worktrees/plan-1"),
    "git-init": lambda app: git_init_screen("textstats"),
    "initial-commit": lambda app: initial_commit_screen("textstats"),
    "trust": lambda app: trust_screen("textstats", ["[workflow] test_command = \"pytest -q\""] * 4),
    "feedback": lambda app: FeedbackScreen(),
    "edit-plan": lambda app: ProposalEditorScreen("# Add a word count\n\n## Subtasks\n1. Count words\n"),
}


async def _drawn(pilot: Any) -> None:
    """Let the app handle what is queued (layout, the footer's recompose) a few times over."""
    for _ in range(5):
        await pilot.pause()


def _footer_text(dialog: DialogScreen[Any]) -> str:
    return screen_text(dialog.app).splitlines()[-1]


@pytest.mark.parametrize("name", list(DIALOGS))
async def test_every_dialog_fits_80x24_in_one_frame_with_its_own_footer(name: str) -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        dialog = DIALOGS[name](app)
        app.push_screen(dialog)
        await until(pilot, lambda: app.screen is dialog and dialog.query(KeyFooter), "the dialog and its footer")
        await until(pilot, lambda: "^q Quit" in _footer_text(dialog), f"quit in the dialog's footer ({name})")
        await _drawn(pilot)
        frame = dialog.query_one("#dialog")
        footer = dialog.query_one(KeyFooter)
        assert frame.region.y >= 0 and frame.region.bottom <= footer.region.y, "the frame ends above the footer"
        assert frame.region.x >= 0 and frame.region.right <= 80
        assert frame.styles.border.top[0] == "round", "one frame style: rounded"
        for widget in frame.query("Input, TextArea, Select, Button, OptionList"):
            if widget.display:
                assert frame.region.contains_region(widget.region), f"{widget!r} outside the frame"
        text = screen_text(app)
        assert "▀" not in text and "▄" not in text.splitlines()[frame.region.bottom - 1], "no thick frame"
        assert "e Decide" not in _footer_text(dialog), "no key of the card under the dialog"


# ---------------------------------------------------------------------------------------------- quitting
PATIENCE = 20.0
"""Seconds: far more than a dialog takes to open and draw, far less than the test run's timeout."""


@pytest.mark.parametrize("name", list(DIALOGS))
async def test_the_app_quits_with_the_dialog_open_and_the_screen_under_it_drawn(name: str) -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: footers_current(app), "the main screen's footer", limit=PATIENCE)
        main = app.screen
        dialog = DIALOGS[name](app)
        app.push_screen(dialog)
        await until(pilot, lambda: app.screen is dialog and dialog.query(KeyFooter), f"the {name} dialog",
                    limit=PATIENCE)
        await until(pilot, lambda: footers_current(app), f"the footers under and in the {name} dialog measured",
                    limit=PATIENCE)
        assert main.query_one(KeyFooter).shows_current_keys, "the main screen's footer laid out under the dialog"
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app.is_running, f"the app quitting with the {name} dialog open",
                    limit=PATIENCE)


async def test_the_search_dialog_leaves_quit_in_view_at_80x24(open_app: Any) -> None:
    app, _session, _runtime = open_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("f5")
        await until(pilot, lambda: isinstance(app.screen, SearchScreen), "the search dialog")
        dialog = app.screen
        await until(pilot, lambda: "^q Quit" in _footer_text(dialog) and "esc Close" in _footer_text(dialog),
                    "the dialog's footer with quit")
        assert dialog.query_one("#dialog").region.bottom <= 23
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app.is_running, "quit from the search dialog")


# ---------------------------------------------------------------------------------------------- help
def _listed(screen: HelpScreen) -> list[str]:
    return [row.binding_id for section in screen.shown for row in section.rows]


def _in_view(sections: Any, text: str) -> list[Any]:
    """The rows of ``sections`` whose keys and action show side by side in ``text``."""
    return [row for section in sections for row in section.rows
            if re.search(rf"(^|\s){re.escape(row.keys)}\s+{re.escape(row.description)}(\s|$)", text, re.M)]


async def test_help_is_a_dense_key_list_that_filters_as_the_user_types() -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        await _drawn(pilot)
        text = screen_text(app)
        in_view = _in_view(help_screen.shown, text)
        assert len(in_view) >= 24, f"many keys on the first screen at 80×24: {[row.keys for row in in_view]}"
        paired = [line for line in text.splitlines()
                  if sum(bool(re.search(rf"{re.escape(row.keys)}\s+{re.escape(row.description)}\s", line))
                         for row in in_view) == 2]
        assert len(paired) >= 10, "two keys a line"
        everything = _listed(help_screen)
        await pilot.press(*"adopt")
        await until(pilot, lambda: help_screen.query_one("#help-filter", Input).value == "adopt", "the filter typed")
        listed = _listed(help_screen)
        assert "branch.adopt" in listed and "adopt.confirm" in listed
        assert "app.quit" not in listed and len(listed) < len(everything)
        above_footer = "\n".join(screen_text(app).splitlines()[:-1])
        in_view = {row.binding_id for row in _in_view(help_screen.sections, above_footer)}
        assert {"branch.adopt", "adopt.confirm"} <= in_view and "app.quit" not in in_view, in_view
        assert [s.title for s in help_screen.shown][:1] != ["App"], "sections without a match are left out"
        await pilot.press(*" zzz")
        await until(pilot, lambda: not help_screen.shown, "no match")
        assert "No key matches “adopt zzz”." in screen_text(app)
        for _ in range(len(" zzzadopt")):
            await pilot.press("backspace")
        await until(pilot, lambda: _listed(help_screen) == everything, "the whole list again")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen), "help closing")


async def test_help_lists_a_remapped_key_as_mapped_and_finds_it_by_that_key() -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False, keymap={"search.open": "f9"})
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        await pilot.press("f", "9")
        await until(pilot, lambda: "search.open" in _listed(app.screen), "the remapped search key")
        row = next(row for section in app.screen.shown for row in section.rows if row.binding_id == "search.open")
        assert row.keys == "f9"


# ---------------------------------------------------------------------------------------------- theme
@pytest.mark.parametrize("current", ["textual-dark", "tokyo-night", None], ids=["middle", "last", "first"])
async def test_the_theme_list_opens_at_the_current_theme_with_the_whole_intro(current: str | None) -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        names = sorted(app.available_themes)
        app.theme = current or names[0]
        await pilot.pause()
        app.action_change_theme()
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the theme picker")
        await _drawn(pilot)
        options = app.screen.query_one(OptionList)
        ordered = [str(options.get_option_at_index(i).id) for i in range(options.option_count)]
        assert options.highlighted == ordered.index(app.theme)
        text = screen_text(app)
        assert "Your choice is saved for next time." in " ".join(line.strip(" │") for line in text.splitlines())
        assert f" {app.theme} " in text, "the current theme is in view"
        if app.theme == ordered[0]:
            assert options.scroll_y == 0 and f" {ordered[1]} " in text, "the list starts at its first entries"


# ---------------------------------------------------------------------------------------------- roundtable
async def test_roundtable_setup_says_what_is_wrong_only_after_input() -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        form = _setup()
        app.push_screen(form)
        await until(pilot, lambda: app.screen is form and form.query(KeyFooter), "the set-up form")
        await _drawn(pilot)
        problem = form.query_one("#rt-error", Static)
        assert not problem.display and "empty" not in screen_text(app), "nothing red on a form just opened"
        for label in ("Topic", "Mode", "Rounds"):
            assert f"│ {label} " in screen_text(app) or f" {label} " in screen_text(app), label
        await pilot.press("x", "backspace")  # typed, then taken back: the topic is empty again
        await until(pilot, lambda: problem.display, "the problem shown after input")
        assert "topic" in str(problem.content).lower()
        await pilot.press(*"Bigrams?")
        await until(pilot, lambda: not problem.display, "the problem gone once fixed")
        estimate = str(form.query_one("#rt-estimate", Static).content)
        assert estimate.startswith("1 seat × 2 rounds = 2 calls"), estimate


async def test_roundtable_setup_names_the_problem_when_start_is_pressed_untouched() -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        form = _setup()
        app.push_screen(form)
        await until(pilot, lambda: app.screen is form, "the set-up form")
        await pilot.press("enter")
        await until(pilot, lambda: form.query_one("#rt-error", Static).display, "the problem named on start")
        assert app.screen is form, "nothing starts"


async def test_roundtable_setup_starts_with_ctrl_s_from_the_participants() -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    started: list[object] = []
    async with app.run_test(size=(80, 24)) as pilot:
        form = _setup("Bigrams or trigrams?")
        app.push_screen(form, started.append)
        await until(pilot, lambda: app.screen is form and form.query(KeyFooter), "the set-up form")
        await until(pilot, lambda: "^s Start" in _footer_text(form), "the form's start key in its footer")
        form.query_one("#rt-seats").focus()
        await pilot.press("ctrl+s")
        await until(pilot, lambda: bool(started), "the roundtable started from the participants")
        assert started[0] is not None and started[0].setup.topic == "Bigrams or trigrams?"


# ---------------------------------------------------------------------------------------------- edit plan
async def test_the_edit_plan_dialog_has_its_own_footer(open_app: Any) -> None:
    app, _session, runtime = open_app()
    plan = runtime.store.create_plan(title="Add a word frequency report", slug="word-frequency", phase="chat",
                                     subtasks=(("Count words", "in frequency.py"),), description="Report words.",
                                     expected_outcome="The top words.")
    runtime.service.apply(plan.id, ProposalReceived(2), actor=Actor.AGENT)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f2")
        await settle(pilot, app)
        assert isinstance(app.focused, PlanProposalCard)
        await until(pilot, lambda: "e Decide" in screen_text(app).splitlines()[-1], "the plan card's keys")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ProposalEditorScreen), "the plan editor")
        editor = app.screen
        await until(pilot, lambda: "Save the plan" in _footer_text(editor), "the editor's own keys")
        footer = _footer_text(editor)
        assert "e Decide" not in footer and "^s Save the plan" in footer and "esc Cancel" in footer, footer


# ---------------------------------------------------------------------------------------------- adopt
async def test_the_adopt_dialog_names_the_branch_by_its_label_after_a_rename(open_app: Any) -> None:
    from tunaflow_tui.screens.adopt_editor import AdoptEditorScreen

    app, _session, runtime = open_app()
    ids = seed_main(runtime)
    branch_id = fork_seeded(runtime, ids[1], "branch idea")
    seed_branch(runtime, branch_id)
    async with app.run_test(size=(120, 40)) as pilot:
        branch = await open_in_pane(pilot, app, branch_id)
        runtime.rename_branch(branch_id, "stop-words idea")  # renamed after the pane opened (another process)
        branch.chat.blocks()[-1].focus()
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, AdoptEditorScreen) and app.screen.query("#prompt"),
                    "the adopt editor")
        editor = app.screen
        prompt = str(editor.query_one("#prompt", Static).content)
        assert "“stop-words idea”" in prompt and "branch idea" not in prompt, prompt
        assert editor.query_one("#dialog").border_title == "Adopt “stop-words idea”"
        editor.query_one(TextArea).load_text("Drop stop words.")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: any("Adopted branch" in str(n.message) and "stop-words idea" in str(n.message)
                                       for n in posted(app)), "the adoption named by its label")
