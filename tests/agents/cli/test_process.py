"""The subprocess turn: timeouts, output cap, cancel, missing binary, no leftover processes, no secrets."""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from waiting import until_sync

from tunaflow_tui.agents.agent_events import EngineError, ErrorKind, FinalMessage, SessionStarted, TextDelta
from tunaflow_tui.agents.base import TurnRequest
from tunaflow_tui.agents.claude import ClaudeEngine
from tunaflow_tui.agents.process import SubprocessTurn
from tunaflow_tui.core.settings.engines import EngineConfig


def engine(fake_cli: Any, scenario: str, extra_env: dict[str, str] | None = None, **config: Any) -> ClaudeEngine:
    return ClaudeEngine(EngineConfig(name="claude", env={**fake_cli.env(scenario), **(extra_env or {})}, **config))


def request(fake_cli: Any) -> TurnRequest:
    return TurnRequest(prompt="hi", cwd=fake_cli.cwd)


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_idle_watchdog_stops_a_silent_agent(fake_cli, collect) -> None:
    t0 = time.monotonic()
    turn = engine(fake_cli, "hang", timeout_idle_s=0.5).start(request(fake_cli))
    events = await collect(turn)
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.TIMEOUT
    assert "No output for 0.5 s" in err.message
    assert time.monotonic() - t0 < 10
    assert isinstance(turn, SubprocessTurn) and turn.pid is not None
    assert not group_alive(turn.pid)


async def test_total_timeout_stops_an_agent_that_never_finishes(fake_cli, collect) -> None:
    t0 = time.monotonic()
    events = await collect(engine(fake_cli, "trickle", timeout_total_s=1.0).start(request(fake_cli)))
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.TIMEOUT
    assert "longer than 1 s" in err.message
    assert time.monotonic() - t0 < 10
    assert sum(isinstance(e, EngineError) for e in events) == 1


@pytest.mark.parametrize("scenario", ["huge-stream", "huge-line"])
async def test_output_cap_stops_a_10_mb_reply_quickly(fake_cli, collect, scenario: str) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.monotonic()
    events = await collect(engine(fake_cli, scenario, max_output_bytes=1_000_000).start(request(fake_cli)))
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.OUTPUT_TOO_LARGE
    assert time.monotonic() - t0 < 10
    if scenario == "huge-stream":
        assert 500_000 < len(err.partial_text) <= 1_000_000
        assert err.partial_text == "".join(e.text for e in events if isinstance(e, TextDelta))
    # memory stays bounded by the cap (ru_maxrss is in KiB on Linux); 10 MB would be read otherwise
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 60_000


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_cancel_mid_stream_kills_the_whole_group(fake_cli, tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    turn = engine(fake_cli, "grandchild", {"FAKE_CLI_PIDFILE": str(pidfile)}).start(request(fake_cli))
    assert isinstance(turn, SubprocessTurn)
    events = []
    grandchild = 0
    try:
        async for event in turn:
            events.append(event)
            if isinstance(event, SessionStarted):  # the init line came after the grandchild's SIGTERM handler
                grandchild = int(pidfile.read_text())
                await turn.cancel()
                # gone once cancel returns (the grandchild outlives a SIGTERM; it would sleep 600 s)
                until_sync(lambda pid=grandchild: not alive(pid), "the SIGTERM-deaf grandchild gone", limit=10)
    finally:
        if grandchild and alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.CANCELLED
    assert sum(isinstance(e, EngineError | FinalMessage) for e in events) == 1
    assert turn.pid is not None and not group_alive(turn.pid)


async def test_cancel_keeps_the_partial_text(fake_cli) -> None:
    turn = engine(fake_cli, "slow-ok").start(request(fake_cli))
    events = []
    async for event in turn:
        events.append(event)
        if isinstance(event, TextDelta) and event.text == " from":
            await turn.cancel()
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.CANCELLED
    assert err.partial_text == "Hello from"


async def test_cancel_before_start_never_spawns(fake_cli, collect) -> None:
    turn = engine(fake_cli, "ok").start(request(fake_cli))
    await turn.cancel()
    events = await collect(turn)
    assert len(events) == 1 and isinstance(events[0], EngineError) and events[0].kind is ErrorKind.CANCELLED
    assert fake_cli.calls() == []


async def test_stopping_iteration_early_kills_the_process(fake_cli, tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    turn = engine(fake_cli, "grandchild", {"FAKE_CLI_PIDFILE": str(pidfile)}).start(request(fake_cli))
    assert isinstance(turn, SubprocessTurn)
    stream = turn.__aiter__()
    await stream.__anext__()
    await stream.aclose()  # type: ignore[attr-defined]
    assert turn.pid is not None and not group_alive(turn.pid)


async def test_missing_binary_names_the_command_and_the_fix(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "ok", command="claude-not-installed-here").start(request(fake_cli)))
    assert len(events) == 1
    err = events[0]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.BINARY_MISSING
    assert "claude-not-installed-here" in err.message and "[engines.claude]" in err.message


async def test_secret_values_never_appear_in_events(fake_cli, collect) -> None:
    secret = "sk-ant-very-secret-value-123456"
    eng = engine(fake_cli, "leak", {"LEAKY_API_KEY": secret})
    events = await collect(eng.start(request(fake_cli)))
    err = events[-1]
    assert isinstance(err, EngineError)
    assert "***" in err.stderr_tail
    assert secret not in repr(events)


async def test_concurrent_turns_do_not_interfere(fake_cli, collect) -> None:
    results = await asyncio.gather(*(collect(engine(fake_cli, "ok").start(request(fake_cli))) for _ in range(3)))
    assert all(r[-1] == FinalMessage("Hello from the fake model.") for r in results)
