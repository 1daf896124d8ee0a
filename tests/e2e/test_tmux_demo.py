"""`tunaflow demo` in a real terminal (tmux): a newcomer drives a plan to Done with the keyboard."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

# Sessions come from the `tmux` fixture (tests/e2e/conftest.py: TmuxSession).

NOT_AVAILABLE = "not available in this version yet"
DEMO_ARGV = [sys.executable, "-m", "tunaflow_tui", "demo", "--no-mouse"]
# Textual paints its footer with the quit key; the composer shows who receives the next message.
FOOTER = re.compile(r"\^q Quit")
COMPOSER = re.compile(r"→ .*\(demo\)")


def start_demo(make: Callable[[int, int], Any], size: tuple[int, int], cwd: Path) -> Any:
    """Start `tunaflow demo --no-mouse` and wait for its first screen (the composer and the footer)."""
    session = make(*size)
    session.start(DEMO_ARGV, cwd)
    screen = session.wait_for(
        lambda s: NOT_AVAILABLE in s or (bool(FOOTER.search(s)) and bool(COMPOSER.search(s))), timeout=30
    )
    if NOT_AVAILABLE in screen:
        pytest.skip(f"`tunaflow demo` says: {NOT_AVAILABLE!r}")
    return session


def quit_cleanly(session: Any) -> None:
    session.press("C-q")
    status = session.wait_exit(timeout=30)
    screen = session.screen()
    if status is None:
        pytest.fail(f"the process was still running 30 s after ctrl+q; the screen:\n{screen}")
    assert status == 0, f"tunaflow demo exited with {status}; the screen:\n{screen}"


def test_first_screen_fits_80x24(tmux: Callable[[int, int], Any], tmp_path: Path) -> None:
    session = start_demo(tmux, (80, 24), tmp_path)
    screen = session.screen()
    lines = screen.splitlines()
    assert len(lines) <= 24
    assert "Traceback" not in screen and "Error" not in screen
    # The composer line and the footer are both on the screen, the footer on the last row.
    assert any(COMPOSER.search(line) for line in lines)
    assert FOOTER.search(lines[-1]), f"the footer is not on the last line:\n{screen}"
    quit_cleanly(session)


def test_demo_plan_to_done_with_the_keyboard(tmux: Callable[[int, int], Any], tmp_path: Path) -> None:
    session = start_demo(tmux, (120, 40), tmp_path)
    session.send_text("add a word frequency report")
    session.press("Enter")
    proposal = session.wait_for("Plan proposal", timeout=60)
    assert "a approve" in proposal and "Add a word-frequency report" in proposal
    # The gate holds: nothing is developed until the user approves.
    time.sleep(1.0)
    assert "Review verdict" not in session.screen()
    session.press("a")
    verdict = session.wait_for("Review verdict", timeout=120)
    assert re.search(r"\bPASS\b", verdict, re.IGNORECASE), verdict
    time.sleep(0.5)
    assert "Plan done" not in session.screen()
    session.press("a")
    done = session.wait_for("Plan done", timeout=60)
    # The plan is listed as done in the sidebar, and nothing crashed on the way.
    assert re.search(r"\[done\] Add a word", done), done
    assert "Traceback" not in done
    quit_cleanly(session)
