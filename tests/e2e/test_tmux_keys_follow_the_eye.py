"""The reported case in a real terminal (tmux, 120×40): plan 1 finished and not merged, a second request
sent, f2, a; when plan 2's verdict arrives, x asks before anything is removed, and plan 1's worktree
is never touched (its done card, out of view, does not have the keys)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tunaflow_tui.widgets.decision.arming import ARMING_SECONDS

pytestmark = pytest.mark.e2e

VERDICT_KEYS = r"a w d( t)?( h)? Decide"


def _decide(session: Any, keys: str, key: str, done: Callable[[str], bool]) -> str:
    """f2 to the newest card, wait for its keys in the footer, press ``key`` until ``done(screen)``.

    A card that came up on its own arms a moment later (real seconds in a real terminal): a key
    pressed before then is handed back or refused, and the user presses it again.
    """
    session.press("F2")
    session.wait_for(lambda s: re.search(keys, s) is not None)
    time.sleep(ARMING_SECONDS)
    session.press(key)
    return session.wait_for(done)


def test_x_on_plan_2_s_verdict_asks_and_leaves_plan_1_s_worktree(
        demo: Callable[[int, int], Any], tmp_path: Path, quit_demo: Callable[[Any], None]) -> None:
    session = demo(120, 40)
    session.send_text("add a word frequency report")
    session.press("Enter")
    session.wait_for(lambda s: "a approve" in s and "Plan 1" in s)
    _decide(session, r"Plan 1 · a r h e Decide", "a", lambda s: re.search(VERDICT_KEYS, s) is not None)
    _decide(session, rf"Plan 1 · {VERDICT_KEYS}", "a", lambda s: "Plan 1 done" in s)
    [demo_root] = tmp_path.glob("tunaflow-demo-*")
    [tree] = [path for path in (demo_root / "worktrees").glob("*/add-a-word-frequency-report*") if path.is_dir()]

    time.sleep(ARMING_SECONDS)  # the user reads the done card that came up
    session.press("i")  # to the composer; plan 1 stays done, not merged
    session.wait_for(lambda s: "Plan 1 ·" not in s.splitlines()[-1], timeout=60)
    session.send_text("add a sentence count")
    session.press("Enter")
    session.wait_for(lambda s: "Plan 2 proposal" in s and "a approve" in s)
    _decide(session, r"Plan 2 · a r h e Decide", "a", lambda s: "Plan 2 · review verdict" in s)
    screen = session.wait_for(lambda s: re.search(rf"Plan 2 · {VERDICT_KEYS}", s) is not None
                              or "Plan 2 review waiting — f2" in s)
    assert "m x Done" not in screen, f"plan 1's done card has the keys:\n{screen}"
    if "Plan 2 review waiting — f2" in screen:  # the verdict arrived while the composer had the keys
        session.press("F2")
        session.wait_for(lambda s: re.search(rf"Plan 2 · {VERDICT_KEYS}", s) is not None)
    time.sleep(ARMING_SECONDS)

    session.press("x")
    asked = session.wait_for(lambda s: "Abandon" in s and "cancel: nothing happens" in s)
    assert "Remove" not in asked, asked
    assert tree.is_dir(), "plan 1's worktree went before anything was confirmed"
    session.press("Escape")
    screen = session.wait_for(lambda s: "Nothing was decided" in s or "abandon was cancelled" in s)
    assert tree.is_dir(), "plan 1's worktree was removed"
    assert "Traceback" not in screen
    quit_demo(session)
