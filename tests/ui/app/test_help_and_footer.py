"""Help lists every key binding with the key that works; the footer shows the keys that matter at 80×24."""

from __future__ import annotations

import ast
import functools
import gc
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import pytest
from app_harness import palette_offers, screen_text, send, settle
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.screen import ModalScreen, Screen
from textual.widgets import OptionList, Static
from waiting import until

import tunaflow_tui
from tunaflow_tui.app import DemoChatController, TunaflowApp
from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.screens.documents import DocumentScreen
from tunaflow_tui.screens.feedback import FeedbackScreen
from tunaflow_tui.screens.help import HelpScreen
from tunaflow_tui.screens.workflow import WorkflowScreen
from tunaflow_tui.textual_compat import FooterKey, reactive_watchers
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard
from tunaflow_tui.widgets.key_footer import KeyFooter

SOURCE = Path(tunaflow_tui.__file__).parent


@functools.cache
def declared_bindings() -> Mapping[str, tuple[str, str | None]]:
    """Every ``Binding(keys, ..., id="x.y")`` written anywhere in the package: id → (keys, key_display).

    Read once per test process (parsing the package takes about a second of CPU); a file that never
    names ``Binding`` holds no such call and is not parsed.
    """
    found: dict[str, tuple[str, str | None]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "Binding" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            keywords = {k.arg: k.value for k in node.keywords if isinstance(k.value, ast.Constant)}
            if name != "Binding" or "id" not in keywords or not node.args:
                continue
            keys = node.args[0]
            assert isinstance(keys, ast.Constant), f"{path}: keys of {keywords['id'].value} are not a literal"
            display = keywords["key_display"].value if "key_display" in keywords else None
            found[keywords["id"].value] = (keys.value, display)
    return MappingProxyType(found)


def shown_keys(app: TunaflowApp, keys: str, key_display: str | None) -> list[str]:
    """How the footer writes each key (``question_mark`` is ``?``, ``ctrl+q`` is ``^q``)."""
    shown = [app.get_key_display(Binding(key, "x")) for key in keys.split(",")]
    if key_display:
        shown[0] = key_display
    return shown


def test_the_package_declares_the_bindings_this_test_reads() -> None:
    ids = declared_bindings()
    assert {"app.help", "decision.jump", "workflow.close", "feedback.submit", "decision.later",
            "document.close", "picker.cancel", "context.close", "help.close"} <= set(ids)


def every_key_remapped() -> dict[str, str]:
    """A keymap giving every declared binding a key of its own (f13, f14, ...)."""
    return {binding_id: f"f{13 + number}" for number, binding_id in enumerate(declared_bindings())}


@pytest.mark.parametrize("remapped", [False, True], ids=["default-keys", "every-key-remapped"])
async def test_help_lists_every_binding_with_its_current_key(remapped: bool) -> None:
    keymap = every_key_remapped() if remapped else {}
    app = TunaflowApp(DemoChatController(), cursor_blink=False, keymap=keymap)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(keymap.get("app.help", "f1"))
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        listed_keys = {row.binding_id: row.keys for section in app.screen.shown for row in section.rows}
        missing, wrong = [], []
        for binding_id, (keys, display) in declared_bindings().items():
            if binding_id not in listed_keys:
                missing.append(binding_id)
                continue
            listed = listed_keys[binding_id]
            expected = shown_keys(app, keymap[binding_id], None) if binding_id in keymap else shown_keys(
                app, keys, display)
            if listed != " / ".join(expected):
                wrong.append((binding_id, listed, expected))
        assert missing == []
        assert wrong == []
        assert "question_mark" not in help_text(app)


async def test_help_shows_question_mark_as_typed() -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert re.search(r"^f1 / \? +Help +\S", help_text(app), re.MULTILINE), "the help key, then the next key beside it"


def help_text(app: TunaflowApp) -> str:
    """The key list as help shows it (every row, not only those in view), each line stripped."""
    keys = app.screen.query_one("#help-keys", Static)
    lines = app.console.render_lines(keys.content, app.console.options.update_width(100), pad=False)
    return "\n".join("".join(segment.text for segment in line).strip() for line in lines)


def footer(app: TunaflowApp) -> str:
    return screen_text(app).splitlines()[-1]


async def footer_showing(pilot: Any, app: TunaflowApp, *hints: str) -> str:
    """The footer line once it is drawn with every one of ``hints`` (it is recomposed after a focus change)."""
    await until(pilot, lambda: all(hint in footer(app) for hint in hints),
                f"the footer showing {hints}; it shows {footer(app)!r}")
    return footer(app)



def footer_keys_cut(app: TunaflowApp) -> list[str]:
    """Footer keys shown only in part: each key is shown whole or not at all."""
    footer_widget = app.screen.query_one(KeyFooter)
    palette = [key.region for key in footer_widget.query(FooterKey) if key.has_class("-command-palette")]
    right = palette[0].x if palette and palette[0].width else footer_widget.region.right
    return [f"{key.key_display} {key.description}" for key in footer_widget.query(FooterKey)
            if key.display and not key.has_class("-command-palette") and key.region.right > right]


async def _footer_settled(pilot: Any, app: TunaflowApp, *hints: str) -> str:
    """The footer line once it shows ``hints`` and no key in part (it is composed again after each
    change of focus, then fitted to the width)."""
    for _ in range(500):
        line = footer(app)
        if all(hint in line for hint in hints) and not footer_keys_cut(app):
            return line
        await pilot.pause(0.002)
    raise AssertionError(f"the footer never showed {hints} with every key whole: {footer(app)!r}, "
                         f"cut: {footer_keys_cut(app)}")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_footer_shows_help_the_focused_keys_and_quit_whole(open_app, size: tuple[int, int]) -> None:
    app, _controller, _runtime = open_app()
    async with app.run_test(size=size) as pilot:
        line = await _footer_settled(pilot, app, "f1 Help", "⏎ Send", "^q Quit")
        assert line.startswith(" f1 Help  ⏎ Send"), "help first, then the keys of the composer"
        assert footer_keys_cut(app) == []
        assert "Switch chat/branch" not in line, "f8 shows in its group, not split off on its own"
        await pilot.press("escape")
        await pilot.pause()
        line = await _footer_settled(pilot, app, "f1 Help", "^q Quit", "end Newest")
        assert footer_keys_cut(app) == []
        await send(pilot, app, "Add a word frequency report")
        assert isinstance(app.focused, PlanProposalCard)
        line = await _footer_settled(pilot, app, "f1 Help", "a r h e Decide", "^q Quit")
        assert line.index("a r h e Decide") < line.index("^q Quit")
        assert footer_keys_cut(app) == []
        await pilot.press("f3")
        await pilot.pause()
        assert isinstance(app.screen, WorkflowScreen)
        line = await _footer_settled(pilot, app, "f1 Help", "esc Back to chat", "o Open document", "^q Quit")
        assert line.startswith(" f1 Help  ⏎ Go to plan  esc Back to chat  o Open document"), \
            "the plan list's enter, then the view's keys"
        assert footer_keys_cut(app) == []


async def test_the_app_keys_that_do_not_fit_at_80_columns_are_left_out_whole(open_app) -> None:
    app, _controller, _runtime = open_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _footer_settled(pilot, app, "^q Quit")
        footer_widget = app.query_one(KeyFooter)
        left_out = {key.action for key in footer_widget.query(FooterKey) if not key.display}
        assert {"open_workflow", "cancel_agent"} <= left_out, "the rest is in help"
        await pilot.resize_terminal(160, 40)
        line = await _footer_settled(pilot, app, "f2 Decision", "f3 Workflow", "f4 Cancel agent")
        assert "^q Quit" in line and footer_keys_cut(app) == []


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_an_empty_pinned_pane_leaves_the_panes_keys_in_the_footer(open_app, size: tuple[int, int]) -> None:
    """At 80 columns the pinned pane is all there is on screen; its keys (unpin, back to the chat) stay named."""
    app, _controller, _runtime = open_app()
    async with app.run_test(size=size) as pilot:
        await _footer_settled(pilot, app, "f6 f7 f8 Branch pane", "^q Quit")
        await pilot.press("f7")  # pinned, with no branch in it
        await until(pilot, lambda: app.workspace.mode == "pinned", "the pane pinned")
        line = await _footer_settled(pilot, app, "f1 Help", "f6 f7 f8 Branch pane", "^q Quit")
        assert footer_keys_cut(app) == [], line
        await pilot.press("f7")  # the keys the footer named: unpinned, back to the drawer
        await until(pilot, lambda: app.workspace.mode == "drawer", "the pane unpinned")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_footer_shows_before_the_terminal_has_the_focus(size: tuple[int, int]) -> None:
    app = TunaflowApp(DemoChatController(), cursor_blink=False)
    app.set_reactive(TunaflowApp.app_focus, False)  # a browser tab before the first click
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert not app.app_focus
        await _footer_settled(pilot, app, "f1 Help", "^q Quit")


async def test_workflow_screen_hides_and_ignores_the_chat_column_keys(open_app) -> None:
    app, _controller, _runtime = open_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        assert isinstance(app.screen, WorkflowScreen)
        line = await footer_showing(pilot, app, "o Open document")
        assert "Write" not in line and "Sidebar" not in line and "⏎ Go to plan" in line
        sidebar_hidden = app.has_class("-sidebar-hidden")
        await pilot.press("i", "h", "e", "y", "ctrl+b")
        await pilot.pause()
        assert isinstance(app.screen, WorkflowScreen)
        assert app.screen.focused is not None and app.screen.focused.id == "plan-list"
        assert app.has_class("-sidebar-hidden") == sidebar_hidden
        await pilot.press("escape")
        await pilot.pause()
        assert app.composer.text == ""


async def _document_viewer_over_workflow(pilot, app) -> None:
    # the app is open on a reviewed plan (``at_review``): the Developer and the review wrote its documents
    await settle(pilot, app)
    assert app.query(ReviewVerdictCard), "the review verdict waits in the dock"
    app.composer.focus_input()
    await pilot.press("f3")
    await pilot.pause()
    app.screen.query_one("#documents", OptionList).focus()
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(app.screen, DocumentScreen)


async def test_f2_in_the_document_viewer_closes_it_and_the_workflow_view(open_app, at_review) -> None:
    app, _controller, _runtime = open_app(project=at_review)
    async with app.run_test(size=(80, 24)) as pilot:
        await _document_viewer_over_workflow(pilot, app)
        await pilot.press("f2")
        await settle(pilot, app)
        assert len(app.screen_stack) == 1
        assert isinstance(app.focused, ReviewVerdictCard)


async def test_jump_to_decision_from_the_palette_closes_the_document_viewer(open_app, at_review) -> None:
    app, _controller, _runtime = open_app(project=at_review)
    async with app.run_test(size=(80, 24)) as pilot:
        await _document_viewer_over_workflow(pilot, app)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the command palette")
        await pilot.press(*"Jump to decision")
        await palette_offers(pilot, app, "Jump to decision")
        await pilot.press("enter")
        await settle(pilot, app)
        assert len(app.screen_stack) == 1
        assert isinstance(app.focused, ReviewVerdictCard)


async def test_open_workflow_from_the_document_viewer_goes_back_to_the_one_view(open_app, at_review) -> None:
    app, controller, _runtime = open_app(project=at_review)
    async with app.run_test(size=(80, 24)) as pilot:
        await _document_viewer_over_workflow(pilot, app)
        await controller.panes.open_workflow()  # as the palette's "Open workflow" does
        await pilot.pause()
        assert isinstance(app.screen, WorkflowScreen)
        assert sum(isinstance(screen, WorkflowScreen) for screen in app.screen_stack) == 1
        assert len(app.screen_stack) == 2


async def test_f2_while_writing_feedback_keeps_the_feedback(open_app, at_approval) -> None:
    app, _controller, _runtime = open_app()  # the proposal waits for its decision (seeded)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.controller.decisions.decide_by_name(Decision.REVISE)
        await settle(pilot, app)
        assert isinstance(app.screen, FeedbackScreen)
        await pilot.press(*"shorter", "f2")
        await settle(pilot, app)
        assert isinstance(app.screen, FeedbackScreen)
        assert app.screen.text == "shorter"


class _Pane(Static, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("x", "noop", "Pane key")]


class _Field(Static, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("y", "noop", "Field key"), Binding("z", "noop", "Other")]


class _FooterApp(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("f1", "noop", "Help")]

    def compose(self) -> ComposeResult:
        yield _Pane("pane")
        yield _Field("field")
        yield KeyFooter(first=("noop",))


def _footer_watchers(footer: KeyFooter) -> int:
    """Callbacks registered on the footer's reactives (each keeps its widget alive until it fires)."""
    return sum(len(callbacks) for callbacks in reactive_watchers(footer).values())


def _live_footer_keys() -> int:
    """Footer keys still in memory, mounted or not."""
    gc.collect()
    return sum(isinstance(obj, FooterKey) for obj in gc.get_objects())


async def _footer_shows(pilot: Any, footer_widget: KeyFooter, description: str) -> None:
    """Wait until the footer has been composed again with the key described so."""
    await until(pilot, lambda: any(key.description == description for key in footer_widget.query(FooterKey)),
                f"the footer showing {description!r}")


async def test_moving_the_focus_leaves_no_footer_keys_behind() -> None:
    app = _FooterApp()
    async with app.run_test(size=(80, 24)) as pilot:
        footer_widget = app.query_one(KeyFooter)
        pane, field = app.query_one(_Pane), app.query_one(_Field)

        async def move_focus(times: int) -> None:
            for _ in range(times):
                for widget, key in ((pane, "Pane key"), (field, "Field key")):
                    widget.focus()
                    await _footer_shows(pilot, footer_widget, key)

        await move_focus(5)
        await pilot.pause()
        widgets, keys, watchers = len(app.query("*")), _live_footer_keys(), _footer_watchers(footer_widget)
        await move_focus(100)  # 200 focus changes, each showing other keys
        await pilot.pause()
        assert len(app.query("*")) == widgets
        assert _live_footer_keys() == keys
        assert _footer_watchers(footer_widget) == watchers


async def test_the_footer_follows_a_change_of_style() -> None:
    app = _FooterApp()
    async with app.run_test(size=(80, 24)) as pilot:
        footer_widget = app.query_one(KeyFooter)
        app.query_one(_Pane).focus()
        await _footer_shows(pilot, footer_widget, "Pane key")

        def styled(compact: bool) -> bool:  # the keys shown now (a recompose may have replaced them)
            keys = [key for key in footer_widget.query(FooterKey) if not key.has_class("-command-palette")]
            return bool(keys) and all(key.compact is compact and key.has_class("-compact") is compact
                                      for key in keys)

        async def until_styled(compact: bool) -> None:
            await until(pilot, lambda: styled(compact), f"the footer keys becoming compact={compact}")

        assert styled(False)
        footer_widget.compact = True
        await until_styled(True)
        footer_widget.compact = False
        await until_styled(False)


async def test_bindings_refreshed_without_a_change_leave_the_footer_as_it_is() -> None:
    # a message that finishes streaming refreshes its bindings; the keys shown stay the same, and
    # composing the footer again would lay the whole screen out once more
    app = _FooterApp()
    async with app.run_test(size=(80, 24)) as pilot:
        footer_widget = app.query_one(KeyFooter)
        pane, field = app.query_one(_Pane), app.query_one(_Field)
        pane.focus()
        await _footer_shows(pilot, footer_widget, "Pane key")
        composed: list[str] = []
        real = footer_widget.recompose

        async def counting_recompose() -> None:
            composed.append(app.focused.__class__.__name__)
            await real()

        footer_widget.recompose = counting_recompose  # type: ignore[method-assign]
        for _ in range(3):
            pane.refresh_bindings()
            app.refresh_bindings()
        field.focus()  # other keys: the footer is composed again, once
        await _footer_shows(pilot, footer_widget, "Field key")
        assert composed == ["_Field"]


class _CountingFooter(KeyFooter):
    """A key footer that notes the focused widget each time it composes keys."""

    def __init__(self) -> None:
        super().__init__(first=("noop",))
        self.composed: list[str] = []

    def compose(self) -> ComposeResult:
        widgets = list(super().compose())
        if widgets:
            self.composed.append(type(self.screen.focused).__name__)
        yield from widgets


class _OpeningApp(_FooterApp):
    AUTO_FOCUS = ""  # the focus moves as the test says

    def compose(self) -> ComposeResult:
        yield _Pane("pane")
        yield _Field("field")


async def test_the_footer_composes_its_keys_once_while_the_app_opens() -> None:
    app = _OpeningApp()
    async with app.run_test(size=(80, 24)) as pilot:
        footer_widget = _CountingFooter()
        await app.screen.mount(footer_widget)
        # the focus moves several times before the footer's first keys are composed (in the app: the
        # screen's first focus, the composer's, widgets mounting)
        for widget in (app.query_one(_Field), app.query_one(_Pane)):
            app.screen.set_focus(widget)
        await _footer_shows(pilot, footer_widget, "Pane key")
        await pilot.pause()
        assert footer_widget.composed == ["_Pane"]
        # the footer's first size can arrive after its keys are composed, at the width they were made
        # for: nothing to do again
        footer_widget.post_message(events.Resize(footer_widget.size, footer_widget.virtual_size))
        await pilot.pause()
        assert footer_widget.composed == ["_Pane"]
        await pilot.resize_terminal(60, 24)  # another width: the keys are fitted to it
        await until(pilot, lambda: len(footer_widget.composed) == 2, "the footer composed for the new width")


class _Form(Static, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("y", "save", "Save form"), Binding("z", "clear", "Clear form"),
                                             Binding("w", "check", "Check form")]


class _FormApp(_FooterApp):
    def compose(self) -> ComposeResult:
        yield _Pane("pane")
        yield _Form("form")
        yield KeyFooter(first=("noop",))


class _Dialog(ModalScreen[None]):
    def compose(self) -> ComposeResult:
        yield Static("a dialog")


class _Page(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Static("a page over the whole screen")


def _keys_past_the_edge(footer_widget: KeyFooter) -> list[str]:
    """Keys shown in part: past the palette key (when it shows), or past the footer's right edge."""
    palette = [key.region for key in footer_widget.query(FooterKey)
               if key.has_class("-command-palette") and key.display]
    right = palette[0].x if palette and palette[0].width else footer_widget.region.right
    return [key.description for key in footer_widget.query(FooterKey)
            if key.display and not key.has_class("-command-palette") and key.region.right > right]


async def _keys_change_under(pilot: Any, cover: Screen[None]) -> KeyFooter:
    """Cover the main screen with ``cover``, then move its focus from the pane (one key) to the form
    (three keys, more than fit at 40 columns); the main screen's footer once composed with them."""
    app = pilot.app
    footer_widget = app.query_one(KeyFooter)
    pane, form = app.query_one(_Pane), app.query_one(_Form)
    pane.focus()
    await _footer_shows(pilot, footer_widget, "Pane key")
    main = app.screen
    await app.push_screen(cover)
    main.set_focus(form)  # the keys change under the cover
    await _footer_shows(pilot, footer_widget, "Save form")
    return footer_widget


async def test_keys_that_change_under_a_dialog_are_fitted_to_the_width() -> None:
    # the screen under a dialog is laid out only when it is drawn: its footer measures the new keys
    # after that layout, however long it takes, and never shows a key cut at the edge
    app = _FormApp()
    async with app.run_test(size=(40, 10)) as pilot:
        footer_widget = await _keys_change_under(pilot, _Dialog())
        await until(pilot, lambda: footer_widget.shows_current_keys, "the footer measured and fitted")
        assert [key.description for key in footer_widget.query(FooterKey) if not key.display], "a key is left out"
        assert _keys_past_the_edge(footer_widget) == []
        app.pop_screen()
        await until(pilot, lambda: footer_widget.shows_current_keys, "the footer as it shows again")
        assert _keys_past_the_edge(footer_widget) == []


async def test_keys_that_change_under_a_whole_screen_are_fitted_when_it_shows_again() -> None:
    # a screen hidden under another is not laid out at all: its footer measures when it shows
    app = _FormApp()
    async with app.run_test(size=(40, 10)) as pilot:
        footer_widget = await _keys_change_under(pilot, _Page())
        app.pop_screen()
        await until(pilot, lambda: footer_widget.shows_current_keys, "the footer measured and fitted")
        assert [key.description for key in footer_widget.query(FooterKey) if not key.display], "a key is left out"
        assert _keys_past_the_edge(footer_widget) == []
