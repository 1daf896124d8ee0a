"""A chat holding decision records, for the record tests: two records among messages, and the app on it."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from waiting import until

from tunaflow_tui.app import TunaflowApp
from tunaflow_tui.core.decision_records import record_markdown
from tunaflow_tui.viewmodels.chat import MessageView

REVISION = {
    "kind": "decision", "event_id": 3, "event": "revision_requested", "plan_id": 1,
    "plan_title": "Add rate limiting to the public API", "by": "you", "at": "2026-01-01T12:03:00+00:00",
    "feedback": "Use a token bucket, not a fixed window.", "reason": "",
    "proposal": {"title": "Add rate limiting to the public API", "revision": 1,
                 "subtasks": ["Add a limiter middleware", "Return 429 with Retry-After", "Test both"]},
}
REWORK = {
    "kind": "decision", "event_id": 9, "event": "rework_requested", "plan_id": 1,
    "plan_title": "Add rate limiting to the public API", "by": "you", "at": "2026-01-01T12:41:00+00:00",
    "feedback": "", "reason": "",
    "verdict": {"round": 1, "verdict": "fail", "findings": ["Retry-After header missing on 429"],
                "seats": [{"seat": "reviewer", "engine": "claude", "verdict": "fail", "scores": {"correctness": 4}},
                          {"seat": "verifier", "engine": "codex", "verdict": "pass", "scores": {"correctness": 8}}]},
}


def record(message_id: int, meta: dict[str, object]) -> MessageView:
    """A decision record as the chat gets it from the store."""
    return MessageView(message_id, "system", "tunaflow", record_markdown(meta), meta=meta)


CONVERSATION = [
    MessageView(1, "user", "You", "Add rate limiting to the public API."),
    MessageView(2, "assistant", "Architect · claude · sonnet", "Here is a plan for the rate limiter."),
    record(3, REVISION),
    MessageView(4, "assistant", "Architect · claude · sonnet", "Revision 2: a token bucket per client."),
    record(5, REWORK),
]


async def focus_record(pilot, app: TunaflowApp, message_id: int) -> None:
    await until(pilot, lambda: app.chat_view.block_for(message_id) is not None, "the record mounted")
    app.chat_view.block_for(message_id).focus()
    await pilot.pause()



@pytest.fixture
def utc_clock() -> Iterator[None]:
    """Times on a UTC clock: records show the user's local time, and a test pins the zone."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()
