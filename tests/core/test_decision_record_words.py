"""A decision record reads the same in the chat and in export: a headline, and details with the feedback."""

from __future__ import annotations

import pytest
from record_views import utc_clock

from tunaflow_tui.core.decision_records import detail_lines, headline, record_markdown

pytestmark = pytest.mark.usefixtures(utc_clock.__name__)

REWORK = {
    "kind": "decision", "event_id": 7, "event": "rework_requested", "plan_id": 1, "plan_title": "Add mul",
    "by": "you", "at": "2026-01-01T12:03:00+00:00", "feedback": "Cover zero.\nAnd negatives.", "reason": "",
    "verdict": {"round": 1, "verdict": "fail", "findings": ["no test for 0"],
                "seats": [{"seat": "reviewer", "engine": "claude", "verdict": "fail", "scores": {"correctness": 2}}]},
}


def test_the_headline_says_who_decided_what_after_which_verdict() -> None:
    assert headline(REWORK) == "↻ After review round 1 (fail) you asked for rework: “Cover zero. And negatives.” · 12:03"


def test_the_details_hold_the_feedback_and_the_verdict() -> None:
    assert detail_lines(REWORK) == [
        "Decided by you at 2026-01-01 12:03 UTC",
        "Feedback: Cover zero.",
        "  And negatives.",
        "Review round 1 (fail)",
        "  reviewer (claude): fail · correctness 2",
        "  • no test for 0",
    ]


def test_hostile_text_is_neutralised() -> None:
    hostile = {**REWORK, "plan_title": "\x1b]0;pwned\x07Title", "feedback": "\x1b[31mred"}
    assert "\x1b" not in headline(hostile) and "\x1b" not in record_markdown(hostile)


def test_the_message_text_is_the_headline_and_a_list() -> None:
    text = record_markdown(REWORK)
    assert text.startswith("**↻ After review round 1 (fail) you asked for rework")
    assert "\n- Feedback: Cover zero.\n  - And negatives.\n" in text
