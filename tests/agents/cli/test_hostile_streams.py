"""Hostile CLI output: a line nested past the JSON decoder's depth, a hang that only talks on stderr."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest
from waiting import until

from tunaflow_tui.agents.agent_events import (
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    Notice,
    ProcessStarted,
    SessionStarted,
)
from tunaflow_tui.agents.base import Engine, TurnRequest
from tunaflow_tui.agents.claude import ClaudeEngine
from tunaflow_tui.agents.codex import CodexEngine
from tunaflow_tui.agents.gemini import GeminiEngine
from tunaflow_tui.core.settings.engines import EngineConfig


def _engine(kind: str, fake_cli: Any, scenario: str, extra: dict[str, str] | None = None, **config: Any) -> Engine:
    env = fake_cli.env(scenario, **(extra or {}))
    if kind == "codex":
        env.update(FAKE_CODEX_LOGGED_IN="1", CODEX_API_KEY="")
        return CodexEngine(EngineConfig(name="codex", env=env, **config))
    if kind == "gemini":
        return GeminiEngine(EngineConfig(name="gemini", env=env, **config))
    return ClaudeEngine(EngineConfig(name="claude", env=env, **config))


CLIS = pytest.mark.parametrize("kind", ["claude", "codex", "gemini"])


def _blocked_writing_to_a_pipe(pid: int) -> bool:
    """Whether the process sleeps in the kernel's pipe write (the pipe is full), as ``/proc`` tells."""
    try:
        return "pipe_write" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


@CLIS
async def test_a_line_nested_200000_deep_is_skipped_and_the_reply_after_it_arrives(
        fake_cli, collect, kind: str) -> None:
    engine = _engine(kind, fake_cli, "ok", {"FAKE_CLI_PRELUDE": "deep-nesting"})
    events = await collect(engine.start(TurnRequest(prompt="hi", cwd=fake_cli.cwd)))
    assert events[-1] == FinalMessage("Hello from the fake model.")
    assert any(isinstance(e, Notice) and "not valid JSON" in e.message for e in events)


@CLIS
async def test_an_agent_that_only_writes_to_stderr_is_idle(fake_cli, collect, kind: str) -> None:
    # 1.5 s: on a loaded machine the stand-in's first stderr lines must have been read by then
    engine = _engine(kind, fake_cli, "stderr-hang", timeout_idle_s=1.5, timeout_total_s=30)
    started = time.monotonic()
    events = await collect(engine.start(TurnRequest(prompt="hi", cwd=fake_cli.cwd)))
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.TIMEOUT
    assert "No output for 1.5 s" in error.message
    assert "retrying: waiting for the network" in error.stderr_tail  # what it said is still shown
    assert time.monotonic() - started < 15


@CLIS
async def test_cancelling_a_flooding_agent_ends_it_promptly(fake_cli, kind: str) -> None:
    """A full pipe nobody reads must not keep the cancel waiting, even for an agent deaf to SIGTERM."""
    turn = _engine(kind, fake_cli, "flood").start(TurnRequest(prompt="hi", cwd=fake_cli.cwd))
    events: list[EngineEvent] = []
    started = time.monotonic()
    async with asyncio.timeout(30):
        async for event in turn:
            events.append(event)
            if isinstance(event, SessionStarted):  # its first line: SIGTERM is ignored by now
                [started_process] = [e for e in events if isinstance(e, ProcessStarted)]
                # nobody reads while the flood fills the pipe: the agent ends up blocked writing to it
                await until(None, lambda pid=started_process.pid: _blocked_writing_to_a_pipe(pid),
                            "the flooding agent to fill its pipe", limit=25)
                await turn.cancel()
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.CANCELLED
    assert time.monotonic() - started < 15
    [process] = [e for e in events if isinstance(e, ProcessStarted)]
    try:
        os.killpg(process.pgid, 0)
    except ProcessLookupError:
        pass
    else:
        raise AssertionError("the agent's process group is still there")
