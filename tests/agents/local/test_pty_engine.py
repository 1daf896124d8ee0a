"""The pty engine drives a real interactive program without blocking the event loop."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from tests.support.waiting import until

from tunaflow_tui.agents.agent_events import EngineError, EngineEvent, ErrorKind, FinalMessage, TextDelta
from tunaflow_tui.agents.base import TurnRequest
from tunaflow_tui.agents.pty_engine import PtyEngine, PtyTurn, strip_ansi
from tunaflow_tui.core.settings.engines import EngineConfig

REPL = str(Path(__file__).with_name("fake_repl.py"))


def _engine(prompt_pattern: str = r"^> $", **extra: object) -> PtyEngine:
    config = EngineConfig(name="repl", type="pty", command=sys.executable, extra_args=["-u", REPL],
                          prompt_pattern=prompt_pattern, **extra)  # type: ignore[arg-type]
    return PtyEngine(config)


async def _collect(engine: PtyEngine, prompt: str, cwd: Path) -> list[EngineEvent]:
    async with asyncio.timeout(20):
        return [event async for event in engine.start(TurnRequest(prompt=prompt, cwd=cwd))]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_strip_ansi_removes_colours_titles_and_carriage_returns() -> None:
    assert strip_ansi("\x1b]0;t\x07\x1b[1;32mok\x1b[0m\r\n\x1b[2K") == "ok\n"


async def test_reply_ends_when_the_prompt_returns_and_is_clean(tmp_path: Path) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    events = await _collect(_engine(), "hello\nworld", tmp_path)
    task.cancel()
    final = events[-1]
    assert isinstance(final, FinalMessage)
    assert final.text == "You said: hello world\ndone here."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).strip() == final.text
    assert "\x1b" not in final.text and "> " not in final.text and "Welcome" not in final.text
    assert ticks >= 10  # the loop kept running while the program answered


async def test_a_program_that_asks_where_its_cursor_is_gets_the_answer_and_goes_on(tmp_path: Path) -> None:
    # codex's TUI dies when nobody answers its cursor position query: the terminal the engine runs the
    # program in answers it, as the native CLI pane does
    config = EngineConfig(name="repl", type="pty", command=sys.executable, extra_args=["-u", REPL, "--cpr"],
                          prompt_pattern=r"^> $", timeout_idle_s=5)
    events = await _collect(PtyEngine(config), "hello", tmp_path)
    assert events[-1] == FinalMessage("You said: hello\ndone here.")


async def test_reply_ends_after_silence_when_the_prompt_never_returns(tmp_path: Path) -> None:
    events = await _collect(_engine(idle_end_s=0.4), "silent", tmp_path)
    assert events[-1] == FinalMessage("thinking aloud\nand never prompting again")


async def test_without_a_prompt_pattern_silence_means_ready(tmp_path: Path) -> None:
    events = await _collect(_engine(prompt_pattern="", idle_end_s=0.3), "ping", tmp_path)
    final = events[-1]
    assert isinstance(final, FinalMessage) and final.text.startswith("You said: ping")


async def test_exit_status_decides_between_final_and_crash(tmp_path: Path) -> None:
    ok = await _collect(_engine(), "bye", tmp_path)
    assert ok[-1] == FinalMessage("goodbye")
    crashed = await _collect(_engine(), "crash", tmp_path)
    error = crashed[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.CRASHED
    assert error.exit_code == 3 and error.partial_text == "fatal: something broke"


async def test_cancel_terminates_the_program(tmp_path: Path) -> None:
    turn = _engine().start(TurnRequest(prompt="slow", cwd=tmp_path))
    assert isinstance(turn, PtyTurn)
    events: list[EngineEvent] = []
    async with asyncio.timeout(10):
        async for event in turn:
            events.append(event)
            if len(events) == 3:
                await turn.cancel()
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.CANCELLED
    assert error.partial_text.startswith("line 0")
    assert turn.child_pid is not None and not _alive(turn.child_pid)


async def test_missing_binary(tmp_path: Path) -> None:
    engine = PtyEngine(EngineConfig(name="x", type="pty", command="no-such-cli-here"))
    events = await _collect(engine, "hi", tmp_path)
    assert len(events) == 1 and isinstance(events[0], EngineError)
    assert events[0].kind is ErrorKind.BINARY_MISSING and "no-such-cli-here" in events[0].message


async def test_idle_timeout_before_the_prompt(tmp_path: Path) -> None:
    events = await _collect(_engine(prompt_pattern=r"^never$", timeout_idle_s=0.5), "hi", tmp_path)
    assert isinstance(events[-1], EngineError) and events[-1].kind is ErrorKind.TIMEOUT


@pytest.mark.parametrize("cap", [10])
async def test_output_cap(tmp_path: Path, cap: int) -> None:
    events = await _collect(_engine(max_output_bytes=cap), "slow", tmp_path)
    assert isinstance(events[-1], EngineError) and events[-1].kind is ErrorKind.OUTPUT_TOO_LARGE


async def test_a_helper_that_left_the_session_ends_with_the_turn(tmp_path: Path) -> None:
    pidfile = tmp_path / "helper.pid"
    events = await _collect(_engine(env={"FAKE_REPL_PIDFILE": str(pidfile)}), "daemon", tmp_path)
    assert events[-1] == FinalMessage("helper started")
    helper = int(pidfile.read_text())
    await until(None, lambda: not _running(helper), "the helper to be killed", limit=10)


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"
