"""An empty branch pane pinned in a real 80×24 terminal (tmux): the pane fills the width, and the footer still
names the pane's keys — unpin, back to the chat — as it does beside the chat on a wide terminal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.e2e


def test_an_empty_pinned_pane_names_its_keys_in_the_footer_at_80x24(demo: Callable[[int, int], Any],
                                                                   quit_demo: Callable[[Any], None]) -> None:
    session = demo(80, 24)
    session.press("F7")  # pinned: at 80 columns the pane takes the whole width
    screen = session.wait_for("No branch open")
    footer = session.wait_for(lambda s: "f6 f7 f8 Branch pane" in s.splitlines()[-1]).splitlines()[-1]
    assert "f1 Help" in footer and "^q Quit" in footer, footer
    assert "Traceback" not in screen
    session.press("F8")  # a key the footer named: back to the chat
    session.wait_for(lambda s: "No branch open" not in s and "Message…" in s, timeout=60)
    quit_demo(session)
