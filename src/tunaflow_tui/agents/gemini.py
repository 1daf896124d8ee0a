"""Gemini CLI (``gemini --output-format stream-json``) as an engine.

The prompt goes in on stdin (headless because stdin/stdout are not a terminal; no size limit and no
risk of a prompt that looks like a flag). The persona is written to a private temporary file passed
as ``GEMINI_SYSTEM_MD`` and removed after the turn. A new conversation gets ``--session-id <uuid4>``,
later turns ``--resume <uuid>``. ``--skip-trust`` avoids exit 55 in a fresh worktree.

Permission profiles: READ_ONLY and CHAT → ``--approval-mode default`` (headless, write/shell tools
are not even registered; ``plan`` is NOT used because headless plan mode can switch itself to yolo);
EDIT → ``--approval-mode auto_edit``, plus ``--policy`` with a rule that denies ``git push`` shell
commands unless pushing is allowed (``data/policies/gemini-no-push.toml``).
"""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from tunaflow_tui.agents.agent_events import (
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    Notice,
    SessionStarted,
    TextDelta,
    ToolLine,
    ToolUse,
    Usage,
)
from tunaflow_tui.agents.base import Engine, PermissionProfile, Turn, TurnRequest
from tunaflow_tui.agents.json_fields import token_count
from tunaflow_tui.agents.process import (
    ProcessSpec,
    StreamParser,
    SubprocessTurn,
    binary_hint,
    merged_env,
    shorten,
    tool_summary,
)
from tunaflow_tui.core.settings.engines import EngineConfig

#: gemini's FatalError exit codes
EXIT_AUTH, EXIT_INPUT, EXIT_SANDBOX, EXIT_CONFIG, EXIT_TURN_LIMIT, EXIT_TOOL, EXIT_UNTRUSTED = (
    41, 42, 44, 52, 53, 54, 55)
EXIT_CANCELLED = 130
_HTTP_CODE = re.compile(r'"code"\s*:\s*(\d{3})')


def http_status_from_exit(code: int) -> int | None:
    """In JSON modes gemini exits with ``HTTP status & 0xFF``: 144 → 400, 145 → 401, 173 → 429."""
    if code < 128 or code == EXIT_CANCELLED:
        return None
    for status in (code + 256, code + 512):
        if 400 <= status <= 599:
            return status
    return None



class GeminiStreamParser(StreamParser):
    """Parses ``gemini --output-format stream-json`` lines."""

    def __init__(self) -> None:
        """Start with an empty reply."""
        self._text: list[str] = []
        self._tools: dict[str, tuple[str, str]] = {}
        self._result: dict[str, Any] | None = None
        self._session_reported = False

    @property
    def partial_text(self) -> str:
        """The assistant's text so far."""
        return "".join(self._text)

    def on_json(self, obj: dict[str, Any]) -> list[EngineEvent]:
        """Events for one stream-json object."""
        kind = obj.get("type")
        if kind == "init" and isinstance(obj.get("session_id"), str) and not self._session_reported:
            self._session_reported = True
            return [SessionStarted(obj["session_id"])]
        if kind == "message" and obj.get("role") == "assistant" and isinstance(obj.get("content"), str):
            self._text.append(obj["content"])
            return [TextDelta(obj["content"])]
        if kind == "tool_use":
            name = str(obj.get("tool_name") or "tool")
            summary = tool_summary(obj.get("parameters"))
            self._tools[str(obj.get("tool_id"))] = (name, summary)
            return [ToolUse(ToolLine(name, summary), "started")]
        if kind == "tool_result":
            name, summary = self._tools.get(str(obj.get("tool_id")), ("tool", ""))
            status = "completed" if obj.get("status") == "success" else "failed"
            return [ToolUse(ToolLine(name, summary), status)]
        if kind == "error":
            level = "warning" if obj.get("severity") != "info" else "info"
            return [Notice(shorten(f"Gemini: {obj.get('message', '')}", 300), level)]
        if kind == "result":
            self._result = obj
            stats = obj.get("stats") or {}
            return [Usage(input_tokens=token_count(stats.get("input_tokens")),
                          output_tokens=token_count(stats.get("output_tokens")),
                          cached_tokens=token_count(stats.get("cached")), cost_usd=None)]
        return []

    def finish(self, exit_code: int, stderr_tail: str, malformed_lines: int) -> FinalMessage | EngineError:
        """Success needs a ``result`` with ``status: success`` and exit 0; else map the exit code."""
        result = self._result or {}
        if result.get("status") == "success" and exit_code == 0:
            return FinalMessage(self.partial_text)
        message = str((result.get("error") or {}).get("message") or "")
        detail = message or _last_line(stderr_tail) or f"Gemini exited with code {exit_code}."
        lowered = f"{message}\n{stderr_tail}".lower()
        if exit_code == EXIT_AUTH:
            if "please set an auth method" in lowered:
                return EngineError(ErrorKind.NOT_LOGGED_IN,
                                   "Gemini has no credentials: set GEMINI_API_KEY, or run `gemini` once "
                                   "to sign in.")
            return EngineError(ErrorKind.AUTH_REJECTED, f"Gemini's credentials were rejected: {detail}")
        if exit_code == EXIT_UNTRUSTED:
            return EngineError(ErrorKind.UNTRUSTED_FOLDER, "Gemini refused to run in an untrusted folder.")
        if exit_code == EXIT_INPUT:
            return EngineError(ErrorKind.BAD_REQUEST, f"Gemini rejected the request: {detail}")
        if exit_code == EXIT_CANCELLED:
            return EngineError(ErrorKind.CANCELLED, "Gemini was cancelled.")
        if exit_code == EXIT_CONFIG:
            return EngineError(ErrorKind.CRASHED, f"Gemini's configuration is invalid: {detail}")
        if exit_code == EXIT_TURN_LIMIT:
            return EngineError(ErrorKind.CRASHED, f"Gemini reached its turn limit: {detail}")
        status = http_status_from_exit(exit_code)
        if status is None and (match := _HTTP_CODE.search(message)):
            status = int(match.group(1))
        if status in (401, 403) or "api key not valid" in lowered:
            return EngineError(ErrorKind.AUTH_REJECTED, f"Gemini's credentials were rejected: {detail}")
        if status == 429 or "resource_exhausted" in lowered:
            return EngineError(ErrorKind.RATE_LIMITED, f"Gemini is rate limited: {detail}")
        if status is not None and 400 <= status < 500:
            return EngineError(ErrorKind.BAD_REQUEST, f"Gemini API error {status}: {detail}")
        if not self._result and exit_code == 0:
            return EngineError(ErrorKind.MALFORMED_OUTPUT, "Gemini finished without a result line.")
        return EngineError(ErrorKind.CRASHED, f"Gemini failed: {detail}")


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return shorten(lines[-1], 300) if lines else ""


