"""A real HTTP server on 127.0.0.1 that speaks the OpenAI-compatible SSE and Ollama NDJSON formats.

The scenario is chosen by the ``model`` in the request body, so one server covers every case.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

SSE_CHUNKS: list[str] = [
    'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}',
    'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"thinking hard"},"finish_reason":null}]}',
    'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}',
    "data: {not json at all",
    ": keep-alive comment",
    'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":", world"},"finish_reason":null}]}',
    'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
    'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}',
    "data: [DONE]",
]

NDJSON_LINES: list[str] = [
    '{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"Hel"},"done":false}',
    '{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}',
    "garbage line",
    '{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"lo"},"done":false}',
    '{"model":"m","created_at":"2025-01-01T00:00:01Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":1000,"load_duration":10,"prompt_eval_count":21,"prompt_eval_duration":5,"eval_count":2,"eval_duration":7}',
]


# how much a hostile scenario sends before it gives up (a client that reads it all has lost already)
HOSTILE_LIMIT = 64 * 1024 * 1024


class FakeServer:
    """Handle to the running server: its base URL and the requests it received."""

    def __init__(self, httpd: ThreadingHTTPServer) -> None:
        self.httpd = httpd
        self.port = httpd.server_address[1]
        self.requests: list[dict[str, Any]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _json(self, status: int, payload: Any) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _start_chunked(self, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_chunked(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _wait_until_client_leaves(self, timeout: float = 60.0) -> None:
        """Hold the connection open, saying nothing, until the client closes it."""
        self.connection.settimeout(timeout)
        with contextlib.suppress(OSError):
            while self.connection.recv(4096):
                pass

    def _flood(self, text: str, limit: int) -> None:
        """Send ``text`` as chunks, with no line break, until the client goes away or ``limit`` bytes."""
        sent = 0
        with contextlib.suppress(OSError):
            while sent < limit:
                self._chunk(text)
                sent += len(text)
            self._end_chunked()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        fake: FakeServer = self.server.fake  # type: ignore[attr-defined]
        fake.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
        model = body.get("model", "")
        sse = self.path.endswith("/chat/completions")
        lines = SSE_CHUNKS if sse else NDJSON_LINES
        sep = "\n\n" if sse else "\n"
        content_type = "text/event-stream" if sse else "application/x-ndjson"
        if model == "auth" and self.headers.get("Authorization") != "Bearer sekret-123":
            self._json(401, {"error": {"message": "invalid api key", "type": "auth"}})
            return
        if model == "missing":
            if sse:
                self._json(404, {"error": {"message": "model 'missing' not found", "code": "model_not_found"}})
            else:
                self._json(404, {"error": "model 'missing' not found, try pulling it first"})
            return
        if model == "busy":
            self._json(429, {"error": {"message": "too many requests"}})
            return
        if model == "boom":
            self._json(500, {"error": "internal failure"})
            return
        if model == "no-headers":  # accepts the request, then never answers
            self._wait_until_client_leaves()
            return
        if model == "endless-error":  # a 500 whose body never ends
            self.send_response(500)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._flood("upstream exploded; " * 50, limit=HOSTILE_LIMIT)
            return
        self._start_chunked(content_type)
        if model == "huge-line":  # one line that never ends
            self._flood("x" * 65536, limit=HOSTILE_LIMIT)
            return
        if model == "deep":  # a line nested past the JSON decoder's depth, then a normal reply
            self._chunk(("data: " if sse else "") + "[" * 200_000 + sep)
        if model == "drop":
            self._chunk(lines[0] + sep)
            self._chunk(lines[2] + sep if sse else lines[0] + sep)
            self.close_connection = True
            self.wfile.flush()
            self.connection.shutdown(2)  # dropped mid-stream: no terminating chunk
            return
        if model == "midstream-error":
            self._chunk(lines[0] + sep)
            self._chunk('data: {"error":{"message":"model runner has unexpectedly stopped"}}\n\n' if sse
                        else '{"error":"model runner has unexpectedly stopped"}\n')
            self._end_chunked()
            return
        if model == "slow":
            time.sleep(1.0)
        if model == "trickle":
            for _ in range(40):
                self._chunk('data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n' if sse
                            else '{"message":{"role":"assistant","content":"x"},"done":false}\n')
                time.sleep(0.05)
            self._end_chunked()
            return
        for line in lines:
            # slow, chunked stream: every line is flushed separately, some split in two
            half = len(line) // 2
            self._chunk(line[:half])
            time.sleep(0.005)
            self._chunk(line[half:] + sep)
        self._end_chunked()


class _Server(ThreadingHTTPServer):
    """The fake endpoint: a client hanging up mid-request (a cancelled or timed-out turn) is what some tests do,
    not an error to print over the test run's output; any other error is printed as the standard server does."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@pytest.fixture
def fake_llm() -> Iterator[FakeServer]:
    """A running fake LLM server on a random 127.0.0.1 port."""
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    fake = FakeServer(httpd)
    httpd.fake = fake  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield fake
    httpd.shutdown()
    httpd.server_close()
