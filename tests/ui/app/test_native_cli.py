"""“Open native CLI” handing the terminal over (``[ui] native_cli = "suspend"``, or served in a browser):
the app steps aside and the engine's own CLI resumes the conversation's session."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from app_harness import demo_settings, posted, run_from_palette
from textual.drivers.headless_driver import HeadlessDriver
from waiting import until

from tunaflow_tui.core.settings import EngineConfig

FAKE_CLAUDE = """#!/bin/sh
printf '%s\\n' "$PWD" > "$TUNAFLOW_TEST_RECORD"
for arg in "$@"; do printf '%s\\n' "$arg" >> "$TUNAFLOW_TEST_RECORD"; done
exit 0
"""


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `claude` first on PATH that writes its working directory and argv to a file and exits."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "claude"
    script.write_text(FAKE_CLAUDE, encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    record = tmp_path / "claude-argv.txt"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TUNAFLOW_TEST_RECORD", str(record))
    return record


def _with_claude(project: Path, native_cli: str = "suspend"):
    settings = demo_settings(project)
    claude = EngineConfig(name="claude", type="claude", model="sonnet")
    ui = settings.ui.model_copy(update={"native_cli": native_cli})
    return settings.model_copy(update={"engines": {**settings.engines, "claude": claude}, "ui": ui})


async def _palette(pilot, name: str) -> None:
    await run_from_palette(pilot, pilot.app, name)


async def test_open_native_cli_suspends_the_app_and_resumes_the_session(open_app, demo_project, fake_claude,
                                                                      monkeypatch) -> None:
    # the test terminal is headless; let it be handed over like a real one
    monkeypatch.setattr(HeadlessDriver, "can_suspend", property(lambda self: True))
    app, _controller, runtime = open_app(settings=_with_claude(demo_project))
    runtime.store.set_native_session("main", "claude", "sess-42")
    events: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        app.app_suspend_signal.subscribe(app, lambda _app: events.append("suspended"))
        app.app_resume_signal.subscribe(app, lambda _app: events.append("resumed"))
        await _palette(pilot, "Open native CLI")
        await until(pilot, lambda: "resumed" in events or posted(app), "the app back from the CLI")
        assert fake_claude.exists(), [n.message for n in posted(app)]
        cwd, *argv = fake_claude.read_text(encoding="utf-8").splitlines()
        assert argv == ["--resume", "sess-42", "--model", "sonnet"]
        assert Path(cwd).resolve() == demo_project.resolve()
        assert events[:2] == ["suspended", "resumed"]
        assert app.is_running and app.screen is app.screen_stack[0]


async def test_open_native_cli_without_a_session_says_to_send_first(open_app, demo_project, fake_claude,
                                                                   monkeypatch) -> None:
    monkeypatch.setattr(HeadlessDriver, "can_suspend", property(lambda self: True))
    app, _controller, _runtime = open_app(settings=_with_claude(demo_project))
    async with app.run_test(size=(120, 40)) as pilot:
        await _palette(pilot, "Open native CLI")
        await until(pilot, lambda: posted(app), "a notification")
        assert not fake_claude.exists()
        assert "This conversation has no native session yet: send a message first." in [
            n.message for n in posted(app)]


async def test_open_native_cli_where_the_terminal_cannot_be_handed_over(open_app, demo_project,
                                                                      fake_claude) -> None:
    app, _controller, runtime = open_app(settings=_with_claude(demo_project))
    runtime.store.set_native_session("main", "claude", "sess-42")
    async with app.run_test(size=(120, 40)) as pilot:
        await _palette(pilot, "Open native CLI")
        await until(pilot, lambda: posted(app), "a notification")
        assert not fake_claude.exists()
        assert "This terminal cannot be handed over to another program." in [
            n.message for n in posted(app)]



async def test_served_in_a_browser_the_terminal_is_handed_over_even_where_the_pane_is_chosen(
        open_app, demo_project, fake_claude, monkeypatch) -> None:
    from tunaflow_tui.app import TunaflowApp

    monkeypatch.setattr(HeadlessDriver, "can_suspend", property(lambda self: True))
    monkeypatch.setattr(TunaflowApp, "is_web", property(lambda self: True))
    app, controller, runtime = open_app(settings=_with_claude(demo_project, native_cli="pane"))
    runtime.store.set_native_session("main", "claude", "sess-42")
    events: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        app.app_resume_signal.subscribe(app, lambda _app: events.append("resumed"))
        await _palette(pilot, "Open native CLI")
        await until(pilot, lambda: "resumed" in events or posted(app), "the app back from the CLI")
        assert fake_claude.exists(), [n.message for n in posted(app)]
        assert events == ["resumed"]  # the terminal was handed over, not a pane opened
        assert controller.native.live == {}


async def test_a_branch_hands_over_in_its_worktree(open_app, demo_project, fake_claude, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(HeadlessDriver, "can_suspend", property(lambda self: True))
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    app, controller, runtime = open_app(settings=_with_claude(demo_project))
    branch = runtime.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                         mode="chat", kind="general", label="side", worktree_path=str(worktree))
    runtime.store.set_native_session(f"branch:{branch.id}", "claude", "sess-b")
    async with app.run_test(size=(120, 40)) as pilot:
        await controller.panes.open_branch(branch.id, focus=True)
        await until(pilot, lambda: controller.conversation_in_focus() == f"branch:{branch.id}", "the branch in focus")
        controller.tools.open_native_cli()
        await until(pilot, lambda: fake_claude.exists() or posted(app), "the CLI run")
        cwd, *argv = fake_claude.read_text(encoding="utf-8").splitlines()
        assert Path(cwd).resolve() == worktree.resolve()
        assert argv == ["--resume", "sess-b", "--model", "sonnet"]
