"""Shared machinery for engines that stream a reply over HTTP (OpenAI-compatible SSE, Ollama NDJSON).

A turn runs in its own asyncio task that reads the response line by line, with an idle watchdog (from
connecting to the last byte), a total deadline and an output cap that also bounds a single line and the
bytes on the wire, and hands events to the consumer through a queue. Cancelling closes
the stream and ends the turn with ``EngineError(CANCELLED)`` carrying the partial text.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from tunaflow_tui.agents.agent_events import (
    TERMINAL_EVENTS,
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    TextDelta,
    Usage,
)
from tunaflow_tui.agents.base import Turn, TurnRequest
from tunaflow_tui.agents.jsonlines import decode_json_line
from tunaflow_tui.agents.limits import line_limit, wire_limit
from tunaflow_tui.agents.redaction import masked_events
from tunaflow_tui.core.secret_masking import SecretRegistry
from tunaflow_tui.core.settings.engines import EngineConfig

if TYPE_CHECKING:
    import httpx

_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
_T = TypeVar("_T")

#: how much of an error response is read for its message
ERROR_BODY_MAX_BYTES = 64 * 1024


class _IdleTimeout(Exception):
    """No line arrived within the idle window."""


@dataclass(slots=True)
class StreamState:
    """What a turn has received so far."""

    parts: list[str] = field(default_factory=list)
    size: int = 0
    usage: Usage | None = None
    finished: bool = False
    error: EngineError | None = None

    @property
    def text(self) -> str:
        """The reply text received so far."""
        return "".join(self.parts)


@dataclass(frozen=True, slots=True)
class HttpCall:
    """One streaming POST: where, with which headers and JSON body."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]


