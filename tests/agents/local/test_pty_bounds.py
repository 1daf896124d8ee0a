"""The pty engine types a long prompt whole, and bounds what a flooding program prints."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from tunaflow_tui.agents.agent_events import EngineError, EngineEvent, ErrorKind, FinalMessage
from tunaflow_tui.agents.base import TurnRequest
from tunaflow_tui.agents.pty_engine import PtyEngine
from tunaflow_tui.core.settings.engines import EngineConfig

REPL = str(Path(__file__).with_name("fake_repl.py"))
SAMPLE_REVIEWER_PROMPT = 4_356  # characters in the sample reviewer prompt: more than a terminal line holds


def _engine(*args: str, **extra: object) -> PtyEngine:
    config = EngineConfig(name="repl", type="pty", command=sys.executable, extra_args=["-u", REPL, *args],
                          prompt_pattern=r"^> $", **extra)  # type: ignore[arg-type]
    return PtyEngine(config)


async def _collect(engine: PtyEngine, prompt: str, cwd: Path) -> list[EngineEvent]:
    async with asyncio.timeout(60):
        return [event async for event in engine.start(TurnRequest(prompt=prompt, cwd=cwd))]


@pytest.mark.parametrize("size", [SAMPLE_REVIEWER_PROMPT, 12_000, 100_000])
async def test_a_long_prompt_reaches_the_program_whole(tmp_path: Path, size: int) -> None:
    words = " ".join(f"w{i:05d}" for i in range(size // 7 + 1))
    prompt = ("count " + words)[:size - 4] + " END"
    events = await _collect(_engine(), prompt, tmp_path)
    final = events[-1]
    assert isinstance(final, FinalMessage), final
    assert final.text == f"received {len(prompt)} characters, ending with {prompt[-12:]!r}"


async def test_control_characters_in_the_prompt_are_not_typed_as_keys(tmp_path: Path) -> None:
    # ctrl+d would end the program's input and ctrl+c interrupt it, were they typed
    events = await _collect(_engine(), "count a\x04b\x03c\x1b[2Jd", tmp_path)
    final = events[-1]
    assert isinstance(final, FinalMessage), final
    # the program got one line, "count a b c [2Jd", and answered it
    assert final.text == "received 16 characters, ending with 't a b c [2Jd'"


@pytest.mark.parametrize("what", ["flood", "redraw"])
async def test_a_flood_stops_at_the_cap_whether_or_not_it_is_visible(tmp_path: Path, what: str) -> None:
    started = time.monotonic()
    events = await _collect(_engine(max_output_bytes=100_000, timeout_total_s=45), what, tmp_path)
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.OUTPUT_TOO_LARGE, error
    assert time.monotonic() - started < 30


async def test_a_program_that_stops_reading_fails_clearly_instead_of_getting_half_a_prompt(tmp_path: Path) -> None:
    started = time.monotonic()
    events = await _collect(_engine("--deaf", timeout_idle_s=1, timeout_total_s=45), "x" * 500_000, tmp_path)
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.BAD_REQUEST, error
    assert "stopped reading the prompt" in error.message and "of 500001 bytes" in error.message
    assert time.monotonic() - started < 30
