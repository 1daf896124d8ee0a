"""Branches in a real terminal (tmux): fork a message with the keyboard, talk in the branch while main
answers, adopt it, and see the card in main and the branch under Archive."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.e2e


def test_fork_chat_while_main_answers_then_adopt(demo: Callable[[int, int], Any], e2e_env: dict[str, str],
                                                 quit_demo: Callable[[Any], None]) -> None:
    e2e_env["TUNAFLOW_ENGINES__DEMO__DEMO_DELAY_S"] = "0.2"  # a reply takes several seconds: time to talk meanwhile
    session = demo(120, 40)
    session.send_text("hello")
    session.press("Enter")
    session.wait_for(lambda s: "demo Architect" in s and "writing…" not in s)

    # the message cursor: escape selects the newest message, b forks the branch from it
    session.press("Escape")
    session.wait_for("b Branch")  # the message is selected (a key right after escape would read as alt+key)
    session.press("b")
    session.wait_for(lambda s: re.search(r"→ Architect \(demo\) in branch 1", s) is not None)

    # the branch is asked something (the demo answers it at length) and main answers meanwhile
    session.send_text("what about lines?")
    session.wait_for("what about lines?")
    session.press("Enter")
    session.wait_for("writing…")
    session.press("Escape")  # to the branch's chat (its keys show once the composer let go) …
    session.wait_for(lambda s: "a Adopt" in s and "⏎ Send" not in s)
    session.press("i")  # … and to the main composer
    session.wait_for("⏎ Send")
    session.send_text("hello again")
    session.wait_for("hello again")
    session.press("Enter")
    session.wait_for(lambda s: s.count("writing…") >= 2)  # both write at once
    session.wait_for(lambda s: "writing…" not in s)  # both answered

    # adopt the branch in the pane (from the palette): the summary streams, the editor opens, ctrl+s
    # inserts the card in main
    session.press("C-p")
    session.wait_for("Search for commands")
    session.send_text("Adopt branch")
    session.wait_for(lambda s: "Summarize the branch in the pane" in s)
    session.press("Enter")
    session.wait_for("Adopt (ctrl+s)")
    session.press("C-s")
    # the card arrives headline first; the chat follows it to its last line (the key) a frame later,
    # and the sidebar moves the branch to the archive when it is next refreshed
    session.wait_for(lambda s: "Adopted branch 1" in s and "o opens the branch" in s)
    screen = session.wait_for(lambda s: "[adopted]" in s.split("Archive", 1)[-1])
    assert "Adopted branch 1" in screen and "o opens the branch" in screen, screen
    assert "Traceback" not in screen
    quit_demo(session)
