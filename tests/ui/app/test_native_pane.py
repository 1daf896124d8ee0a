"""“Open native CLI” in a terminal pane: the engine's CLI (the stand-in TUI, configured as claude) resumes the
conversation's session in its folder, inside the app; leaving and coming back; its end recorded and resumed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from app_harness import demo_settings, posted, run_from_palette, screen_text
from terminal_rig import TTY_APP
from waiting import until

from tunaflow_tui.core.settings import EngineConfig
from tunaflow_tui.runtime import since
from tunaflow_tui.runtime.native_sessions import NATIVE_RECORD_KIND
from tunaflow_tui.widgets.terminal_pane import TerminalPane

LIMIT = 60.0


@pytest.fixture
def stand_in_claude(tmp_path: Path) -> Path:
    """An executable `claude` that is the stand-in TUI (run with this Python)."""
    script = tmp_path / "claude"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {TTY_APP} \"$@\"\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def _settings(project: Path, command: Path):
    settings = demo_settings(project)
    claude = EngineConfig(name="claude", type="claude", model="sonnet", command=str(command))
    return settings.model_copy(update={"engines": {**settings.engines, "claude": claude}})


def _pane(app) -> TerminalPane | None:
    found = app.workspace.pane.query(TerminalPane)
    return found.first() if found else None


def _screen(app) -> str:
    pane = _pane(app)
    return "\n".join(pane.session.emulator.display) if pane is not None else ""


async def _open_native_cli(pilot, app, what: str = "the CLI's first screen") -> None:
    """The palette's "Open native CLI", until the stand-in has drawn its first screen in the pane."""
    await run_from_palette(pilot, app, "Open native CLI")
    await until(pilot, lambda: "ready" in _screen(app), what, LIMIT)


async def test_the_native_cli_opens_in_the_pane_resumed_in_the_project_and_takes_keys(
        open_app, demo_project, stand_in_claude, tmp_path, monkeypatch) -> None:
    record = tmp_path / "cli-record.txt"
    monkeypatch.setenv("TTY_APP_RECORD", str(record))
    app, controller, runtime = open_app(settings=_settings(demo_project, stand_in_claude))
    runtime.store.set_native_session("main", "claude", "sess-42")
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await _open_native_cli(pilot, app, "the CLI's first screen in the pane")
            pane = _pane(app)
            assert pane is not None and app.focused is pane
            assert app.workspace.mode != "hidden"
            text = _screen(app)
            assert "tty-app --resume sess-42 --model sonnet" in text
            cwd, *argv, alt_screen = record.read_text(encoding="utf-8").splitlines()
            assert Path(cwd).resolve() == demo_project.resolve()
            assert argv == ["--resume", "sess-42", "--model", "sonnet"]
            assert alt_screen == "alt-screen-off=1"  # claude kept on the primary screen: the pane's scrollback works
            assert "sess-42" in str(app.workspace.pane.query_one("#branch-header").render())
            await pilot.press("h", "i")
            await until(pilot, lambda: "key: b'i'" in _screen(app), "typed keys reaching the CLI", LIMIT)
            # the leave key: back to the composer, the CLI runs on
            await pilot.press("ctrl+right_square_bracket")
            await until(pilot, lambda: app.focused is app.composer.input, "the composer focused", LIMIT)
            assert pane.session.running
            # opening it again shows the same session, not a second one
            await run_from_palette(pilot, app, "Open native CLI")
            await until(pilot, lambda: isinstance(app.focused, TerminalPane), "the pane focused again", LIMIT)
            assert _pane(app).session is pane.session
            assert list(controller.native.live) == ["main"]
        finally:
            await controller.native.close_all()


async def test_when_the_native_cli_ends_the_conversation_records_it_and_the_next_turn_resumes_it(
        open_app, demo_project, stand_in_claude) -> None:
    app, controller, runtime = open_app(settings=_settings(demo_project, stand_in_claude))
    runtime.store.set_native_session("main", "claude", "sess-42")
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await _open_native_cli(pilot, app)
            pane = _pane(app)
            await pilot.press("q")
            records = lambda: [m for m in runtime.store.list_messages("main")  # noqa: E731
                               if (m.meta or {}).get("kind") == NATIVE_RECORD_KIND]
            await until(pilot, records, "the record of the ended session", LIMIT)
            record = records()[0]
            assert record.content.startswith("native session, under 1 min, ended (exit code 3): claude session "
                                             "`sess-42`")
            assert record.meta["session_id"] == "sess-42"
            await until(pilot, lambda: "native session, under 1 min, ended" in screen_text(app), "the record in the chat",
                        LIMIT)
            assert any("native claude session ended" in n.message for n in posted(app))
            assert pane.ended and pane.has_class("-ended")
            assert controller.native.live == {}
            assert since.session_to_resume(runtime, "main", "claude") == "sess-42"
        finally:
            await controller.native.close_all()


async def test_without_a_session_the_pane_does_not_open_and_says_why(open_app, demo_project, stand_in_claude) -> None:
    app, controller, _runtime = open_app(settings=_settings(demo_project, stand_in_claude))
    async with app.run_test(size=(120, 40)) as pilot:
        await run_from_palette(pilot, app, "Open native CLI")
        await until(pilot, lambda: posted(app), "a notification", LIMIT)
        assert "This conversation has no native session yet: send a message first." in [
            n.message for n in posted(app)]
        assert _pane(app) is None and controller.native.live == {}