def server_message(raw: bytes) -> str:
    """The human message in an error body: ``{"error": {"message": …}}``, ``{"error": "…"}`` or text."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        data = decode_json_line(text)
    except ValueError:
        return text[:500]
    if isinstance(data, dict):
        error = data.get("error", data.get("message"))
        if isinstance(error, dict):
            error = error.get("message")
        if isinstance(error, str):
            return error[:500]
    return text[:500]


def error_for_status(status: int, message: str, base_url: str, partial: str = "") -> EngineError:
    """Map an HTTP error status to an actionable error kind."""
    detail = f"HTTP {status} from {base_url}: {message}" if message else f"HTTP {status} from {base_url}"
    if status in (401, 403):
        kind = ErrorKind.AUTH_REJECTED
    elif status == 429:
        kind = ErrorKind.RATE_LIMITED
    elif status in (400, 404, 405, 413, 422):
        kind = ErrorKind.BAD_REQUEST
    else:
        kind = ErrorKind.CRASHED
    return EngineError(kind, detail, partial_text=partial)


def is_loopback(url: str) -> bool:
    """Whether ``url`` points at this machine (proxies from the environment are then bypassed)."""
    host = urlsplit(url).hostname or ""
    return host in _LOOPBACK


class HttpStreamTurn(Turn, abc.ABC):
    """A turn that POSTs once and parses the streamed response line by line."""

    def __init__(self, config: EngineConfig, request: TurnRequest) -> None:
        self.config = config
        self.request = request
        self.state = StreamState()
        self._queue: asyncio.Queue[EngineEvent] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._cancelled = False
        self._done = False

    @property
    @abc.abstractmethod
    def base_url(self) -> str:
        """The server's base URL, without a trailing slash."""

    @abc.abstractmethod
    def prepare(self) -> HttpCall | EngineError:
        """Build the request, or explain why it cannot be sent (missing model, key…)."""

    @abc.abstractmethod
    def handle_line(self, line: str) -> list[EngineEvent]:
        """Parse one response line; may set ``state.finished`` or ``state.error``."""

    def messages(self) -> list[dict[str, str]]:
        """The chat messages: the persona as system message, then the prompt."""
        out = []
        if self.request.system:
            out.append({"role": "system", "content": self.request.system})
        out.append({"role": "user", "content": self.request.prompt})
        return out

    def api_key_headers(self) -> dict[str, str] | EngineError:
        """``Authorization: Bearer`` from the env var named by ``api_key_env`` (the key is never stored)."""
        name = self.config.api_key_env
        if not name:
            return {}
        key = self.request.extra_env.get(name) or os.environ.get(name)
        if not key:
            return EngineError(
                ErrorKind.NOT_LOGGED_IN,
                f"engine {self.config.name!r} reads its API key from ${name}, which is not set",
            )
        return {"Authorization": f"Bearer {key}"}

    def add_text(self, text: str) -> list[EngineEvent]:
        """Record a reply delta, enforcing the output cap."""
        if not text:
            return []
        self.state.size += len(text.encode("utf-8"))
        if self.state.size > self.config.max_output_bytes:
            self.state.error = EngineError(
                ErrorKind.OUTPUT_TOO_LARGE,
                f"reply exceeded {self.config.max_output_bytes} bytes; stopped reading",
                partial_text=self.state.text,
            )
            return []
        self.state.parts.append(text)
        return [TextDelta(text)]

    def __aiter__(self) -> AsyncIterator[EngineEvent]:
        """The turn's events with the secrets of its environment (and well-known token shapes) masked."""
        return masked_events(self._events(), SecretRegistry.from_env({**os.environ, **self.config.env, **self.request.extra_env}))

    async def _events(self) -> AsyncIterator[EngineEvent]:
        """Yield events until the terminal one."""
        if self._task is None and not self._done:
            self._task = asyncio.create_task(self._run())
        while True:
            event = await self._queue.get()
            yield event
            if isinstance(event, TERMINAL_EVENTS):
                return

    async def cancel(self) -> None:
        """Close the stream; the turn ends with ``EngineError(CANCELLED)`` and the partial text."""
        if self._done:
            return
        self._cancelled = True
        if self._task is None:
            self._finish(EngineError(ErrorKind.CANCELLED, "cancelled", partial_text=self.state.text))
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    def _finish(self, event: EngineEvent) -> None:
        if not self._done:
            self._done = True
            self._queue.put_nowait(event)

    async def _run(self) -> None:
        try:
            async with asyncio.timeout(self.config.timeout_total_s):
                terminal = await self._stream()
        except asyncio.CancelledError:
            terminal = EngineError(ErrorKind.CANCELLED, "cancelled", partial_text=self.state.text)
        except _IdleTimeout:
            terminal = EngineError(
                ErrorKind.TIMEOUT,
                f"no output from {self.base_url} for {self.config.timeout_idle_s:g}s",
                partial_text=self.state.text,
            )
        except TimeoutError:
            terminal = EngineError(
                ErrorKind.TIMEOUT,
                f"reply took longer than {self.config.timeout_total_s:g}s",
                partial_text=self.state.text,
            )
        except Exception as exc:  # a parser bug must end the turn, not leave its consumer waiting forever
            terminal = EngineError(ErrorKind.CRASHED, f"engine failed: {type(exc).__name__}: {exc}",
                                   partial_text=self.state.text)
        if self._cancelled:
            terminal = EngineError(ErrorKind.CANCELLED, "cancelled", partial_text=self.state.text)
        self._finish(terminal)

    async def _stream(self) -> EngineEvent:
        call = self.prepare()
        if isinstance(call, EngineError):
            return call
        # Imported here: ``import httpx`` pulls in rich (its CLI), which core/agents must not load.
        import httpx

        timeout = httpx.Timeout(connect=10.0, read=None, write=30.0, pool=10.0)
        # identity: a compressed body would be inflated before any cap could look at it
        headers = {**call.headers, "Accept-Encoding": "identity"}
        try:
            async with httpx.AsyncClient(timeout=timeout, trust_env=not is_loopback(call.url)) as client:
                request = client.build_request("POST", call.url, headers=headers, json=call.body)
                # connecting and waiting for the headers are watched like the body: a server that
                # accepts and never answers is as idle as one that stops mid-reply
                response = await self._within_idle(client.send(request, stream=True))
                try:
                    if response.status_code >= 400:
                        raw = await self._error_body(response, (httpx.HTTPError,))
                        return error_for_status(response.status_code, server_message(raw), self.base_url)
                    return await self._read_lines(response)
                finally:
                    await response.aclose()
        except httpx.ConnectError:
            return EngineError(ErrorKind.CRASHED, f"cannot reach {self.base_url}: is the server running?")
        except httpx.ConnectTimeout:
            return EngineError(ErrorKind.TIMEOUT, f"cannot reach {self.base_url}: connection timed out")
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            return EngineError(
                ErrorKind.CRASHED,
                f"connection to {self.base_url} dropped mid-reply ({exc.__class__.__name__})",
                partial_text=self.state.text,
            )
        except httpx.HTTPError as exc:
            return EngineError(ErrorKind.CRASHED, f"request to {self.base_url} failed: {exc}",
                               partial_text=self.state.text)

    async def _within_idle(self, step: Awaitable[_T]) -> _T:
        """Await ``step`` for at most ``timeout_idle_s``; raise :class:`_IdleTimeout` when it takes longer."""
        try:
            async with asyncio.timeout(self.config.timeout_idle_s) as idle:
                return await step
        except TimeoutError as exc:
            if idle.expired():
                raise _IdleTimeout from exc
            raise

    async def _error_body(self, response: httpx.Response, read_errors: tuple[type[Exception], ...]) -> bytes:
        """The start of an error response: at most :data:`ERROR_BODY_MAX_BYTES`, within the idle window.

        A server that sends an endless (or endlessly slow) error body gets its first bytes quoted,
        not read to the end.
        """
        body = bytearray()
        with contextlib.suppress(TimeoutError, *read_errors):
            async with asyncio.timeout(self.config.timeout_idle_s):
                async for chunk in response.aiter_raw():
                    body.extend(chunk)
                    if len(body) >= ERROR_BODY_MAX_BYTES:
                        break
        return bytes(body[:ERROR_BODY_MAX_BYTES])

    async def _read_lines(self, response: httpx.Response) -> EngineEvent:
        """Split the body into lines, each chunk within the idle window, the line and the wire bounded."""
        chunks = response.aiter_raw()
        max_line = line_limit(self.config.max_output_bytes)
        max_wire = wire_limit(self.config.max_output_bytes)
        pending = bytearray()
        received = 0
        while not self.state.finished:
            try:
                chunk = await self._within_idle(anext(chunks))
            except StopAsyncIteration:
                break
            if self._cancelled:
                raise asyncio.CancelledError
            received += len(chunk)
            pending.extend(chunk)
            if received > max_wire:
                return self._too_large(f"sent more than {max_wire} bytes")
            if len(pending) > max_line and b"\n" not in pending:
                return self._too_large(f"sent a line longer than {max_line} bytes")
            while not self.state.finished and (newline := pending.find(b"\n")) >= 0:
                line = bytes(pending[:newline])
                del pending[: newline + 1]
                failure = self._take_line(line)
                if failure is not None:
                    return failure
        if pending and not self.state.finished:
            failure = self._take_line(bytes(pending))
            if failure is not None:
                return failure
        if not self.state.finished:
            return EngineError(
                ErrorKind.CRASHED,
                f"{self.base_url} closed the stream before the reply finished",
                partial_text=self.state.text,
            )
        if self.state.usage is not None:
            self._queue.put_nowait(self.state.usage)
        return FinalMessage(self.state.text)

    def _too_large(self, what: str) -> EngineError:
        return EngineError(ErrorKind.OUTPUT_TOO_LARGE, f"{self.base_url} {what}; stopped reading",
                           partial_text=self.state.text)

    def _take_line(self, raw: bytes) -> EngineError | None:
        """Hand one line to the format's parser; the error that ends the turn, if the line carried one."""
        line = raw.decode("utf-8", errors="replace").rstrip("\r")
        for event in self.handle_line(line):
            self._queue.put_nowait(event)
        return self.state.error
