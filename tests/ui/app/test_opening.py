"""Opening a project: the window first, the project right after; held plans and git on (re)open."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from pathlib import Path

from app_harness import demo_settings, posted, run_from_palette, screen_text, send, settle
from textual.app import App
from textual.command import CommandPalette
from waiting import HANG_LIMIT, until

from tunaflow_tui.app import TunaflowApp
from tunaflow_tui.controllers import ProjectOpener
from tunaflow_tui.core.gitops import is_git_repo
from tunaflow_tui.runtime.runtime import WorkflowRuntime
from tunaflow_tui.screens.decision_screen import DecisionScreen
from tunaflow_tui.subcommands.open_command import NOT_GIT_NOTE, open_project_app, run_app
from tunaflow_tui.widgets.composer import ComposerInput
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard
from tunaflow_tui.widgets.message_block import tools_summary

REQUEST = "Add a word frequency report"


def _notes(app) -> list[str]:
    return [n.message for n in posted(app)]


def _gated_app(project: Path, **settings_kw):
    """The app as `tunaflow PATH` builds it, with settings that load only when the test says so."""
    gate = threading.Event()

    def load():
        assert gate.wait(20)
        return demo_settings(project, **settings_kw)

    app = open_project_app(project, load, cursor_blink=False)
    assert isinstance(app.controller, ProjectOpener)
    return app, app.controller, gate


async def test_window_shows_before_the_project_and_a_message_sent_meanwhile_is_kept(demo_project) -> None:
    app, opener, gate = _gated_app(demo_project)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await until(pilot, lambda: "Opening project textstats" in screen_text(app), "Opening project textstats on screen")
            await until(pilot, lambda: "once the project is open" in screen_text(app), "once the project is open on screen")  # the composer says who will receive it
            assert not opener.is_open

            await pilot.press(*REQUEST)
            await pilot.press("enter")
            await pilot.pause()
            await until(pilot, lambda: "1 message waiting to be sent" in screen_text(app), "1 message waiting to be sent on screen")
            assert any("sent as soon as it is ready" in n for n in _notes(app))

            await pilot.press("f2")  # keys that need the project say so instead of doing nothing
            await run_from_palette(pilot, app, "Approve plan")
            await until(pilot, lambda: _notes(app).count("The project is still opening; try again in a moment.") >= 2,
                        "both refusals said")
            assert not isinstance(app.screen, CommandPalette)
            assert _notes(app).count("The project is still opening; try again in a moment.") >= 2

            gate.set()
            await opener.wait_opened()
            await settle(pilot, app)
            assert opener.is_open
            assert "Opening project" not in screen_text(app)
            await until(pilot, lambda: "Architect (demo)" in screen_text(app), "Architect (demo) on screen")
            card = app.focused
            assert isinstance(card, PlanProposalCard) and card.is_pending  # the queued message was sent
            [message] = [m for m in opener.session.store.list_messages("main") if m.role == "user"]
            assert message.content == REQUEST
    finally:
        opener.close()


async def test_history_appears_once_the_project_is_open(open_app, demo_project) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, "First question about textstats")
    runtime.close()

    reopened, opener, gate = _gated_app(demo_project)
    try:
        async with reopened.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert "First question about textstats" not in screen_text(reopened)
            gate.set()
            await opener.wait_idle(HANG_LIMIT)
            await pilot.pause()
            await until(pilot, lambda: "First question about textstats" in screen_text(reopened), "First question about textstats on screen")
            await until(pilot, lambda: "Main" in screen_text(reopened), "Main on screen")  # the sidebar arrived with the project
    finally:
        opener.close()


async def test_the_composer_has_the_cursor_while_the_project_opens(open_app, monkeypatch) -> None:
    # the screen gave the focus to the chat first, the composer got it once the project was open:
    # meanwhile the chat showed the focus and the footer the chat's keys
    app, _controller, runtime = open_app()
    focused_while_opening: list[object] = []
    catch_up = runtime.catch_up_records

    def catch_up_looking() -> None:  # a step of the project's opening
        focused_while_opening.append(app.focused)
        catch_up()

    monkeypatch.setattr(runtime, "catch_up_records", catch_up_looking)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "Main" in screen_text(app), "the sidebar, filled once the project is open")
        assert [type(widget) for widget in focused_while_opening] == [ComposerInput]
        assert isinstance(app.focused, ComposerInput)


async def test_a_project_that_cannot_be_opened_says_why(demo_project) -> None:
    def load():
        raise ValueError("config.toml line 3: unknown engine 'nope'")

    app = open_project_app(demo_project, load, cursor_blink=False)
    opener = app.controller
    async with app.run_test(size=(120, 40)) as pilot:
        await opener.wait_opened()
        await pilot.pause()
        assert "Cannot open textstats: config.toml line 3: unknown engine 'nope'" in screen_text(app)
        await pilot.press(*"hello", "enter")
        await pilot.pause()
        assert any(n.startswith("Not sent: Cannot open textstats") for n in _notes(app))
    opener.close()


def test_command_line_exits_with_the_error_when_the_project_cannot_be_opened(demo_project, monkeypatch,
                                                                             capsys) -> None:
    (demo_project / ".tunaflow").mkdir(exist_ok=True)
    (demo_project / ".tunaflow" / "config.toml").write_text("[ui]\nbell = 'loud'\n", encoding="utf-8")
    monkeypatch.setattr(TunaflowApp, "run", lambda self, **_kw: App.run(self, headless=True))
    assert run_app(demo_project, mouse=False) == 1  # the app stops by itself
    error = capsys.readouterr().err
    assert "tunaflow: Cannot open textstats" in error and "bell" in error


async def test_the_app_refuses_a_read_only_project_and_changes_nothing(demo_project, monkeypatch) -> None:
    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.core.storage import store as store_module

    with Store.open(demo_project) as store:
        store.add_message("main", "user", "written before")
    database = demo_project / ".tunaflow" / "state.db"
    before = database.read_bytes()
    # as the file system's read-only flag would say (the commands' tests mount a real one)
    monkeypatch.setattr(store_module, "read_only_reason", lambda _db: "the file system is mounted read-only")
    app = open_project_app(demo_project, lambda: demo_settings(demo_project), cursor_blink=False)
    opener = app.controller
    async with app.run_test(size=(120, 40)) as pilot:
        await opener.wait_opened()
        await pilot.pause()
        assert opener.error == ("Cannot open textstats: the project is read-only (the file system is mounted "
                                "read-only); tunaflow status, search, export and branch list can still read it")
        assert "the project is read-only" in screen_text(app)
    opener.close()
    assert database.read_bytes() == before


async def test_held_plan_comes_back_as_a_held_card_that_can_be_approved(open_app, at_approval) -> None:
    runtime = WorkflowRuntime(at_approval, demo_settings(at_approval))  # the proposal waits (seeded)
    try:
        [plan] = runtime.store.list_plans()
        await runtime.decide(plan.id, "hold")  # what the card's h key asks for
        assert runtime.store.list_plans()[0].phase == "held"
    finally:
        runtime.close()

    app2, _controller2, runtime2 = open_app()
    async with app2.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app2)
        [card] = list(app2.query(PlanProposalCard))
        assert card.view.decision == "hold"
        await until(pilot, lambda: "Add a word-frequency report to textstats" in screen_text(app2), "Add a word-frequency report to textstats on screen")
        assert app2.focused is not card  # held: it waits, it does not grab the focus
        card.focus()
        await pilot.press("a")
        await settle(pilot, app2)
        plan = runtime2.store.list_plans()[0]
        assert plan.phase not in ("held", "approval")
        assert plan.pending_decision == "review"


def _plain_project(tmp_path: Path) -> Path:
    plain = tmp_path / "notes"
    plain.mkdir()
    (plain / "todo.txt").write_text("write the report\n", encoding="utf-8")
    return plain


async def test_without_git_the_app_offers_to_initialise_and_commits_the_files(open_app, tmp_path) -> None:
    plain = _plain_project(tmp_path)
    app, _controller, runtime = open_app(project=plain, settings=demo_settings(plain), notes=(NOT_GIT_NOTE,))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DecisionScreen)
        await until(pilot, lambda: "is not a git repository" in screen_text(app), "is not a git repository on screen")
        await pilot.press("i")
        await until(pilot, lambda: any("Initialised a git repository" in n for n in _notes(app)),
                    "the git repository initialised")
        await until(pilot, lambda: NOT_GIT_NOTE not in screen_text(app), "the no-git note gone from the screen")
        assert runtime.is_git
        assert NOT_GIT_NOTE not in screen_text(app)
        assert any("Initialised a git repository" in n for n in _notes(app))
    assert is_git_repo(plain)
    tracked = subprocess.run(["git", "-C", str(plain), "ls-files"], capture_output=True, text=True,
                             check=True).stdout.split()
    assert tracked == ["todo.txt"]  # the files are committed, tunaflow's own folder is not
    assert subprocess.run(["git", "-C", str(plain), "status", "--porcelain"], capture_output=True,
                          text=True, check=True).stdout == ""


async def test_without_git_declining_keeps_the_no_isolation_note(open_app, tmp_path) -> None:
    plain = _plain_project(tmp_path)
    app, _controller, runtime = open_app(project=plain, settings=demo_settings(plain), notes=(NOT_GIT_NOTE,))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DecisionScreen)
        await pilot.press("c")
        await pilot.pause()
        assert not isinstance(app.screen, DecisionScreen)
        await until(pilot, lambda: "no isolation and no merge step" in screen_text(app), "no isolation and no merge step on screen")
        assert not runtime.is_git
    assert not (plain / ".git").exists()
    runtime.close()

    # reopened: not asked again; the palette sets git up when the user changes their mind
    again, controller, runtime = open_app(project=plain, settings=demo_settings(plain), notes=(NOT_GIT_NOTE,))
    async with again.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await pilot.pause()
        assert not isinstance(again.screen, DecisionScreen)
        await until(pilot, lambda: "no isolation and no merge step" in screen_text(again), "no isolation and no merge step on screen")
        controller.project.initialise_git()
        await until(pilot, lambda: runtime.is_git, "the git repository initialised")
        assert runtime.is_git
    assert is_git_repo(plain) and not (plain / ".tunaflow" / "git-declined").exists()


def test_no_mouse_reaches_the_terminal_driver(demo_project: Path, monkeypatch) -> None:
    """`--no-mouse` and `[ui] mouse = false` leave the mouse to the terminal; by default the app takes it."""
    seen: list[object] = []
    monkeypatch.setattr(App, "run", lambda self, *args, **kwargs: seen.append(kwargs.get("mouse", True)))
    assert run_app(demo_project, mouse=False) == 0
    assert run_app(demo_project, mouse=True) == 0
    config = demo_project / ".tunaflow" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text("[ui]\nmouse = false\n")
    assert run_app(demo_project, mouse=True) == 0
    assert seen == [False, True, False]


async def test_tools_an_agent_used_are_shown_again_after_a_restart(open_app) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, REQUEST)
        live = [block.view.tools for block in app.chat_view.blocks() if block.view.role == "assistant"][-1]
        assert live, "the Architect read the code before proposing"
    runtime.close()

    again, _controller, _runtime = open_app()
    async with again.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        answer = [block for block in again.chat_view.blocks() if block.view.role == "assistant"][-1]
        assert answer.view.tools == live
        assert tools_summary(live) in screen_text(again)


async def test_a_pending_review_verdict_comes_back_after_a_restart(open_app, at_review) -> None:
    # approved, implemented and reviewed by an earlier run of tunaflow (seeded once, headless), which ended
    again, _controller, runtime = open_app(project=at_review)
    assert runtime.store.list_plans()[0].pending_decision == "review"
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        [card] = list(again.query(ReviewVerdictCard))
        assert card.view.decision is None and "Plan 1 review waiting" in screen_text(again)
        await pilot.press("f2")
        assert again.focused is card
        await pilot.press("a")
        await settle(pilot, again)
        assert runtime.store.list_plans()[0].phase == "done"


async def test_what_the_first_frame_and_the_opened_project_loaded_is_kept_out_of_full_collections(
        demo_project, monkeypatch) -> None:
    import gc

    from tunaflow_tui import heap

    monkeypatch.setattr(heap, "_frozen", set())  # as in a fresh process
    before = gc.get_freeze_count()
    app = open_project_app(demo_project, load=lambda: demo_settings(demo_project), cursor_blink=False)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: "first frame" in heap._frozen, "frozen after the first frame")
            await app.controller.wait_opened()
            await until(pilot, lambda: "project open" in heap._frozen, "frozen once the project is open")
            assert gc.get_freeze_count() > before
            frozen = gc.get_freeze_count()
            assert not heap.freeze_loaded("project open")  # once per stage: nothing more is kept for good
            assert gc.get_freeze_count() == frozen
    finally:
        app.controller.close()


async def test_what_the_runtime_says_while_the_conversation_loads_reaches_the_screen(demo_project) -> None:
    """The runtime talks from the moment the project's session is attached, before the conversation
    is on screen: a notice it raises then is shown once the project is open (not dropped, and not left
    counted as pending, which kept waiting for the screen to catch up for ever)."""
    from tunaflow_tui.runtime.events import NoticeRaised
    from tunaflow_tui.widgets.chat_view import ChatView

    app, opener, gate = _gated_app(demo_project)
    chat_reload = ChatView.reload

    async def reload_while_the_runtime_talks(view, source):  # type: ignore[no-untyped-def]
        runtime = opener.runtime
        assert runtime is not None
        runtime.emit(NoticeRaised("The embedding model is loading in the background.", "warning"))
        deadline = asyncio.get_running_loop().time() + HANG_LIMIT
        while not opener.held_updates:  # the app took the notice while the conversation still loads
            assert asyncio.get_running_loop().time() < deadline, "the notice never reached the app"
            await asyncio.sleep(0.01)
        await chat_reload(view, source)

    try:
        async with app.run_test(size=(120, 40)) as pilot:
            app.chat_view.reload = reload_while_the_runtime_talks.__get__(app.chat_view)
            gate.set()
            await opener.wait_idle(HANG_LIMIT)
            await until(pilot, lambda: any("embedding model is loading" in n.message for n in posted(app)),
                        "the notice raised while the conversation loaded")
    finally:
        opener.close()


def test_the_cycle_collector_waits_for_the_first_frame_and_runs_again_after_it(demo_project, monkeypatch) -> None:
    """`tunaflow PATH` loads Textual and the app and draws the window without cycle collections (a
    hundred of them, whose survivors live as long as the process); they run again once it is up."""
    import gc

    from tunaflow_tui import heap

    monkeypatch.setattr(heap, "_frozen", set())  # as in a fresh process
    seen: dict[str, bool] = {}

    async def after_first_frame(pilot) -> None:
        await until(pilot, lambda: "first frame" in heap._frozen, "the first frame")
        seen["after the first frame"] = gc.isenabled()
        pilot.app.exit()

    def run(self, **_kw):
        seen["while the window is built"] = gc.isenabled()
        return App.run(self, headless=True, auto_pilot=after_first_frame)

    monkeypatch.setattr(TunaflowApp, "run", run)
    try:
        assert run_app(demo_project, lambda: demo_settings(demo_project), mouse=False) == 0
        assert seen == {"while the window is built": False, "after the first frame": True}
        assert gc.isenabled()
    finally:
        gc.enable()
