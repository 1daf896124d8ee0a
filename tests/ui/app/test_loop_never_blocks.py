"""Nothing slow runs on the event loop: git, the project's tests and context packs run in threads.

Every blocking subprocess call (``subprocess.run``, ``Popen.wait`` / ``communicate``) and every
context-pack build made while the app runs is recorded with the thread it ran on. A plan driven
from request to merge with the keyboard, the workflow view and the context pack opened on the
way, must never make one on the event loop's thread — where it would freeze the screen for as
long as git or the tests take. Opening a project (with agents an earlier tunaflow left and a
decision record to write) and adopting a branch with commits are watched too, for the leftover
scan of ``/proc`` and for database writes as well.
"""

from __future__ import annotations

import subprocess
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from app_harness import demo_settings, posted, run_from_palette, screen_text, send, settle
from branch_seeds import fork_seeded, open_in_pane, seed_branch, seed_main
from run_phases import group_alive, kill_groups, leave_agent_running
from waiting import HANG_LIMIT, until, until_sync

from tunaflow_tui.controllers.opener import ProjectOpener
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.access import DatabaseAccess
from tunaflow_tui.core.workflow import Hold
from tunaflow_tui.core.workflow.phases import Actor
from tunaflow_tui.runtime.context_builder import ContextBuilder
from tunaflow_tui.runtime.runtime import WorkflowRuntime
from tunaflow_tui.screens.pickers import ContextPackScreen
from tunaflow_tui.screens.workflow import WorkflowScreen
from tunaflow_tui.subcommands.open_command import open_project_app
from tunaflow_tui.widgets.decision.done_card import DoneCard


