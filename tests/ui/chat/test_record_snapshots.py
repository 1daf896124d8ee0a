"""Decision records in the chat, at 80×24 and 120×40: folded to one line, unfolded to their details;
and the prose line a plan shows while it streams."""

from __future__ import annotations

import pytest
from chat_controller import chat_app
from record_views import CONVERSATION, focus_record, utc_clock
from waiting import until

from tunaflow_tui.viewmodels.chat import MessageView

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]

pytestmark = pytest.mark.usefixtures(utc_clock.__name__)


@pytest.mark.parametrize("size", SIZES)
def test_records_folded(snap_compare, size) -> None:
    app = chat_app(CONVERSATION)

    async def focus(pilot) -> None:
        await focus_record(pilot, app, 3)

    assert snap_compare(app, terminal_size=size, run_before=focus)


@pytest.mark.parametrize("size", SIZES)
def test_record_unfolded(snap_compare, size) -> None:
    app = chat_app(CONVERSATION)

    async def unfold(pilot) -> None:
        await focus_record(pilot, app, 5)
        await pilot.press("enter")
        await until(pilot, lambda: app.chat_view.block_for(5).record.expanded, "the record unfolded")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=unfold)


@pytest.mark.parametrize("size", SIZES)
def test_plan_streaming_as_prose(snap_compare, size) -> None:
    app = chat_app(CONVERSATION[:1])

    async def stream(pilot) -> None:
        block = await app.chat_view.start_stream(
            MessageView(2, "assistant", "Architect · claude · sonnet", "", status="streaming"))
        await block.append("Here is a plan for the rate limiter.\n\n")
        await block.show_activity("drafting a plan… (2 subtasks so far)")
        await until(pilot, lambda: block.shows_all and block.query(".message-activity"), "the prose line drawn")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=stream)
