"""Nothing slow runs on the event loop: git, the project's tests and context packs run in threads.

Every blocking subprocess call (``subprocess.run``, ``Popen.wait`` / ``communicate``) and every
context-pack build made while the app runs is recorded with the thread it ran on. A plan driven
from request to merge with the keyboard, the workflow view and the context pack opened on the
way, must never make one on the event loop's thread — where it would freeze the screen for as
long as git or the tests take.
"""

from __future__ import annotations

import subprocess
import threading
import traceback
from collections.abc import Callable
from typing import Any

import pytest
from app_harness import send, settle

from tunaflow_tui.runtime.context_builder import ContextBuilder
from tunaflow_tui.screens.pickers import ContextPackScreen
from tunaflow_tui.screens.workflow import WorkflowScreen
from tunaflow_tui.widgets.done_card import DoneCard


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
