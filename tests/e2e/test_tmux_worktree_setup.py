"""A failed worktree setup in a real terminal: open a shell in the worktree, fix it, come back, retry."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tunaflow_tui.widgets.decision.arming import ARMING_SECONDS

pytestmark = pytest.mark.e2e

SETUP = 'test -f "$TUNAFLOW_PROJECT/../setup-fixed" || { echo "setup needs a token" >&2; exit 3; }'
QUESTION = "Worktree setup failed"


def _refused(screen: str) -> bool:
    """The card or question said its keys are not armed yet (PRESS_AGAIN or TYPED_BACK, as a toast)."""
    return "armed in a moment" in screen or "appeared while" in screen


def _press_until(session: Any, key: str, done: Callable[[str], bool], timeout: float = 60.0) -> str:
    """Press ``key`` until ``done(screen)``. A card or question that came up on its own refuses keys
    for a moment and says so; the user waits that moment (:data:`ARMING_SECONDS` from the refusal,
    real seconds in a real terminal) and presses again, which then acts."""
    session.press(key)
    screen = session.wait_for(lambda s: done(s) or _refused(s), timeout=timeout)
    if done(screen):
        return screen
    time.sleep(ARMING_SECONDS)
    session.press(key)
    return session.wait_for(done, timeout=timeout)


def _approve(session: Any) -> None:
    """f2 then a, as a user does; an a that reached the composer while the card was arming is erased."""
    session.press("F2")
    session.wait_for("a r h e Decide")
    session.press("a")
    # the sidebar's plan in dev, marked while its Developer (or the setup) works or once it waits for you
    approved = lambda s: QUESTION in s or re.search(r"\[dev\] (?:[●◆] )?Add a w", s) is not None  # noqa: E731
    screen = session.wait_for(lambda s: approved(s) or "⏎ Send" in s or _refused(s))
    if approved(screen):
        return
    if "⏎ Send" in screen:
        session.press("BSpace")
    time.sleep(ARMING_SECONDS)
    session.press("F2")
    session.wait_for("a r h e Decide")
    session.press("a")
    session.wait_for(approved)


def test_open_a_shell_fix_the_setup_and_retry(demo: Callable[[int, int], Any], e2e_env: dict[str, str],
                                             tmp_path: Path, quit_demo: Callable[[Any], None]) -> None:
    e2e_env.update(TUNAFLOW_WORKFLOW__WORKTREE_SETUP=SETUP, SHELL="/bin/sh", PS1="fix-it$ ")
    session = demo(120, 40)  # the terminal takes the environment above
    session.send_text("add a word frequency report")
    session.press("Enter")
    session.wait_for("a approve")
    _approve(session)
    session.wait_for(lambda s: QUESTION in s and "setup needs a token" in s
                     and "Open a shell (o)" in s and "Retry (r)" in s and "Skip setup (s)" in s)

    _press_until(session, "o", lambda s: "fix-it$" in s)
    [demo_root] = tmp_path.glob("tunaflow-demo-*")
    session.send_text(f'pwd > "{demo_root}/shell-cwd"; touch "$TUNAFLOW_PROJECT/../setup-fixed"; exit')
    session.press("Enter")
    session.wait_for(QUESTION)  # back in the app, the question is asked again
    shell_cwd = (demo_root / "shell-cwd").read_text().strip()
    assert re.search(r"/worktrees/.+/add-a-word-frequency-report", shell_cwd), shell_cwd

    _press_until(session, "r", lambda s: QUESTION not in s)
    verdict = session.wait_for(lambda s: "review verdict" in s and re.search(r"\bPASS\b", s) is not None)
    assert "Traceback" not in verdict
    quit_demo(session)
