"""Cancelling the task that consumes a turn stops the agent at once (no wait for its own end)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path

from waiting import HANG_LIMIT

from tunaflow_tui.agents.base import TurnRequest
from tunaflow_tui.agents.claude import ClaudeEngine
from tunaflow_tui.core.settings import EngineConfig

HANGING_CLI = """#!{python}
import json, sys, time
sys.stdin.read()
print(json.dumps({{"type": "system", "subtype": "init", "session_id": "s1"}}), flush=True)
time.sleep(60)
"""


async def test_cancelling_the_consumer_kills_the_agent_group(tmp_path: Path) -> None:
    cli = tmp_path / "claude"
    cli.write_text(HANGING_CLI.format(python=sys.executable))
    cli.chmod(0o755)
    engine = ClaudeEngine(EngineConfig(name="claude", type="claude", command=str(cli), timeout_total_s=60))
    turn = engine.start(TurnRequest(prompt="hi", cwd=tmp_path))
    started = asyncio.Event()

    async def consume() -> None:
        async for _event in turn:
            started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 10)
    pgid = turn.pid  # type: ignore[attr-defined]
    t0 = time.monotonic()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert time.monotonic() - t0 < 10, "cancel waited for the agent instead of stopping it"
    try:
        os.killpg(pgid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive, "the agent's process group survived the cancel"


async def test_cancel_before_the_process_has_started_still_stops_it(tmp_path: Path) -> None:
    cli = tmp_path / "claude"
    cli.write_text(HANGING_CLI.format(python=sys.executable))
    cli.chmod(0o755)
    engine = ClaudeEngine(EngineConfig(name="claude", type="claude", command=str(cli), timeout_total_s=60))
    turn = engine.start(TurnRequest(prompt="hi", cwd=tmp_path))
    events = []

    async def consume() -> None:
        async for event in turn:
            events.append(event)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0)  # the turn is starting its process
    await turn.cancel()
    t0 = time.monotonic()
    await asyncio.wait_for(task, HANG_LIMIT)
    assert time.monotonic() - t0 < 10
    assert type(events[-1]).__name__ == "EngineError" and events[-1].kind == "cancelled"
