"""A failed worktree setup in a real terminal: open a shell in the worktree, fix it, come back, retry."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

SETUP = 'test -f "$TUNAFLOW_PROJECT/../setup-fixed" || { echo "setup needs a token" >&2; exit 3; }'
QUESTION = "Worktree setup failed"


def _press_until(session: Any, key: str, done: Callable[[str], bool], timeout: float = 60.0) -> str:
    """Press ``key`` until ``done(screen)``: a card or question that came up on its own takes its keys
    only after a moment, and a user presses again then."""
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        session.press(key)
        again = time.monotonic() + 2.0
        while time.monotonic() < again:
            screen = session.screen()
            if done(screen):
                return screen
            time.sleep(0.1)
    pytest.fail(f"pressing {key!r} never got there; the screen:\n{screen}")


def _poll(session: Any, done: Callable[[str], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if done(session.screen()):
            return True
        time.sleep(0.1)
    return False


def _approve(session: Any) -> None:
    """f2 then a, as a user does; an a that reached the composer while the card was arming is erased."""
    for _ in range(10):
        session.press("F2")
        session.wait_for("a r h Decide", timeout=30)
        session.press("a")
        if _poll(session, lambda s: QUESTION in s or "[dev] Add a wor" in s, 3.0):
            return
        if "⏎ Send" in session.screen():
            session.press("BSpace")
    pytest.fail(f"the proposal was never approved; the screen:\n{session.screen()}")


def test_open_a_shell_fix_the_setup_and_retry(demo: Callable[[int, int], Any], e2e_env: dict[str, str],
                                             tmp_path: Path, quit_demo: Callable[[Any], None]) -> None:
    e2e_env.update(TUNAFLOW_WORKFLOW__WORKTREE_SETUP=SETUP, SHELL="/bin/sh", PS1="fix-it$ ")
    session = demo(120, 40)  # the terminal takes the environment above
    session.send_text("add a word frequency report")
    session.press("Enter")
    session.wait_for("a approve", timeout=60)
    _approve(session)
    screen = session.wait_for(lambda s: QUESTION in s and "setup needs a token" in s, timeout=60)
    assert "Open a shell (o)" in screen and "Retry (r)" in screen and "Skip setup (s)" in screen

    _press_until(session, "o", lambda s: "fix-it$" in s)
    [demo_root] = tmp_path.glob("tunaflow-demo-*")
    session.send_text(f'pwd > "{demo_root}/shell-cwd"; touch "$TUNAFLOW_PROJECT/../setup-fixed"; exit')
    session.press("Enter")
    session.wait_for(QUESTION, timeout=30)  # back in the app, the question is asked again
    shell_cwd = (demo_root / "shell-cwd").read_text().strip()
    assert re.search(r"/worktrees/.+/add-a-word-frequency-report", shell_cwd), shell_cwd

    _press_until(session, "r", lambda s: QUESTION not in s)
    verdict = session.wait_for("Review verdict", timeout=120)
    assert re.search(r"\bPASS\b", verdict), verdict
    assert "Traceback" not in verdict
    quit_demo(session)
