"""The composer's newline key in a real terminal (tmux): keys arriving in one burst stay in order."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

# Sessions come from the `demo` fixture (tests/e2e/conftest.py: start_demo, TmuxSession).

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
    demo: Callable[[int, int], Any], quit_demo: Callable[[Any], None]
) -> None:
    session = demo(120, 40)

    send_keys_at_once(session, FIRST, "C-j", SECOND)
    typed = session.wait_for(lambda s: FIRST in s and SECOND in s)
    assert lines_in_order(typed), f"the composer should hold two lines in the typed order:\n{typed}"
    assert PLACEHOLDER not in typed

    session.press("Enter")
    sent = session.wait_for(lambda s: PLACEHOLDER in s and "demo Architect" in s)
    # The composer is empty again and the chat shows the message as typed: two lines, in order.
    assert lines_in_order(sent), f"the sent message should show both lines in order:\n{sent}"
    assert "Traceback" not in sent
    quit_demo(session)
