"""A record in the chat is one line until the user unfolds it: enter or space on the focused record,
or a click on it; the hint names the key. A record kind without a card shows as a message."""

from __future__ import annotations

import pytest
from app_harness import screen_text
from chat_controller import chat_app
from record_views import CONVERSATION, REVISION, focus_record, record, utc_clock
from waiting import until

from tunaflow_tui.viewmodels.chat import MessageView

pytestmark = pytest.mark.usefixtures(utc_clock.__name__)


async def test_enter_and_space_unfold_and_fold_a_record() -> None:
    app = chat_app(CONVERSATION)
    async with app.run_test(size=(100, 30)) as pilot:
        await focus_record(pilot, app, 3)
        block = app.chat_view.block_for(3)
        assert "enter: details" in screen_text(app) and "Decided by you" not in screen_text(app)
        # the footer names the key for the focused record (composed again on the next refresh)
        await until(pilot, lambda: "Details" in screen_text(app), "the footer's key for the record")
        await pilot.press("enter")
        # the details unfold, and the chat brings the grown record into view
        await until(pilot, lambda: "Use a token bucket, not a fixed window." in screen_text(app)
                    and "Decided by you at 2026-01-01 12:03" in screen_text(app), "the details")
        assert "3. Return 429 with Retry-After" not in screen_text(app)  # subtasks numbered from 1
        await until(pilot, lambda: "2. Return 429 with Retry-After" in screen_text(app), "2. Return 429 with Retry-After on screen")
        await until(pilot, lambda: "enter: fold" in screen_text(app), "enter: fold on screen")
        await pilot.press("space")
        await until(pilot, lambda: not block.record.expanded, "folded again")
        assert "Decided by you" not in screen_text(app)


async def test_a_click_unfolds_a_record() -> None:
    app = chat_app(CONVERSATION)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.chat_view.block_for(5) is not None, "the record mounted")
        card = app.chat_view.block_for(5).record
        await pilot.click(card)
        await until(pilot, lambda: card.expanded, "unfolded by the click")
        await until(pilot, lambda: "reviewer (claude): fail · correctness 4" in screen_text(app), "reviewer (claude): fail · correctness 4 on screen")


async def test_enter_on_an_ordinary_message_unfolds_nothing() -> None:
    app = chat_app(CONVERSATION)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.chat_view.block_for(2) is not None, "the message mounted")
        block = app.chat_view.block_for(2)
        block.focus()
        await pilot.pause()
        assert block.record is None and not block.check_action("toggle_record", ())


async def test_a_record_of_another_kind_shows_its_text() -> None:
    other = MessageView(9, "system", "tunaflow", "A note of a kind this version does not draw.", meta={"kind": "kind_from_a_later_version"})
    app = chat_app([*CONVERSATION[:2], other, record(10, REVISION)])
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.chat_view.block_for(10) is not None, "the messages mounted")
        assert app.chat_view.block_for(9).record is None
        await until(pilot, lambda: "A note of a kind this version does not draw." in screen_text(app), "A note of a kind this version does not draw. on screen")


async def test_unfolded_details_render_their_markdown() -> None:
    """Feedback written in Markdown shows as text: no backticks or asterisks, code kept beside its colon."""
    from tunaflow_tui.widgets.decision.records.record_card import RecordCard

    meta = {**REVISION, "feedback": "Keep `frequency.py`: **tests** first. <!-- tunaflow:subtask-done:2 -->"}
    app = chat_app([*CONVERSATION[:2], record(3, meta)])
    async with app.run_test(size=(100, 30)) as pilot:
        await focus_record(pilot, app, 3)
        await pilot.press("enter")
        await until(pilot, lambda: "Keep frequency.py: tests first." in screen_text(app), "the feedback as text")
        shown = screen_text(app)
        assert "`" not in shown and "**" not in shown and "tunaflow:" not in shown
        card = app.chat_view.block_for(3).query_one(RecordCard)
        content = card.visual
        styled = {content.plain[span.start:span.end]: str(span.style) for span in content.spans}
        assert "bold" in styled.get("frequency.py", "") and "bold" in styled.get("tests", ""), styled
