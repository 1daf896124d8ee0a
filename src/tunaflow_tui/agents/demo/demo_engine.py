"""The built-in demo engine: scripted, deterministic, no network, real edits on the sample project."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

from tunaflow_tui.agents.agent_events import (
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    SessionStarted,
    TextDelta,
    Usage,
)
from tunaflow_tui.agents.base import Engine, Turn, TurnRequest
from tunaflow_tui.agents.demo import demo_roles
from tunaflow_tui.core.roundtable.seat_prompts import ballot_letters
from tunaflow_tui.core.settings.engines import EngineConfig

CHUNK_CHARS = 24
"""Streamed text is cut into pieces of about this many characters."""


def session_id_for(cwd: Path, role: str) -> str:
    """A deterministic session id per working directory and role."""
    return f"demo-{uuid.uuid5(uuid.NAMESPACE_URL, f'tunaflow-demo:{cwd.resolve()}:{role}')}"


def _chunks(text: str) -> Iterator[str]:
    start = 0
    while start < len(text):
        end = min(len(text), start + CHUNK_CHARS)
        space = text.rfind(" ", start + 1, end)
        if end < len(text) and space > start:
            end = space + 1
        yield text[start:end]
        start = end


class DemoTurn(Turn):
    """One scripted turn; file edits happen while the events stream, in order."""

    def __init__(self, config: EngineConfig, request: TurnRequest) -> None:
        self.config = config
        self.request = request
        self._cancelled = False
        self._parts: list[str] = []

    def _script(self) -> Iterator[EngineEvent]:
        request, role = self.request, self.request.role
        letters = ballot_letters(request.prompt)
        if letters is not None:  # a roundtable's ranking round, whatever the seat's role
            return demo_roles.text_steps(demo_roles.ballot(letters))
        if role == "architect":
            steps = demo_roles.architect(request.prompt, request.cwd)
        elif role == "developer":
            steps = demo_roles.developer(request.prompt, request.cwd, self.config.demo_fail_reviews)
        elif role in ("reviewer", "verifier"):
            steps = demo_roles.reviewer(request.prompt, request.cwd, self.config.demo_fail_reviews, role)
        elif role == "synthesizer":
            steps = demo_roles.synthesizer(request.prompt, request.cwd)
        elif role == "summarizer":
            steps = demo_roles.summarizer(request.prompt, request.cwd)
        else:
            steps = demo_roles.other(request.prompt, role, request.cwd)
        return demo_roles.text_steps(steps)

    async def __aiter__(self) -> AsyncIterator[EngineEvent]:
        """Stream the scripted reply with ``demo_delay_s`` between chunks."""
        delay = max(0.0, self.config.demo_delay_s)
        yield SessionStarted(self.request.resume_session_id or session_id_for(self.request.cwd, self.request.role))
        try:
            for event in self._script():
                pieces = _chunks(event.text) if isinstance(event, TextDelta) else iter((event,))
                for piece in pieces:
                    await asyncio.sleep(delay)
                    if self._cancelled:
                        yield EngineError(ErrorKind.CANCELLED, "cancelled", partial_text="".join(self._parts))
                        return
                    if isinstance(piece, str):
                        self._parts.append(piece)
                        yield TextDelta(piece)
                    else:
                        yield piece
        except OSError as exc:
            yield EngineError(ErrorKind.CRASHED, f"demo engine could not edit files: {exc}",
                              partial_text="".join(self._parts))
            return
        text = "".join(self._parts)
        yield Usage(input_tokens=(len(self.request.prompt) + len(self.request.system)) // 4,
                    output_tokens=max(1, len(text) // 4))
        yield FinalMessage(text)

    async def cancel(self) -> None:
        """Stop before the next chunk; the turn ends with ``EngineError(CANCELLED)``."""
        self._cancelled = True


class DemoEngine(Engine):
    """A built-in engine that plays every role: the word-frequency plan on the bundled sample project,
    an honest demo-note plan (:mod:`~tunaflow_tui.agents.demo.generic`) on any other."""

    type = "demo"

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.name = config.name or self.type

    def start(self, request: TurnRequest) -> Turn:
        """Start a scripted turn."""
        return DemoTurn(self.config, request)
