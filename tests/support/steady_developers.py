"""The app on the sample project with Developers that stream steadily for a while: several plans at once.

A stand-in agent for tests and benches that need Developers still writing while the user does other
things. Every role plays the demo engine's script; a Developer's turn first writes a steady stream of
prose (``rate`` pieces a second for ``seconds``) into its plan's conversation, then does the demo
Developer's real work (files, subtasks, ``impl-complete``), so the plan goes on to its tests and review.

Run as a program, it opens the app in the terminal (tmux in the end-to-end tests and the typing bench)::

    python tests/support/steady_developers.py FOLDER [--seconds S] [--rate R] [--plans N] [--stats FILE]

``FOLDER/textstats`` is the sample project (made on first use). ``--plans N`` seeds N plan proposals
(no agent turn) and approves them all as the app opens: N Developers stream at once. ``--stats`` gets the
pieces a second each Developer achieved, rewritten every half second (JSON list).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

from tunaflow_tui.agents.agent_events import EngineEvent, TextDelta
from tunaflow_tui.agents.base import Engine, Turn, TurnRequest
from tunaflow_tui.agents.demo.demo_engine import DemoEngine
from tunaflow_tui.core.settings.engines import EngineConfig

PROSE = ("I read `textstats/core.py` and the tests before changing anything; the counters share one "
         "tokenizer, so the report reuses it and case and punctuation match. 한국어 문장도 셉니다. ")
PIECES = tuple(PROSE[i: i + 6] for i in range(0, len(PROSE), 6))


class SteadyTurn(Turn):
    """A demo turn that, for a Developer, first streams :data:`PROSE` steadily."""

    def __init__(self, inner: Turn, engine: SteadyEngine, steady: bool) -> None:
        self.inner = inner
        self.engine = engine
        self.steady = steady
        self.sent = 0
        self._cancelled = False

    async def __aiter__(self) -> AsyncIterator[EngineEvent]:
        events = aiter(self.inner)
        yield await anext(events)  # the session starts first
        if self.steady:
            self.engine.streams.append(self)
            loop = asyncio.get_running_loop()
            started = next_at = loop.time()
            while loop.time() - started < self.engine.seconds and not self._cancelled:
                yield TextDelta(PIECES[self.sent % len(PIECES)])
                self.sent += 1
                next_at += 1 / self.engine.rate
                await asyncio.sleep(max(0.0, next_at - loop.time()))
            self.engine.streams.remove(self)
            self.engine.finished.append(self.sent / max(1e-9, loop.time() - started))
        async for event in events:
            yield event

    async def cancel(self) -> None:
        self._cancelled = True
        await self.inner.cancel()


class SteadyEngine(Engine):
    """The demo engine whose Developers stream steadily for ``seconds`` at ``rate`` pieces a second."""

    type = "demo"

    def __init__(self, config: EngineConfig, seconds: float, rate: float) -> None:
        self.inner = DemoEngine(config)
        self.name = self.inner.name
        self.seconds = seconds
        self.rate = rate
        self.streams: list[SteadyTurn] = []
        self.finished: list[float] = []
        self.started_at = time.perf_counter()

    def start(self, request: TurnRequest) -> Turn:
        return SteadyTurn(self.inner.start(request), self, steady=request.role == "developer")

    def rates(self) -> list[float]:
        """Pieces a second of each Developer streaming now (or done streaming)."""
        now = time.perf_counter()
        live = [turn.sent / max(1e-9, now - self.started_at) for turn in self.streams]
        return live + self.finished


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--plans", type=int, default=0)
    parser.add_argument("--stats", type=Path, default=None)
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).parent))
    from app_harness import demo_settings

    from tunaflow_tui.agents.demo.sample import copy_demo_project
    from tunaflow_tui.core.workflow.service import WorkflowService
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.subcommands.open_command import build_app

    project = args.folder / "textstats"
    if not project.exists():
        copy_demo_project(project)
    made: list[SteadyEngine] = []

    def factory(config: EngineConfig) -> Engine:
        if not made:
            made.append(SteadyEngine(config, args.seconds, args.rate))
        return made[0]

    runtime = WorkflowRuntime(project, demo_settings(project), engine_factory=factory)
    service = WorkflowService(runtime.store)
    plans = [service.create_plan_from_proposal(title=f"Add report {n}", slug=f"report-{n}",
                                               subtasks=[("Count words", ""), ("Format the report", "")]).id
             for n in range(1, args.plans + 1)]
    app = build_app(runtime, mouse=False, notes=(), cursor_blink=False)

    def write_stats() -> None:
        if args.stats is not None and made:
            part = args.stats.with_suffix(".part")
            part.write_text(json.dumps(made[0].rates()))
            os.replace(part, args.stats)

    def start() -> None:
        for plan_id in plans:  # approved as the app opens: every Developer starts at once
            app.run_worker(runtime.decide(plan_id, "approve"), group="steady", exit_on_error=False)
        app.set_interval(0.5, lambda: app.run_worker(asyncio.to_thread(write_stats), exit_on_error=False))

    app.call_later(start)
    try:
        app.run()
    finally:
        runtime.close()


if __name__ == "__main__":
    main()
