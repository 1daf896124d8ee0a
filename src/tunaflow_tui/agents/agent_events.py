"""Typed events that every engine yields while a turn runs.

An engine turns one prompt into an async stream of these events. The stream always ends with
exactly one terminal event: :class:`FinalMessage` on success or :class:`EngineError` on failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from tunaflow_tui.core.turns import ToolLine, Usage

__all__ = [
    "TERMINAL_EVENTS",
    "EngineError",
    "EngineEvent",
    "ErrorKind",
    "FinalMessage",
    "Notice",
    "SessionStarted",
    "TextDelta",
    "ToolLine",
    "ToolUse",
    "Usage",
]


class ErrorKind(StrEnum):
    """Why a turn failed; the UI turns each kind into an actionable error card."""

    BINARY_MISSING = "binary_missing"
    NOT_LOGGED_IN = "not_logged_in"
    AUTH_REJECTED = "auth_rejected"
    RATE_LIMITED = "rate_limited"
    UNTRUSTED_FOLDER = "untrusted_folder"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    MALFORMED_OUTPUT = "malformed_output"
    CANCELLED = "cancelled"
    OUTPUT_TOO_LARGE = "output_too_large"
    BAD_REQUEST = "bad_request"


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the assistant's visible reply, in order."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolUse:
    """The agent used a tool (read a file, ran a command, edited a file)."""

    tool: ToolLine
    status: str = "started"  # started | completed | failed | denied


@dataclass(frozen=True, slots=True)
class SessionStarted:
    """The engine's native session id, to be stored and resumed exactly on the next turn."""

    session_id: str


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should see that does not end the turn (retry, permission denial, warning)."""

    message: str
    level: str = "info"  # info | warning


@dataclass(frozen=True, slots=True)
class ProcessStarted:
    """The engine started a process group for the turn (recorded, so no crash can hide it)."""

    pid: int
    pgid: int
    start_ticks: int | None = None


@dataclass(frozen=True, slots=True)
class FinalMessage:
    """The turn finished successfully; ``text`` is the complete reply."""

    text: str


@dataclass(frozen=True, slots=True)
class EngineError:
    """The turn failed; ``stderr_tail`` holds the last lines of the process's stderr, if any."""

    kind: ErrorKind
    message: str
    stderr_tail: str = ""
    exit_code: int | None = None
    partial_text: str = ""


EngineEvent = (
    TextDelta | ToolUse | Usage | SessionStarted | Notice | ProcessStarted | FinalMessage | EngineError
)

TERMINAL_EVENTS = (FinalMessage, EngineError)
