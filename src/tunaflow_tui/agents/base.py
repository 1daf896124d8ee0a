"""The one interface all engines implement."""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from tunaflow_tui.agents.agent_events import EngineEvent
from tunaflow_tui.agents.permissions import PermissionBroker


class PermissionProfile(StrEnum):
    """What an agent may do in its working directory, mapped to each CLI's own flags."""

    EDIT = "edit"  # Developer: may edit files and run commands
    READ_ONLY = "read_only"  # Reviewer, Verifier: may read, never write
    CHAT = "chat"  # Architect, Synthesizer, Summarizer: default CLI permissions, no auto-approval


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """Everything an engine needs to run one turn."""

    prompt: str
    cwd: Path
    system: str = ""
    role: str = "architect"
    profile: PermissionProfile = PermissionProfile.CHAT
    resume_session_id: str | None = None
    fork: bool = False
    extra_env: dict[str, str] = field(default_factory=dict)
    #: with the EDIT profile: may the agent push? (each CLI's own permission mechanism says no otherwise)
    allow_push: bool = False
    #: who answers the agent's permission requests the role policy leaves open (ACP engines); None: nobody,
    #: so such requests are cancelled
    permissions: PermissionBroker | None = field(default=None, compare=False)


class Turn(abc.ABC):
    """A running turn: iterate it for events; ``cancel()`` stops it (and its whole process group)."""

    @abc.abstractmethod
    def __aiter__(self) -> AsyncIterator[EngineEvent]:
        """Yield events until exactly one terminal event (FinalMessage or EngineError)."""

    @abc.abstractmethod
    async def cancel(self) -> None:
        """Stop the turn; the stream then ends with an EngineError of kind ``cancelled``."""


class Engine(abc.ABC):
    """A way to run an agent: a CLI, an HTTP endpoint, a PTY, or the built-in demo."""

    #: the engine's configured name (e.g. ``claude-sonnet``)
    name: str
    #: the engine type (claude, codex, gemini, openai-compatible, ollama, pty, acp, demo)
    type: str

    @abc.abstractmethod
    def start(self, request: TurnRequest) -> Turn:
        """Start a turn. Never raises for runtime failures: they arrive as EngineError events."""

    @property
    def supports_native_fork(self) -> bool:
        """Whether a branch can continue the parent's native session (resume + fork)."""
        return False