async def test_a_branchs_native_cli_runs_in_its_worktree_with_a_live_mark_in_the_sidebar(
        open_app, demo_project, stand_in_claude, tmp_path, monkeypatch) -> None:
    record = tmp_path / "cli-record.txt"
    monkeypatch.setenv("TTY_APP_RECORD", str(record))
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    app, controller, runtime = open_app(settings=_settings(demo_project, stand_in_claude))
    branch = runtime.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                         mode="chat", kind="general", label="try it natively",
                                         worktree_path=str(worktree))
    runtime.store.set_native_session(f"branch:{branch.id}", "claude", "sess-b")
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            sidebar_text = lambda: screen_text(app)  # noqa: E731
            await until(pilot, lambda: "try it natively" in sidebar_text(), "the branch in the sidebar", LIMIT)
            assert "● try it natively" not in sidebar_text()
            controller.native.open(f"branch:{branch.id}")
            await until(pilot, lambda: "ready" in _screen(app), "the branch's CLI in the pane", LIMIT)
            cwd, *_rest = record.read_text(encoding="utf-8").splitlines()
            assert Path(cwd).resolve() == worktree.resolve()
            await until(pilot, lambda: "● try it natively" in sidebar_text(), "the live mark", LIMIT)
            await pilot.press("q")
            await until(pilot, lambda: "● try it natively" not in sidebar_text(), "the live mark gone", LIMIT)
            assert any(m.content.startswith("native session") for m in runtime.store.list_messages(
                f"branch:{branch.id}"))
        finally:
            await controller.native.close_all()


async def test_a_running_native_cli_is_listed_live_in_the_sidebar_and_picking_it_brings_its_pane_back(
        open_app, demo_project, stand_in_claude) -> None:
    from tunaflow_tui.widgets.sidebar import SidebarTree

    app, controller, runtime = open_app(settings=_settings(demo_project, stand_in_claude))
    runtime.store.set_native_session("main", "claude", "sess-42")
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await until(pilot, lambda: "Conversations" in screen_text(app), "the sidebar", LIMIT)
            assert "Live sessions" not in screen_text(app)
            await _open_native_cli(pilot, app)  # the main conversation's CLI
            session = _pane(app).session
            await until(pilot, lambda: "Live sessions 1" in screen_text(app), "the live session listed", LIMIT)
            assert "● Main  claude" in screen_text(app)
            # back in tunaflow, the pane put away: the CLI runs on, still listed
            await pilot.press("ctrl+right_square_bracket")
            await until(pilot, lambda: app.focused is app.composer.input, "the composer focused", LIMIT)
            app.show_branch_pane(False)
            await until(pilot, lambda: app.workspace.mode == "hidden", "the pane hidden", LIMIT)
            tree = app.query_one(SidebarTree)
            tree.focus()
            await pilot.press("home", "down", "enter")  # "Live sessions", then Main's CLI
            await until(pilot, lambda: isinstance(app.focused, TerminalPane), "the CLI's pane focused", LIMIT)
            assert app.workspace.mode != "hidden" and _pane(app).session is session
            await pilot.press("q")  # the CLI ends: the live session goes from the sidebar
            await until(pilot, lambda: "Live sessions" not in screen_text(app), "the live session gone", LIMIT)
            assert controller.native.live == {}
        finally:
            await controller.native.close_all()


async def test_end_native_cli_asks_first_then_ends_a_cli_that_ignores_hangup_and_records_it(
        open_app, demo_project, stand_in_claude, monkeypatch) -> None:
    from tunaflow_tui.screens.branch_dialogs import ConfirmBranchScreen

    monkeypatch.setenv("TTY_APP_STUBBORN", "1")
    app, controller, runtime = open_app(settings=_settings(demo_project, stand_in_claude))
    runtime.store.set_native_session("main", "claude", "sess-42")
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await _open_native_cli(pilot, app)
            session = _pane(app).session
            await pilot.press("ctrl+right_square_bracket")  # out of the pane: its keys (ctrl+p too) are the CLI's
            await until(pilot, lambda: app.focused is app.composer.input, "the composer focused", LIMIT)
            await run_from_palette(pilot, app, "End native CLI")
            await until(pilot, lambda: isinstance(app.screen, ConfirmBranchScreen), "the question", LIMIT)
            await pilot.press("n")  # kept
            await until(pilot, lambda: not isinstance(app.screen, ConfirmBranchScreen), "the question gone", LIMIT)
            assert session.running
            await run_from_palette(pilot, app, "End native CLI")
            await until(pilot, lambda: isinstance(app.screen, ConfirmBranchScreen), "the question again", LIMIT)
            await pilot.press("y")
            await until(pilot, lambda: session.ended, "the CLI ended", LIMIT)
            assert session.exit_code == -9  # it ignored SIGHUP and SIGTERM
            await until(pilot, lambda: any(m.content.startswith("native session") and "ended by signal 9" in m.content
                                           for m in runtime.store.list_messages("main")), "the record", LIMIT)
        finally:
            await controller.native.close_all()


async def test_a_message_to_a_conversation_whose_native_cli_runs_is_not_sent(
        open_app, demo_project, stand_in_claude) -> None:
    from app_harness import send

    app, controller, runtime = open_app(settings=_settings(demo_project, stand_in_claude))
    runtime.store.set_native_session("main", "claude", "sess-42")
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await _open_native_cli(pilot, app)
            await pilot.press("ctrl+right_square_bracket")
            await until(pilot, lambda: app.focused is app.composer.input, "the composer focused", LIMIT)
            before = len(runtime.store.list_messages("main"))
            await send(pilot, app, "hello while it runs")
            await until(pilot, lambda: any(n.message.startswith("Not sent: the native CLI is live")
                                           for n in posted(app)), "the refusal", LIMIT)
            assert len(runtime.store.list_messages("main")) == before
            conversation = runtime.store.get_conversation("main")
            assert conversation is not None and conversation.native_session_id == "sess-42"
        finally:
            await controller.native.close_all()
