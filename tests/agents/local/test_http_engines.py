"""OpenAI-compatible (SSE) and Ollama (NDJSON) engines against a real local HTTP server."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest

from tunaflow_tui.agents.agent_events import (
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    TextDelta,
    Usage,
)
from tunaflow_tui.agents.base import Engine, TurnRequest
from tunaflow_tui.agents.ollama import OllamaEngine
from tunaflow_tui.agents.openai_compat import OpenAICompatEngine
from tunaflow_tui.core.settings.engines import EngineConfig


def _engine(kind: str, base: str, model: str, **extra: Any) -> Engine:
    if kind == "openai":
        return OpenAICompatEngine(EngineConfig(name="local", type="openai-compatible", base_url=f"{base}/v1",
                                               model=model, **extra))
    return OllamaEngine(EngineConfig(name="ollama", type="ollama", base_url=base, model=model, **extra))


async def _collect(engine: Engine, prompt: str = "hi", system: str = "be brief") -> list[EngineEvent]:
    turn = engine.start(TurnRequest(prompt=prompt, cwd=Path("."), system=system))
    return [event async for event in turn]


def _text(events: list[EngineEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


BOTH = pytest.mark.parametrize("kind", ["openai", "ollama"])


async def test_openai_streams_text_and_usage_and_sends_the_documented_request(fake_llm: Any) -> None:
    events = await _collect(_engine("openai", fake_llm.url, "ok"), prompt="write a haiku", system="persona")
    assert _text(events) == "Hello, world"  # reasoning_content and malformed lines are not shown
    assert events[-1] == FinalMessage("Hello, world")
    assert Usage(input_tokens=12, output_tokens=3) in events
    request = fake_llm.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["stream"] is True
    assert request["body"]["stream_options"] == {"include_usage": True}
    assert request["body"]["messages"] == [
        {"role": "system", "content": "persona"}, {"role": "user", "content": "write a haiku"}]
    assert "Authorization" not in request["headers"]


async def test_ollama_streams_ndjson_deltas_and_final_counts(fake_llm: Any) -> None:
    events = await _collect(_engine("ollama", fake_llm.url, "ok"))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo"]
    assert events[-2:] == [Usage(input_tokens=21, output_tokens=2), FinalMessage("Hello")]
    request = fake_llm.requests[0]
    assert request["path"] == "/api/chat" and request["body"]["stream"] is True
    assert request["body"]["messages"][-1] == {"role": "user", "content": "hi"}


async def test_api_key_comes_from_the_named_env_var(fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = _engine("openai", fake_llm.url, "auth", api_key_env="MY_LLM_KEY")
    monkeypatch.delenv("MY_LLM_KEY", raising=False)
    events = await _collect(engine)
    assert isinstance(events[-1], EngineError) and events[-1].kind is ErrorKind.NOT_LOGGED_IN
    assert "MY_LLM_KEY" in events[-1].message and fake_llm.requests == []

    monkeypatch.setenv("MY_LLM_KEY", "wrong")
    events = await _collect(engine)
    assert isinstance(events[-1], EngineError) and events[-1].kind is ErrorKind.AUTH_REJECTED
    assert "invalid api key" in events[-1].message and "wrong" not in events[-1].message

    monkeypatch.setenv("MY_LLM_KEY", "sekret-123")
    events = await _collect(engine)
    assert events[-1] == FinalMessage("Hello, world")
    assert fake_llm.requests[-1]["headers"]["Authorization"] == "Bearer sekret-123"


@BOTH
async def test_missing_model_is_a_bad_request_with_the_servers_message(fake_llm: Any, kind: str) -> None:
    events = await _collect(_engine(kind, fake_llm.url, "missing"))
    assert len(events) == 1 and isinstance(events[0], EngineError)
    assert events[0].kind is ErrorKind.BAD_REQUEST and "model 'missing' not found" in events[0].message


@BOTH
async def test_rate_limit_and_server_failure(fake_llm: Any, kind: str) -> None:
    busy = await _collect(_engine(kind, fake_llm.url, "busy"))
    assert isinstance(busy[-1], EngineError) and busy[-1].kind is ErrorKind.RATE_LIMITED
    boom = await _collect(_engine(kind, fake_llm.url, "boom"))
    assert isinstance(boom[-1], EngineError) and boom[-1].kind is ErrorKind.CRASHED
    assert "internal failure" in boom[-1].message


@BOTH
async def test_connection_refused_says_the_server_is_not_running(kind: str) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    events = await _collect(_engine(kind, f"http://127.0.0.1:{port}", "ok"))
    assert len(events) == 1 and isinstance(events[0], EngineError)
    assert events[0].kind is ErrorKind.CRASHED
    assert f"cannot reach http://127.0.0.1:{port}" in events[0].message and "is the server running?" in events[0].message


@BOTH
async def test_dropped_connection_mid_stream_keeps_the_partial_text(fake_llm: Any, kind: str) -> None:
    events = await _collect(_engine(kind, fake_llm.url, "drop"))
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.CRASHED
    assert error.partial_text == _text(events) and error.partial_text != ""


@BOTH
async def test_error_line_mid_stream_ends_the_turn(fake_llm: Any, kind: str) -> None:
    events = await _collect(_engine(kind, fake_llm.url, "midstream-error"))
    assert isinstance(events[-1], EngineError)
    assert "model runner has unexpectedly stopped" in events[-1].message


@BOTH
async def test_idle_timeout(fake_llm: Any, kind: str) -> None:
    events = await _collect(_engine(kind, fake_llm.url, "slow", timeout_idle_s=0.3))
    assert isinstance(events[-1], EngineError) and events[-1].kind is ErrorKind.TIMEOUT
    assert "no output" in events[-1].message


@BOTH
async def test_total_timeout_while_output_keeps_coming(fake_llm: Any, kind: str) -> None:
    events = await _collect(_engine(kind, fake_llm.url, "trickle", timeout_total_s=1.0))
    assert isinstance(events[-1], EngineError) and events[-1].kind is ErrorKind.TIMEOUT
    assert events[-1].partial_text.startswith("x")


@BOTH
async def test_output_cap(fake_llm: Any, kind: str) -> None:
    events = await _collect(_engine(kind, fake_llm.url, "trickle", max_output_bytes=5))
    assert isinstance(events[-1], EngineError) and events[-1].kind is ErrorKind.OUTPUT_TOO_LARGE
    assert events[-1].partial_text == "xxxxx"


@BOTH
async def test_cancel_mid_stream_closes_it_with_partial_text(fake_llm: Any, kind: str) -> None:
    turn = _engine(kind, fake_llm.url, "trickle").start(TurnRequest(prompt="hi", cwd=Path(".")))
    events: list[EngineEvent] = []
    async with asyncio.timeout(5):
        async for event in turn:
            events.append(event)
            if len(events) == 3:
                await turn.cancel()
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.CANCELLED
    assert error.partial_text == _text(events) and error.partial_text.startswith("xxx")
    assert len(error.partial_text) < 20  # the stream was closed, not read to its end


async def test_missing_configuration_is_reported_without_a_request(fake_llm: Any) -> None:
    no_model = await _collect(_engine("openai", fake_llm.url, ""))
    no_url = await _collect(OpenAICompatEngine(EngineConfig(name="lm", type="openai-compatible", model="m")))
    for events in (no_model, no_url):
        assert isinstance(events[-1], EngineError) and events[-1].kind is ErrorKind.BAD_REQUEST
    assert fake_llm.requests == []
