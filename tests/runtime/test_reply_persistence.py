"""A streaming reply is stored while it streams: a finished block within a second, whatever comes next."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time

import pytest
from runtime_harness import Harness
from waiting import until

from tunaflow_tui.core.storage import Store
from tunaflow_tui.runtime import agent_turn
from tunaflow_tui.runtime.events import MessageStarted, RuntimeEvent
from tunaflow_tui.runtime.reply_persistence import ReplyPersister
from tunaflow_tui.runtime.runtime import WorkflowRuntime

PARAGRAPH = "I read calc.py: it only adds. Next I run the test suite, which takes a while.\n\n"
REST = "The suite passed; multiplication is missing.\n"


async def _stored_while_paused(harness: Harness, text: str, pause_after: str, *, split_at: str | None = None,
                               limit: float = 40) -> str:
    """Stream ``text`` (as two chunks cut after ``split_at``, if given), pause 60 s after ``pause_after``;
    return what the database holds during the pause."""
    pauses = {split_at: 0, pause_after: 60} if split_at is not None else {pause_after: 60}
    harness.set_script(architect=[{"text": text, "pause_after": pauses}])
    events: list[RuntimeEvent] = []
    rt = WorkflowRuntime(harness.project, harness.settings(), observer=events.append)
    turn = asyncio.create_task(rt.send_user_message("What does calc.py do?"))
    try:
        await until(None, lambda: any(isinstance(e, MessageStarted) for e in events), "the reply starting")
        [started] = [e for e in events if isinstance(e, MessageStarted)]
        # read the way a restarted tunaflow would: another connection to the database file
        with Store.open(harness.project) as reader:
            def stored() -> str:
                message = reader.get_message(started.message_id)
                return message.content if message is not None else ""

            # well within the agent's 60 s pause, however loaded the machine
            await until(None, lambda: pause_after in stored(), "the text before the pause stored", limit=limit)
            assert not turn.done(), "the agent is still in its pause"
            return stored()
    finally:
        turn.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await turn
        rt.close()


async def test_a_finished_paragraph_is_stored_during_the_pause_that_follows_it(harness: Harness) -> None:
    assert await _stored_while_paused(harness, PARAGRAPH + REST, PARAGRAPH) == PARAGRAPH


async def test_a_paragraph_break_split_across_two_chunks_is_stored_as_a_finished_block(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    # Text without a finished block waits for the stale timer: an hour here, so only the finished-block rule
    # (half a second) can store the reply during the pause.
    monkeypatch.setattr(agent_turn, "ReplyPersister", functools.partial(ReplyPersister, stale_delay=3600))
    first, second = "I read calc.py: it only adds.\n", "\nNext I run the test suite."
    stored = await _stored_while_paused(harness, first + second, second, split_at=first, limit=10)
    assert stored == first + second


async def test_even_half_a_sentence_is_stored_during_a_pause(harness: Harness) -> None:
    half = "I read calc.py: it only"
    assert await _stored_while_paused(harness, half + " adds.\n", half) == half


async def test_a_fast_reply_of_many_paragraphs_is_not_written_per_chunk(harness: Harness) -> None:
    text = "".join(f"Paragraph {i} of a long answer.\n\n" for i in range(300))  # 300 blocks, ~250 chunks
    harness.set_script(architect=[{"text": text}])
    rt = WorkflowRuntime(harness.project, harness.settings())
    writes: list[float] = []
    update = rt.store.update_message

    def counting(message_id: int, **changes: object):  # type: ignore[no-untyped-def]
        writes.append(time.monotonic())
        return update(message_id, **changes)

    rt.store.update_message = counting  # type: ignore[method-assign]
    try:
        started = time.monotonic()
        result = await rt.send_user_message("Explain everything")
        took = time.monotonic() - started
        assert result is not None and result.ok and result.text == text
        # at most one write per half second while it streamed, plus the final one
        assert len(writes) <= took / 0.5 + 2, (len(writes), took)
    finally:
        rt.close()
