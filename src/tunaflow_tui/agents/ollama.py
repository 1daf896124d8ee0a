"""Ollama's native ``/api/chat`` endpoint, streamed as NDJSON (one JSON object per line)."""

from __future__ import annotations

from typing import Any

from tunaflow_tui.agents.agent_events import EngineError, EngineEvent, ErrorKind, Notice, Usage
from tunaflow_tui.agents.base import Engine, Turn, TurnRequest
from tunaflow_tui.agents.http_base import HttpCall, HttpStreamTurn
from tunaflow_tui.agents.json_fields import token_count
from tunaflow_tui.agents.jsonlines import decode_json_line
from tunaflow_tui.core.settings.engines import EngineConfig

DEFAULT_OLLAMA_URL = "http://localhost:11434"


class OllamaTurn(HttpStreamTurn):
    """One streamed ``POST {base_url}/api/chat``."""

    @property
    def base_url(self) -> str:
        """The configured base URL, defaulting to Ollama's local port."""
        return (self.config.base_url or DEFAULT_OLLAMA_URL).rstrip("/")

    def prepare(self) -> HttpCall | EngineError:
        """Build the streaming request; a missing model is a BAD_REQUEST."""
        if not self.config.model:
            return EngineError(ErrorKind.BAD_REQUEST, f"engine {self.config.name!r} has no model configured")
        headers = self.api_key_headers()
        if isinstance(headers, EngineError):
            return headers
        body: dict[str, Any] = {"model": self.config.model, "messages": self.messages(), "stream": True}
        return HttpCall(f"{self.base_url}/api/chat", headers, body)

    def handle_line(self, line: str) -> list[EngineEvent]:
        """Parse one NDJSON line: a ``message.content`` delta, the final ``done`` line, or an error."""
        line = line.strip()
        if not line:
            return []
        try:
            data = decode_json_line(line)
        except ValueError:
            return []
        if not isinstance(data, dict):
            return []
        if "error" in data:
            message = str(data["error"])
            kind = ErrorKind.BAD_REQUEST if "not found" in message.lower() else ErrorKind.CRASHED
            self.state.error = EngineError(kind, f"ollama: {message}", partial_text=self.state.text)
            return []
        events: list[EngineEvent] = []
        message_obj = data.get("message")
        if isinstance(message_obj, dict) and isinstance(message_obj.get("content"), str):
            events.extend(self.add_text(message_obj["content"]))
        if data.get("done") is True:
            self.state.finished = True
            self.state.usage = Usage(
                input_tokens=token_count(data.get("prompt_eval_count")),
                output_tokens=token_count(data.get("eval_count")),
            )
            if data.get("done_reason") == "length":
                events.append(Notice("the reply was cut at the model's length limit", "warning"))
        return events



class OllamaEngine(Engine):
    """An engine that talks to a local Ollama server through its native chat API."""

    type = "ollama"

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.name = config.name or self.type

    def start(self, request: TurnRequest) -> Turn:
        """Start a streamed turn (the request is sent when iteration begins)."""
        return OllamaTurn(self.config, request)
