"""`tunaflow demo` in a real terminal (tmux): a newcomer drives a plan to Done with the keyboard."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest

from tunaflow_tui.widgets.decision.arming import ARMING_SECONDS

pytestmark = pytest.mark.e2e

# Sessions come from the `demo` fixture (tests/e2e/conftest.py: start_demo, TmuxSession).
FOOTER = re.compile(r"\bf1 Help\b|\^q Quit")
COMPOSER = re.compile(r"→ .*\(demo\)")


def read_the_card(session: Any, keys: str) -> None:
    """The user reads the card that came up on its own: its keys arm :data:`ARMING_SECONDS` after it
    took the focus (real seconds in a real terminal; the footer shows its keys once it has it)."""
    session.wait_for(lambda screen: re.search(keys, screen) is not None)
    time.sleep(ARMING_SECONDS)


def test_first_screen_fits_80x24(demo: Callable[[int, int], Any], quit_demo: Callable[[Any], None]) -> None:
    session = demo(80, 24)
    screen = session.screen()
    lines = screen.splitlines()
    assert len(lines) <= 24
    assert "Traceback" not in screen and "Error" not in screen
    # The composer line and the footer are both on the screen, the footer on the last row.
    assert any(COMPOSER.search(line) for line in lines)
    assert FOOTER.search(lines[-1]), f"the footer is not on the last line:\n{screen}"
    quit_demo(session)


def test_demo_plan_to_done_with_the_keyboard(demo: Callable[[int, int], Any],
                                            quit_demo: Callable[[Any], None]) -> None:
    session = demo(120, 40)
    session.send_text("add a word frequency report")
    session.press("Enter")
    # the card, its title and its keys (a card can show a frame before its last lines)
    session.wait_for(lambda s: "Plan 1 proposal" in s and "a approve" in s and "Add a word-frequency report" in s)
    # The gate holds: nothing is developed until the user approves.
    read_the_card(session, r"a r h e Decide")
    assert "review verdict" not in session.screen()
    session.press("a")
    session.wait_for(lambda s: "review verdict" in s and re.search(r"\bPASS\b", s, re.IGNORECASE) is not None)
    read_the_card(session, r"a w d( t)?( h)? Decide")
    assert "Plan 1 done" not in session.screen()
    session.press("a")
    # The plan is listed as done in the sidebar (refreshed after the card shows), and nothing crashed
    # on the way.
    done = session.wait_for(lambda s: "Plan 1 done" in s and re.search(r"\[done\] Add a word", s) is not None)
    assert "Traceback" not in done
    quit_demo(session)
