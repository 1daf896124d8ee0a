"""OpenAI-compatible chat completions over SSE (LM Studio, llama.cpp, vLLM, Ollama's ``/v1``).

No native sessions: conversation continuity comes from the ContextPack in the prompt.
"""

from __future__ import annotations

from typing import Any

from tunaflow_tui.agents.agent_events import EngineError, EngineEvent, ErrorKind, Notice, Usage
from tunaflow_tui.agents.base import Engine, Turn, TurnRequest
from tunaflow_tui.agents.http_base import HttpCall, HttpStreamTurn
from tunaflow_tui.agents.json_fields import token_count
from tunaflow_tui.agents.jsonlines import decode_json_line
from tunaflow_tui.core.settings.engines import EngineConfig


class OpenAICompatTurn(HttpStreamTurn):
    """One streamed ``POST {base_url}/chat/completions``."""

    @property
    def base_url(self) -> str:
        """The configured base URL, e.g. ``http://localhost:1234/v1``."""
        return self.config.base_url.rstrip("/")

    def prepare(self) -> HttpCall | EngineError:
        """Build the streaming request; a missing base_url or model is a BAD_REQUEST."""
        if not self.base_url:
            return EngineError(ErrorKind.BAD_REQUEST, f"engine {self.config.name!r} has no base_url configured")
        if not self.config.model:
            return EngineError(ErrorKind.BAD_REQUEST, f"engine {self.config.name!r} has no model configured")
        headers = self.api_key_headers()
        if isinstance(headers, EngineError):
            return headers
        headers["Accept"] = "text/event-stream"
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": self.messages(),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        return HttpCall(f"{self.base_url}/chat/completions", headers, body)

    def handle_line(self, line: str) -> list[EngineEvent]:
        """Parse one SSE line: ``data: {chunk}`` or ``data: [DONE]``; anything malformed is skipped."""
        if not line.startswith("data:"):
            return []  # blank separators, ``event:``/``id:`` fields and ``:`` comments
        payload = line[5:].strip()
        if payload == "[DONE]":
            self.state.finished = True
            return []
        try:
            chunk = decode_json_line(payload)
        except ValueError:
            return []
        if not isinstance(chunk, dict):
            return []
        error = chunk.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else str(error)
            self.state.error = EngineError(
                ErrorKind.CRASHED, f"{self.base_url} reported: {message}", partial_text=self.state.text
            )
            return []
        events: list[EngineEvent] = []
        choices = chunk.get("choices")
        if isinstance(choices, list):
            for choice in choices:
                if not isinstance(choice, dict):
                    continue
                delta = choice.get("delta")
                if isinstance(delta, dict) and isinstance(delta.get("content"), str):
                    events.extend(self.add_text(delta["content"]))
                if choice.get("finish_reason") == "length":
                    events.append(Notice("the reply was cut at the model's length limit", "warning"))
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.state.usage = Usage(
                input_tokens=token_count(usage.get("prompt_tokens")),
                output_tokens=token_count(usage.get("completion_tokens")),
                cached_tokens=token_count((usage.get("prompt_tokens_details") or {}).get("cached_tokens")),
            )
        return events



class OpenAICompatEngine(Engine):
    """An engine that talks to any OpenAI-compatible ``/chat/completions`` endpoint."""

    type = "openai-compatible"

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.name = config.name or self.type

    def start(self, request: TurnRequest) -> Turn:
        """Start a streamed turn (the request is sent when iteration begins)."""
        return OpenAICompatTurn(self.config, request)