def no_push_policy() -> Path:
    """The packaged policy file that denies ``git push`` shell commands."""
    return Path(str(resources.files("tunaflow_tui") / "data" / "policies" / "gemini-no-push.toml"))


class _PersonaFile:
    """The persona as a private temporary file named by GEMINI_SYSTEM_MD, for one turn only."""

    def __init__(self, text: str, env: dict[str, str]) -> None:
        self._text = text
        self._env = env
        self._path: Path | None = None

    async def create(self) -> EngineError | None:
        """Write the file just before the process starts (nothing is written for an empty persona)."""
        if not self._text:
            return None
        fd, name = tempfile.mkstemp(prefix="tunaflow-persona-", suffix=".md")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(self._text)
        self._path = Path(name)
        self._env["GEMINI_SYSTEM_MD"] = name
        return None

    def remove(self) -> None:
        """Delete the file once the turn is over."""
        if self._path is not None:
            self._path.unlink(missing_ok=True)


class GeminiEngine(Engine):
    """Runs turns with the ``gemini`` CLI in headless stream-json mode."""

    #: every flag this adapter can put on the command line (checked against ``gemini --help``)
    FLAGS: ClassVar[frozenset[str]] = frozenset({
        "--output-format", "--skip-trust", "-m", "--approval-mode", "--session-id", "--resume", "--policy",
    })
    DEFAULT_COMMAND: ClassVar[str] = "gemini"

    def __init__(self, config: EngineConfig) -> None:
        """Configure the engine; nothing runs until ``start``."""
        self.config = config
        self.name = config.name or "gemini"
        self.type = "gemini"

    def build_argv(self, request: TurnRequest, new_session_id: str | None) -> list[str]:
        """The argv for one turn (the prompt itself goes on stdin)."""
        argv = [self.config.command or self.DEFAULT_COMMAND, "--output-format", "stream-json", "--skip-trust"]
        if self.config.model:
            argv += ["-m", self.config.model]
        mode = "auto_edit" if request.profile is PermissionProfile.EDIT else "default"
        argv += ["--approval-mode", mode]
        if request.profile is PermissionProfile.EDIT and not request.allow_push:
            argv += ["--policy", str(no_push_policy())]
        if request.resume_session_id and not request.fork:
            argv += ["--resume", request.resume_session_id]
        elif new_session_id:
            argv += ["--session-id", new_session_id]
        return argv + list(self.config.extra_args)

    def start(self, request: TurnRequest) -> Turn:
        """Start a turn (a fork on gemini starts a new session: the caller sends the context)."""
        resuming = bool(request.resume_session_id) and not request.fork
        new_id = None if resuming else str(uuid.uuid4())
        env = merged_env(self.config.env, request.extra_env)
        persona = _PersonaFile(request.system, env)
        spec = ProcessSpec(
            argv=self.build_argv(request, new_id),
            cwd=request.cwd,
            env=env,
            stdin_data=request.prompt.encode("utf-8"),
            timeout_idle_s=self.config.timeout_idle_s,
            timeout_total_s=self.config.timeout_total_s,
            max_output_bytes=self.config.max_output_bytes,
            config_hint=binary_hint(self.name, self.DEFAULT_COMMAND),
            cleanup=[persona.remove],
        )
        return SubprocessTurn(spec, GeminiStreamParser(), persona.create)
