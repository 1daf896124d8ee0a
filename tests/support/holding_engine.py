"""The demo engine with a hand brake: a role's turn stops mid-answer until the test lets it go on.

Tests that need an agent "still writing" (to cancel it, to type while it answers) hold it there
instead of pacing the demo engine and hoping the machine is fast enough to act in time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from tunaflow_tui.agents.agent_events import EngineEvent, TextDelta
from tunaflow_tui.agents.base import Engine, Turn, TurnRequest
from tunaflow_tui.agents.demo.demo_engine import DemoEngine
from tunaflow_tui.core.settings.engines import EngineConfig


class HoldingTurn(Turn):
    """A demo turn that, when held, stops once its text holds a given piece until released or cancelled."""

    def __init__(self, inner: Turn, request: TurnRequest, engine: HoldingEngine) -> None:
        self.inner = inner
        self.request = request
        self.engine = engine
        self.text = ""
        self.waiting = False

    async def __aiter__(self) -> AsyncIterator[EngineEvent]:
        async for event in self.inner:
            yield event
            if isinstance(event, TextDelta):
                self.text += event.text
                hold_after = self.engine.held.get(self.request.role)
                if hold_after is not None and hold_after in self.text:
                    self.waiting = True
                    await self.engine.go_on.wait()
                    self.waiting = False

    async def cancel(self) -> None:
        await self.inner.cancel()
        self.engine.go_on.set()


class HoldingEngine(Engine):
    """Wraps the demo engine; a turn of a role in ``held`` waits for :meth:`release` once its text
    contains ``held[role]`` (``""``: after its first piece of text)."""

    type = "demo"

    def __init__(self, config: EngineConfig, held: dict[str, str]) -> None:
        self.inner = DemoEngine(config)
        self.name = self.inner.name
        self.held = held
        self.go_on = asyncio.Event()
        self.turns: list[HoldingTurn] = []

    def start(self, request: TurnRequest) -> Turn:
        turn = HoldingTurn(self.inner.start(request), request, self)
        self.turns.append(turn)
        return turn

    def holding(self, role: str) -> bool:
        """True while a turn of ``role`` has written some text and waits to go on."""
        return any(t.waiting and t.request.role == role for t in self.turns)

    def release(self) -> None:
        """Let every held turn finish (and turns started from now on run through)."""
        self.held.clear()
        self.go_on.set()


def holding_factory(*held: str, after: str = "") -> tuple[Callable[[EngineConfig], Engine],
                                                          Callable[[], HoldingEngine]]:
    """An ``engine_factory`` for the runtime holding the ``held`` roles once they wrote ``after``, and
    a getter for its one engine."""
    made: list[HoldingEngine] = []
    roles = dict.fromkeys(held, after)

    def factory(config: EngineConfig) -> Engine:
        if not made:
            made.append(HoldingEngine(config, roles))
        return made[0]

    return factory, lambda: made[0]
