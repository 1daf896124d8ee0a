"""A streaming answer adds rows to the chat on growth beats; in between it fills the rows it has."""

from __future__ import annotations

import gc
from types import SimpleNamespace

from waiting import until

from tunaflow_tui.heap import full_collections_held
from tunaflow_tui.viewmodels.chat import MessageView
from tunaflow_tui.widgets import message_block, stream_clock
from tunaflow_tui.widgets.markdown_stream import StreamTail
from tunaflow_tui.widgets.stream_clock import GROW_INTERVAL, TYPING_GROW_INTERVAL, TYPING_PAUSE, StreamClock


def _streaming(message_id: int) -> MessageView:
    return MessageView(message_id, "assistant", "Architect · claude", "", status="streaming")


async def test_between_growth_beats_the_written_line_fills_in_place_and_the_chat_does_not_move(
    make_app, read_screen, monkeypatch
) -> None:
    # the stream's clock stands still: no beat comes but the ones this test gives
    frozen = SimpleNamespace(monotonic=lambda: 100.0)
    monkeypatch.setattr(message_block, "time", frozen)
    monkeypatch.setattr(stream_clock, "time", frozen)
    app, _ = make_app([MessageView(1, "user", "You", "Explain the cache, please.")])
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.chat_view
        block = await chat.start_stream(_streaming(2))
        await block.append("The cache keeps tokens per fi")
        await block.flush_pending(grow=True)
        await pilot.pause()
        tail = block.query_one(StreamTail)
        rows, height = tail.rows, block.size.height
        assert "The cache keeps tokens per fi" in read_screen(app)

        # more of the line being written, then two new paragraphs: only the line fills in
        await block.append("le, cleared on save.\n\nSECOND-PARAGRAPH\n\nTHIRD-PARAGRAPH")
        await block.flush_pending(grow=False)
        await pilot.pause()
        screen = read_screen(app)
        assert "The cache keeps tokens per file, cleared on save." in screen
        assert "SECOND-PARAGRAPH" not in screen and "THIRD-PARAGRAPH" not in screen
        assert (tail.rows, block.size.height) == (rows, height)
        assert not block.shows_all  # the new lines wait for a beat

        await block.flush_pending(grow=True)
        await pilot.pause()
        screen = read_screen(app)
        assert "SECOND-PARAGRAPH" in screen and "THIRD-PARAGRAPH" in screen
        assert tail.rows > rows and block.size.height > height
        assert block.shows_all


async def test_held_back_lines_show_on_the_next_beat_even_when_the_stream_goes_quiet(
    make_app, read_screen
) -> None:
    app, _ = make_app([MessageView(1, "user", "You", "Go on.")])
    async with app.run_test(size=(80, 24)) as pilot:
        block = await app.chat_view.start_stream(_streaming(2))
        await block.append("first line\n\n")  # after a quiet spell: shown at once, the beat taken
        for i in range(5):
            await block.append(f"QUIET-LINE-{i}\n\n")  # a burst: waits for the clock
        for _ in range(int(10 * GROW_INTERVAL / stream_clock.FLUSH_INTERVAL)):  # counted in ticks
            if block.shows_all:
                break
            await pilot.pause(stream_clock.FLUSH_INTERVAL)
        assert block.shows_all
        assert "QUIET-LINE-4" in read_screen(app)


def test_the_clock_grants_one_growth_beat_per_interval(monkeypatch) -> None:
    now = [100.0]
    monkeypatch.setattr(stream_clock, "time", SimpleNamespace(monotonic=lambda: now[0]))
    clock = StreamClock(app=None)  # type: ignore[arg-type]  # no timer is started here
    assert clock.may_grow()
    now[0] += GROW_INTERVAL / 2
    assert not clock.may_grow()
    assert clock.may_grow(GROW_INTERVAL / 4)  # after a quiet spell the shorter interval applies
    now[0] += GROW_INTERVAL
    assert clock.may_grow() and not clock.may_grow()


