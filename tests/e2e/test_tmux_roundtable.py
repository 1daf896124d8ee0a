"""A roundtable in a real terminal (tmux), by keyboard only: the palette's Start roundtable, the set-up form
(topic, three demo seats, deliberative, one round), the three seats streaming at once, the brief."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

SEATS = ("ana=demo:proposer", "ben=demo:critic", "cy=demo:judge")


def test_start_a_deliberative_roundtable_see_three_seats_stream_then_the_brief(
        demo: Callable[[int, int], Any], e2e_env: dict[str, str], quit_demo: Callable[[Any], None]) -> None:
    e2e_env["TUNAFLOW_ENGINES__DEMO__DEMO_DELAY_S"] = "0.5"  # the seats write for seconds: time to see them
    session = demo(120, 40)

    session.press("C-p")
    session.wait_for("Search for commands")
    session.send_text("Start roundtable")
    session.wait_for("Several agents discuss one topic")
    session.press("Enter")
    session.wait_for("Participants, one per line")

    session.send_text("Should the report also list bigrams?")
    session.press("Tab")  # the participants
    # the preset's lines go (each: its text, then the line itself); a ctrl+k that reaches the topic
    # before the focus moved deletes nothing there (its cursor is at the end)
    session.press_until(["C-k"] * 12,
                        lambda s: "=demo:" not in s.split("Participants", 1)[1].split("rounds", 1)[0])
    for i, seat in enumerate(SEATS):
        session.send_text(seat)
        if i < len(SEATS) - 1:
            session.press("Enter")
    session.wait_for("cy=demo:judge")
    session.press("Tab")  # the mode
    # ↓ opens its choices (in the participants it only moves the cursor); the list has the keys
    # once the footer offers to dismiss it
    session.press_until("Down", "Dismiss menu")
    session.press("Down", "Enter")
    session.wait_for(lambda s: re.search(r"deliberative\s*▼", s) is not None)
    session.press("Tab")  # the rounds
    # emptied: its placeholder shows (in the mode, ctrl+u does nothing)
    session.press_until("C-u", lambda s: re.search(r"Rounds.*1-20", s) is not None)
    session.send_text("1")
    session.wait_for("3 seats × 1 round = 3 calls")
    session.press("Enter")

    # the form closes, the roundtable opens in the pane and its three seats answer at once
    # (the board lists all three answering while their blocks stream side by side in the chat)
    session.wait_for(lambda s: len(re.findall(r"▸ (ana|ben|cy) · demo · \w+\s+answering", s)) == 3
                     and s.count("writing…") >= 2 and "Roundtable · round 1 · deliberative" in s)
    # the brief, with the board showing all three answered (each part is drawn when its event arrives)
    screen = session.wait_for(lambda s: "Key Positions" in s and "• ana (proposer): As proposer:" in s
                              and len(re.findall(r"✓ (ana|ben|cy) · demo · \w+\s+answered", s)) == 3)
    assert "Traceback" not in screen
    quit_demo(session)
