"""HTTP engines against a hostile local server: the idle watchdog and the output cap hold from connect to EOF."""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from tunaflow_tui.agents.agent_events import EngineError, EngineEvent, ErrorKind, FinalMessage
from tunaflow_tui.agents.base import Engine, TurnRequest
from tunaflow_tui.agents.ollama import OllamaEngine
from tunaflow_tui.agents.openai_compat import OpenAICompatEngine
from tunaflow_tui.core.settings.engines import EngineConfig

BOTH = pytest.mark.parametrize("kind", ["openai", "ollama"])


def _engine(kind: str, base: str, model: str, **extra: Any) -> Engine:
    # a generous total deadline: every case here must end long before it, on the idle watchdog or a cap
    extra.setdefault("timeout_total_s", 60)
    if kind == "openai":
        return OpenAICompatEngine(EngineConfig(name="local", type="openai-compatible", base_url=f"{base}/v1",
                                               model=model, **extra))
    return OllamaEngine(EngineConfig(name="ollama", type="ollama", base_url=base, model=model, **extra))


async def _collect(engine: Engine) -> tuple[list[EngineEvent], float, int]:
    """The turn's events, how long it took and the peak of memory it allocated (bytes)."""
    started = time.monotonic()
    tracemalloc.start()
    try:
        async with asyncio.timeout(90):  # a hang fails the test instead of blocking the suite
            events = [event async for event in engine.start(TurnRequest(prompt="hi", cwd=Path(".")))]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return events, time.monotonic() - started, peak


@BOTH
async def test_a_server_that_never_sends_headers_hits_the_idle_timeout(fake_llm: Any, kind: str) -> None:
    events, took, _peak = await _collect(_engine(kind, fake_llm.url, "no-headers", timeout_idle_s=0.5))
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.TIMEOUT
    assert "no output" in error.message and "0.5s" in error.message
    assert took < 20


@BOTH
async def test_an_endless_error_body_is_quoted_not_read_to_its_end(fake_llm: Any, kind: str) -> None:
    events, took, peak = await _collect(_engine(kind, fake_llm.url, "endless-error", timeout_idle_s=5))
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.CRASHED
    assert "HTTP 500" in error.message and "upstream exploded" in error.message
    assert took < 20
    assert peak < 8_000_000  # 64 MB were on offer


@BOTH
async def test_a_huge_line_without_a_newline_stops_at_the_cap(fake_llm: Any, kind: str) -> None:
    events, took, peak = await _collect(_engine(kind, fake_llm.url, "huge-line", max_output_bytes=2_000_000))
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.OUTPUT_TOO_LARGE
    assert "line longer than 2000000 bytes" in error.message
    assert took < 20
    assert peak < 12_000_000  # 64 MB were on offer: memory grows with the cap, not with the line


@BOTH
async def test_a_line_nested_200000_deep_is_skipped(fake_llm: Any, kind: str) -> None:
    events, _took, _peak = await _collect(_engine(kind, fake_llm.url, "deep"))
    assert events[-1] == FinalMessage("Hello, world" if kind == "openai" else "Hello")
