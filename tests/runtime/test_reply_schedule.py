"""When a streaming reply is written, on a clock the test moves: a finished block within half a second, any
text within three, never two writes within half a second, nothing after close, a failed write tried again."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from tunaflow_tui.runtime.reply_persistence import BLOCK_DELAY_S, STALE_DELAY_S, ReplyPersister

START = 1_000.0


class HandLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock moves only when the test says so: timers fire when it has passed them."""

    def __init__(self) -> None:
        super().__init__()
        self.now = START

    def time(self) -> float:
        return self.now


class Schedule:
    """A persister on a :class:`HandLoop`, and the times at which it wrote."""

    def __init__(self, loop: HandLoop, write: Callable[[], None] | None = None) -> None:
        self.loop = loop
        self.writes: list[float] = []
        self.failures: list[BaseException] = []
        loop.set_exception_handler(lambda _loop, context: self.failures.append(context["exception"]))

        def record() -> None:
            if write is not None:
                write()
            self.writes.append(round(loop.now, 3))

        async def make() -> ReplyPersister:
            return ReplyPersister(record)

        self.persister = loop.run_until_complete(make())

    def after(self, seconds: float) -> list[float]:
        """Let ``seconds`` pass, run what fell due; the writes so far."""
        self.loop.now += seconds
        self.loop.run_until_complete(asyncio.sleep(0))
        assert not self.failures, self.failures
        return self.writes


@pytest.fixture
def loop() -> Iterator[HandLoop]:
    hand = HandLoop()
    yield hand
    hand.close()


def test_a_finished_block_long_after_the_last_write_is_written_at_once(loop: HandLoop) -> None:
    schedule = Schedule(loop)
    schedule.after(5)
    schedule.persister.changed(block_done=True)
    assert schedule.after(0) == [START + 5]


def test_a_finished_block_right_after_a_write_waits_out_the_half_second(loop: HandLoop) -> None:
    schedule = Schedule(loop)  # the persister counts its start as the last write
    schedule.persister.changed(block_done=True)
    assert schedule.after(BLOCK_DELAY_S - 0.1) == []
    assert schedule.after(0.1) == [START + BLOCK_DELAY_S]


def test_text_without_a_finished_block_waits_three_seconds(loop: HandLoop) -> None:
    schedule = Schedule(loop)
    schedule.persister.changed(block_done=False)
    assert schedule.after(STALE_DELAY_S - 0.1) == []
    assert schedule.after(0.1) == [START + STALE_DELAY_S]


def test_after_a_block_is_written_the_next_plain_text_waits_three_seconds_again(loop: HandLoop) -> None:
    schedule = Schedule(loop)
    schedule.after(5)
    schedule.persister.changed(block_done=True)
    assert schedule.after(0) == [START + 5]
    schedule.persister.changed(block_done=False)
    assert schedule.after(STALE_DELAY_S - 0.1) == [START + 5], "the finished block was written already"
    assert schedule.after(0.1) == [START + 5, START + 5 + STALE_DELAY_S]


def test_nothing_is_written_after_close(loop: HandLoop) -> None:
    schedule = Schedule(loop)
    schedule.persister.changed(block_done=True)
    schedule.persister.close()
    assert schedule.after(10) == []
    schedule.persister.changed(block_done=True)
    assert schedule.after(10) == []


def test_a_failed_write_is_tried_again(loop: HandLoop) -> None:
    attempts: list[float] = []

    def busy_once() -> None:
        attempts.append(loop.now)
        if len(attempts) == 1:
            raise OSError("database is locked")

    schedule = Schedule(loop, busy_once)
    schedule.after(5)
    schedule.persister.changed(block_done=True)
    assert schedule.after(0) == [] and attempts == [START + 5]
    assert schedule.after(STALE_DELAY_S) == [START + 5 + STALE_DELAY_S]