async def test_a_block_taken_down_while_its_answer_streams_draws_nothing_and_raises_nothing(
    make_app, monkeypatch
) -> None:
    now = [100.0]
    clock = SimpleNamespace(monotonic=lambda: now[0])  # no tick comes but the one this test gives
    monkeypatch.setattr(message_block, "time", clock)
    monkeypatch.setattr(stream_clock, "time", clock)
    app, _ = make_app([MessageView(1, "user", "You", "Go on.")])
    async with app.run_test(size=(80, 24)) as pilot:
        block = await app.chat_view.start_stream(_streaming(2))
        await block.append("first")  # after a quiet spell: drawn at once
        await block.append(" paragraph\n\nsecond paragraph\n\nthird")  # waits for the clock
        await block.query_children(".message-body").remove()  # as when the app quits: children go first
        now[0] += 1.0
        await block.flush_pending(grow=True)  # the clock ticks once more, on a growth beat
        await pilot.pause()
        assert block.text == "first paragraph\n\nsecond paragraph\n\nthird"


class _Timer:
    def stop(self) -> None:
        pass


_NO_TIMERS = SimpleNamespace(set_timer=lambda *args, **kwargs: _Timer())
"""An app whose timers never fire: the clock's typing pause ends only when the test says."""


def test_while_the_user_types_growth_beats_space_out_and_come_back_once_they_stop(monkeypatch) -> None:
    now = [100.0]
    monkeypatch.setattr(stream_clock, "time", SimpleNamespace(monotonic=lambda: now[0]))
    clock = StreamClock(app=_NO_TIMERS)  # type: ignore[arg-type]
    assert clock.may_grow()
    for step in (0.0, 0.6, 0.6):  # a key now and then (well within TYPING_PAUSE of each other)
        now[0] += step
        clock.typed()
    assert now[0] - 100.0 > GROW_INTERVAL  # without the typing, a beat would be due
    assert not clock.may_grow()  # a layout now could hold the next key back
    assert not clock.may_grow(stream_clock.FLUSH_INTERVAL)  # a quiet stream's first line waits too
    now[0] = 100.0 + TYPING_GROW_INTERVAL
    assert clock.may_grow()
    now[0] += GROW_INTERVAL
    assert not clock.may_grow()  # the last key was less than TYPING_PAUSE ago
    now[0] = 101.2 + TYPING_PAUSE + 0.1  # the typing stopped: the usual beat again
    assert clock.may_grow()
    now[0] += GROW_INTERVAL
    assert clock.may_grow()
    clock.stop()


async def test_a_key_in_the_composer_tells_the_stream_clock_the_user_is_typing(make_app, monkeypatch) -> None:
    now = [100.0]
    monkeypatch.setattr(stream_clock, "time", SimpleNamespace(monotonic=lambda: now[0]))
    app, _ = make_app([MessageView(1, "user", "You", "Go on.")])
    async with app.run_test(size=(80, 24)) as pilot:
        clock = StreamClock.of(app)
        assert clock.may_grow()
        app.composer.focus_input()
        await pilot.press("h", "i")
        now[0] += GROW_INTERVAL
        assert not clock.may_grow()
        now[0] += TYPING_GROW_INTERVAL
        assert clock.may_grow()


async def test_full_garbage_collections_wait_while_the_user_types(make_app, monkeypatch) -> None:
    # a full pass is a pause of tens of milliseconds: a key typed meanwhile would wait for it
    monkeypatch.setattr(stream_clock, "TYPING_PAUSE", 0.2)
    usual = gc.get_threshold()
    app, _ = make_app([MessageView(1, "user", "You", "Go on.")])
    async with app.run_test(size=(80, 24)) as pilot:
        app.composer.focus_input()
        await pilot.pause()
        assert not full_collections_held()
        await pilot.press("h", "i")
        assert full_collections_held() and gc.get_threshold()[2] > usual[2]
        assert gc.get_threshold()[:2] == usual[:2]  # young collections go on
        await until(pilot, lambda: not full_collections_held(), "full collections back once the typing paused")
        assert gc.get_threshold() == usual
        await pilot.press("x")
        assert full_collections_held()
    assert not full_collections_held() and gc.get_threshold() == usual  # the app closed mid-typing
