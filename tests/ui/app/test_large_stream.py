"""10 MB from an engine through the real runtime and controller: the app keeps answering meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from app_harness import demo_settings, screen_text
from waiting import HANG_LIMIT

from tunaflow_tui.agents.agent_events import (
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    TextDelta,
    Usage,
)
from tunaflow_tui.agents.base import Engine, Turn, TurnRequest
from tunaflow_tui.runtime.runtime import WorkflowRuntime
from tunaflow_tui.subcommands.open_command import build_app

CHUNK = "The quick brown fox jumps over the lazy dog; " * 100 + "\n\n"  # ~4.5 KB
CHUNKS = 10 * 1024 * 1024 // len(CHUNK) + 1  # just over 10 MB


class FloodTurn(Turn):
    """Streams just over 10 MB in ~4.5 KB chunks, yielding to the event loop between chunks."""

    def __init__(self) -> None:
        self.sent = 0
        self._cancelled = False

    async def __aiter__(self) -> AsyncIterator[EngineEvent]:
        for _ in range(CHUNKS):
            if self._cancelled:
                yield EngineError(ErrorKind.CANCELLED, "cancelled", partial_text=CHUNK * self.sent)
                return
            self.sent += 1
            yield TextDelta(CHUNK)
            await asyncio.sleep(0.001)  # a fast engine, but one that takes some time
        yield Usage(input_tokens=10, output_tokens=CHUNKS * len(CHUNK) // 4)
        yield FinalMessage(CHUNK * CHUNKS)

    async def cancel(self) -> None:
        self._cancelled = True


class FloodEngine(Engine):
    """An in-process engine whose every turn is a :class:`FloodTurn`."""

    name = "flood"
    type = "demo"

    def __init__(self) -> None:
        self.turns: list[FloodTurn] = []

    def start(self, request: TurnRequest) -> Turn:
        turn = FloodTurn()
        self.turns.append(turn)
        return turn


async def test_ten_megabytes_stream_while_timers_fire_and_keys_reach_the_composer(demo_project) -> None:
    engine = FloodEngine()
    runtime = WorkflowRuntime(demo_project, demo_settings(demo_project), engine_factory=lambda _config: engine)
    app = build_app(runtime, notes=(), cursor_blink=False)
    controller = app.controller
    ticks: list[tuple[int, str]] = []  # (chunks sent so far, composer text) at every timer tick
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            def tick() -> None:
                ticks.append((engine.turns[0].sent if engine.turns else 0, app.composer.text))

            timer = app.set_interval(0.02, tick)  # stopped before the app closes its screens
            try:
                controller.send("main", "Tell me everything")
                while not engine.turns or engine.turns[0].sent < CHUNKS // 4:
                    await pilot.pause(0.01)
                app.composer.focus_input()
                await pilot.press("o", "k")
                assert app.composer.text == "ok"
                assert "ok" in screen_text(app)
                await controller.wait_idle(HANG_LIMIT)
                await pilot.pause()
                # the timer kept firing during the stream, and saw the typed text before the stream ended
                during = [sent for sent, _text in ticks if CHUNKS // 4 <= sent < CHUNKS]
                assert len(during) >= 5
                assert any(text == "ok" and sent < CHUNKS for sent, text in ticks)
                [answer] = [m for m in runtime.store.list_messages("main") if m.role == "assistant"]
                assert answer.status == "done" and len(answer.content) == CHUNKS * len(CHUNK) > 10 * 1024 * 1024
                block = app.chat_view.block_for(answer.id)
                assert block is not None and not block.is_streaming
                assert "The quick brown fox" in screen_text(app)
            finally:
                timer.stop()
    finally:
        runtime.close()