class LoopWatch:
    """Records blocking calls made on the event loop's thread."""

    def __init__(self) -> None:
        self.loop_thread: int | None = None
        self.on_loop: list[str] = []

    def wrap(self, name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def watched(*args: Any, **kwargs: Any) -> Any:
            if self.loop_thread is not None and threading.get_ident() == self.loop_thread:
                where = "".join(traceback.format_stack(limit=8)[:-1])
                self.on_loop.append(f"{name} {args[:2]!r}\n{where}")
            return real(*args, **kwargs)

        return watched


@pytest.fixture
def loop_watch(monkeypatch: pytest.MonkeyPatch) -> LoopWatch:
    watch = LoopWatch()
    monkeypatch.setattr(subprocess, "run", watch.wrap("subprocess.run", subprocess.run))
    monkeypatch.setattr(subprocess.Popen, "wait", watch.wrap("Popen.wait", subprocess.Popen.wait))
    monkeypatch.setattr(subprocess.Popen, "communicate", watch.wrap("Popen.communicate", subprocess.Popen.communicate))
    monkeypatch.setattr(ContextBuilder, "build", watch.wrap("ContextBuilder.build", ContextBuilder.build))
    return watch


async def test_a_whole_plan_from_the_keyboard_never_blocks_the_loop(open_app, loop_watch: LoopWatch) -> None:
    app, _controller, _runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        loop_watch.loop_thread = threading.get_ident()
        await send(pilot, app, "Add a word frequency report")
        await pilot.press("a")  # approve: the worktree, the Developer, the tests, the review
        await settle(pilot, app)
        await pilot.press("f3")  # the workflow view reads every plan's documents and usage
        await settle(pilot, app)
        assert isinstance(app.screen, WorkflowScreen)
        await pilot.press("escape")
        await pilot.press("f2")
        await settle(pilot, app)
        await pilot.press("a")  # accept: the result document is committed
        await settle(pilot, app)
        card = app.focused
        assert isinstance(card, DoneCard)
        await pilot.press("m")  # merge: git in the project, then the worktree goes
        await settle(pilot, app)
        assert card.view.merged == "fast-forward"
        app.controller.tools.show_context_pack()
        await settle(pilot, app)
        assert isinstance(app.screen, ContextPackScreen)
    assert loop_watch.on_loop == [], "blocking work ran on the event loop:\n\n" + "\n\n".join(loop_watch.on_loop)


def _watch_startup(monkeypatch: pytest.MonkeyPatch, watch: LoopWatch) -> None:
    """Also record the leftover scan of ``/proc``, theme files read and every database write made on the loop."""
    from tunaflow_tui import themes
    from tunaflow_tui.runtime import leftovers

    monkeypatch.setattr(leftovers, "group_alive", watch.wrap("group_alive (/proc)", leftovers.group_alive))
    monkeypatch.setattr(themes, "load_theme_file", watch.wrap("theme file read", themes.load_theme_file))
    real_writing = DatabaseAccess.writing

    def writing(access: DatabaseAccess) -> Any:
        watch.wrap("database write", lambda: None)()
        return real_writing(access)

    monkeypatch.setattr(DatabaseAccess, "writing", writing)


async def test_opening_a_project_with_leftovers_and_a_decision_to_record_never_blocks_the_loop(
        demo_project: Path, at_approval: Path, loop_watch: LoopWatch, monkeypatch: pytest.MonkeyPatch) -> None:
    # an earlier tunaflow decided (hold) and stopped before writing the record, and left two agents:
    # one still runs, one has ended since (its row is deleted on sight)
    running = leave_agent_running(demo_project)
    ended = leave_agent_running(demo_project)
    try:
        runtime = WorkflowRuntime(at_approval, demo_settings(at_approval))
        try:
            [plan] = runtime.store.list_plans()
            runtime.service.apply(plan.id, Hold(), actor=Actor.USER)
        finally:
            runtime.close()
        kill_groups([ended])
        until_sync(lambda: not group_alive(ended), "the ended agent's group to go")
        _watch_startup(monkeypatch, loop_watch)
        app = open_project_app(demo_project, lambda: demo_settings(demo_project), cursor_blink=False)
        opener = app.controller
        assert isinstance(opener, ProjectOpener)
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                loop_watch.loop_thread = threading.get_ident()
                await opener.wait_opened(HANG_LIMIT)
                await until(pilot, lambda: any("Still running: the architect agent" in str(n.message)
                                               for n in posted(app)), "the leftover agent named")
                await until(pilot, lambda: "You put plan 1" in screen_text(app), "the hold's record in the chat")
                loop_watch.loop_thread = None
                with Store.open(demo_project) as store:
                    assert [r.identity.pid for r in store.list_processes()] == [running]
        finally:
            opener.close()
    finally:
        kill_groups([running, ended])
    assert loop_watch.on_loop == [], "blocking work ran on the event loop:\n\n" + "\n\n".join(loop_watch.on_loop)


async def test_adopting_a_branch_with_commits_never_blocks_the_loop(open_app, loop_watch: LoopWatch) -> None:
    from tunaflow_tui.screens.adopt_editor import AdoptEditorScreen
    from tunaflow_tui.widgets.decision.records.adopt_record import AdoptCard

    app, _session, runtime = open_app()
    worktree = runtime.project_dir.parent / "wt-feature"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "-C", str(runtime.project_dir), "worktree", "add", "-q", "-b", "tunaflow/feature",
                    str(worktree)], check=True)
    (worktree / "auth.py").write_text("def login():\n    return 'pkce'\n")
    subprocess.run([*git, "-C", str(worktree), "add", "auth.py"], check=True)
    subprocess.run([*git, "-C", str(worktree), "commit", "-q", "-m", "auth"], check=True)
    ids = seed_main(runtime)
    branch_id = fork_seeded(runtime, ids[1], "auth work")
    runtime.store.update_branch(branch_id, git_branch="tunaflow/feature", worktree_path=str(worktree))
    seed_branch(runtime, branch_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_in_pane(pilot, app, branch_id)
        loop_watch.loop_thread = threading.get_ident()
        await run_from_palette(pilot, app, "Adopt branch")
        await until(pilot, lambda: isinstance(app.screen, AdoptEditorScreen), "the adopt editor")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.chat_view.query(AdoptCard), "the adopt card in main")
        loop_watch.loop_thread = None
    record = runtime.store.list_messages("main", limit=100)[-1]
    assert "auth.py" in str(record.meta["diff_stat"]), "the card carries the branch's diff stat"
    assert loop_watch.on_loop == [], "blocking work ran on the event loop:\n\n" + "\n\n".join(loop_watch.on_loop)
