"""The composer's newline key in a real terminal (tmux): keys arriving in one burst stay in order."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

# Sessions come from the `tmux` fixture (tests/e2e/conftest.py: TmuxSession).

DEMO_ARGV = [sys.executable, "-m", "tunaflow_tui", "demo", "--no-mouse"]
FOOTER = re.compile(r"\^q Quit")
COMPOSER = re.compile(r"→ .*\(demo\)")
PLACEHOLDER = "Message…"
FIRST, SECOND = "alpha one", "beta two"


def send_keys_at_once(session: Any, *keys: str) -> None:
    """One ``tmux send-keys`` call: tmux writes all the keys to the terminal in one burst.

    Arguments that are not key names (``"alpha one"``) are typed as text; ``C-j`` is a line feed.
    """
    subprocess.run(
        ["tmux", "-L", session.socket, "-f", "/dev/null", "send-keys", "-t", session.name, *keys],
        env=session.env, capture_output=True, text=True, timeout=20, check=True,
    )


def row_of(lines: list[str], text: str) -> int:
    """The index of the first line containing ``text``; -1 when none does."""
    return next((i for i, line in enumerate(lines) if text in line), -1)


def lines_in_order(screen: str) -> bool:
    """Both lines are on the screen, ``FIRST`` directly above ``SECOND``, neither run into the other."""
    lines = screen.splitlines()
    first, second = row_of(lines, FIRST), row_of(lines, SECOND)
    return first >= 0 and second == first + 1 and SECOND not in lines[first] and FIRST not in lines[second]


def test_ctrl_j_in_a_burst_starts_the_second_line_and_enter_sends_both(
    tmux: Callable[[int, int], Any], tmp_path: Path
) -> None:
    session = tmux(120, 40)
    session.start(DEMO_ARGV, tmp_path)
    session.wait_for(lambda s: bool(FOOTER.search(s)) and bool(COMPOSER.search(s)), timeout=30)

    send_keys_at_once(session, FIRST, "C-j", SECOND)
    typed = session.wait_for(lambda s: FIRST in s and SECOND in s)
    assert lines_in_order(typed), f"the composer should hold two lines in the typed order:\n{typed}"
    assert PLACEHOLDER not in typed

    session.press("Enter")
    sent = session.wait_for(lambda s: PLACEHOLDER in s and "demo Architect" in s, timeout=30)
    # The composer is empty again and the chat shows one message with both lines, in order (the chat
    # renders Markdown, where a single line break reads as a space).
    assert f"{FIRST} {SECOND}" in sent, f"the sent message should hold both lines in order:\n{sent}"
    assert "Traceback" not in sent

    session.press("C-q")
    assert session.wait_exit(timeout=30) == 0, session.screen()
