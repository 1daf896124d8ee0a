"""Codex CLI (``codex exec --json``) as an engine.

The prompt is written to stdin (``-``) and stdin is closed — ``codex exec`` blocks forever on an
open stdin pipe. The persona goes in as ``-c developer_instructions=<TOML string>``. A new turn's
session id is the ``thread_id`` of ``thread.started``; later turns run
``codex exec --json <flags> resume <thread_id> -`` (exec flags before ``resume``).

Codex does not fail fast without credentials (it retries, or waits for the network forever), so a
turn first checks that ``CODEX_API_KEY`` is set or ``codex login status`` succeeds.

Permission profiles: READ_ONLY → ``--sandbox read-only -c approval_policy="never"``;
EDIT → ``--sandbox workspace-write`` with ``-c sandbox_workspace_write.network_access=false`` unless
pushing is allowed (the sandbox also limits writes to the worktree and temporary folders, which keeps
most remotes on disk out of reach); CHAT → codex exec's defaults (read-only sandbox, no approvals).
"""

from __future__ import annotations

import asyncio
import contextlib
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
from tunaflow_tui.agents.json_fields import as_int, token_count
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

LOGIN_CHECK_TIMEOUT_S = 10.0
_TOML_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string (quotes, backslashes and control characters escaped)."""
    out = []
    for ch in value:
        if ch in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            out.append("\uFFFD")  # a lone surrogate cannot be represented in TOML (or UTF-8)
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'



class CodexStreamParser(StreamParser):
    """Parses ``codex exec --json`` JSONL events."""

    def __init__(self, engine: CodexEngine, known_thread: str | None) -> None:
        """``known_thread`` is the resumed thread id (None for a new thread)."""
        self._engine = engine
        self._thread = known_thread
        self._messages: list[str] = []
        self._completed = False
        self._failure = ""
        self._last_error = ""

    @property
    def partial_text(self) -> str:
        """The agent messages so far, separated by blank lines."""
        return "\n\n".join(self._messages)

    def on_json(self, obj: dict[str, Any]) -> list[EngineEvent]:
        """Events for one JSONL object."""
        kind = obj.get("type")
        if kind == "thread.started" and isinstance(obj.get("thread_id"), str):
            self._thread = obj["thread_id"]
            return [SessionStarted(obj["thread_id"])]
        if kind in ("item.started", "item.updated", "item.completed"):
            return self._on_item(str(kind), obj.get("item") or {})
        if kind == "turn.completed":
            self._completed = True
            return [self._usage(obj.get("usage") or {})]
        if kind == "turn.failed":
            self._failure = str((obj.get("error") or {}).get("message") or "the turn failed")
            return []
        if kind == "error":
            self._last_error = str(obj.get("message") or "")
            return [Notice(shorten(f"Codex: {self._last_error}", 300), "warning")]
        return []

    def _on_item(self, kind: str, item: dict[str, Any]) -> list[EngineEvent]:
        itype = item.get("type")
        done = kind == "item.completed"
        status = "started"
        if done:
            failed = item.get("status") == "failed" or as_int(item.get("exit_code")) != 0 or item.get("error")
            status = "failed" if failed else "completed"
        if kind == "item.updated":
            return []
        if itype == "agent_message" and done and isinstance(item.get("text"), str):
            text = item["text"]
            events: list[EngineEvent] = [TextDelta("\n\n")] if self._messages else []
            self._messages.append(text)
            return [*events, TextDelta(text)]
        if itype == "command_execution":
            return [ToolUse(ToolLine("shell", shorten(str(item.get("command") or ""))), status)]
        if itype == "file_change":
            paths = " ".join(str(c.get("path")) for c in item.get("changes") or [] if isinstance(c, dict))
            return [ToolUse(ToolLine("edit", shorten(paths)), status)]
        if itype == "mcp_tool_call":
            name = f"{item.get('server', 'mcp')}.{item.get('tool', 'tool')}"
            return [ToolUse(ToolLine(name, tool_summary(item.get("arguments"))), status)]
        if itype == "web_search":
            return [ToolUse(ToolLine("web_search", shorten(str(item.get("query") or ""))), status)]
        if itype == "error" and done:
            return [Notice(shorten(str(item.get("message") or ""), 300), "info")]
        return []

    def _usage(self, usage: dict[str, Any]) -> Usage:
        now = (token_count(usage.get("input_tokens")), token_count(usage.get("output_tokens")),
               token_count(usage.get("cached_input_tokens")))
        before = self._engine.thread_usage.get(self._thread or "")
        if self._thread:
            self._engine.thread_usage[self._thread] = now
        if before and all(n >= b for n, b in zip(now, before, strict=True)):
            now = (now[0] - before[0], now[1] - before[1], now[2] - before[2])
        return Usage(input_tokens=now[0], output_tokens=now[1], cached_tokens=now[2], cost_usd=None)

    def finish(self, exit_code: int, stderr_tail: str, malformed_lines: int) -> FinalMessage | EngineError:
        """Success needs ``turn.completed`` and exit 0; everything else is classified."""
        if self._completed and exit_code == 0:
            return FinalMessage(self.partial_text)
        message = self._failure or self._last_error
        lowered = f"{message}\n{stderr_tail}".lower()
        if "not inside a trusted directory" in lowered:
            return EngineError(ErrorKind.UNTRUSTED_FOLDER,
                               "Codex refused to run outside a trusted directory or git repository.")
        if "401" in lowered or "incorrect api key" in lowered or "unauthorized" in lowered:
            return EngineError(ErrorKind.AUTH_REJECTED, f"Codex's credentials were rejected: {message}")
        if "429" in lowered or "rate limit" in lowered or "too many requests" in lowered:
            return EngineError(ErrorKind.RATE_LIMITED, f"Codex is rate limited: {message}")
        if "no prompt provided" in lowered:
            return EngineError(ErrorKind.BAD_REQUEST, "Codex received no prompt.")
        if message:
            return EngineError(ErrorKind.CRASHED, f"Codex failed: {message}")
        if exit_code == 0:
            return EngineError(ErrorKind.MALFORMED_OUTPUT, "Codex finished without completing the turn.")
        return EngineError(ErrorKind.CRASHED, f"Codex exited with code {exit_code}.")


class CodexEngine(Engine):
    """Runs turns with ``codex exec --json``."""

    #: flags emitted before ``resume`` (checked against ``codex exec --help``)
    FLAGS: ClassVar[frozenset[str]] = frozenset({
        "--json", "--skip-git-repo-check", "-C", "-m", "-c", "--sandbox",
    })
    #: flags emitted after ``resume`` (checked against ``codex exec resume --help``)
    RESUME_FLAGS: ClassVar[frozenset[str]] = frozenset()
    DEFAULT_COMMAND: ClassVar[str] = "codex"

    def __init__(self, config: EngineConfig) -> None:
        """Configure the engine; nothing runs until ``start``."""
        self.config = config
        self.name = config.name or "codex"
        self.type = "codex"
        #: latest cumulative (input, output, cached) tokens per thread, to report per-turn usage
        self.thread_usage: dict[str, tuple[int, int, int]] = {}
        self._logged_in: bool | None = None

    @property
    def command(self) -> str:
        """The codex executable (name on PATH or absolute path)."""
        return self.config.command or self.DEFAULT_COMMAND

    def build_argv(self, request: TurnRequest) -> list[str]:
        """The argv for one turn; the prompt is read from stdin (``-``)."""
        argv = [self.command, "exec", "--json", "--skip-git-repo-check", "-C", str(request.cwd)]
        if self.config.model:
            argv += ["-m", self.config.model]
        if request.system:
            argv += ["-c", f"developer_instructions={toml_string(request.system)}"]
        if request.profile is PermissionProfile.READ_ONLY:
            argv += ["--sandbox", "read-only", "-c", 'approval_policy="never"']
        elif request.profile is PermissionProfile.EDIT:
            argv += ["--sandbox", "workspace-write"]
            network = "true" if request.allow_push else "false"
            argv += ["-c", f"sandbox_workspace_write.network_access={network}"]
        argv += list(self.config.extra_args)
        if request.resume_session_id and not request.fork:
            argv += ["resume", request.resume_session_id]
        return [*argv, "-"]

    def _uses_custom_provider(self) -> bool:
        joined = " ".join(self.config.extra_args)
        return "--oss" in joined or "model_provider" in joined

    async def check_credentials(self, env: dict[str, str]) -> EngineError | None:
        """NOT_LOGGED_IN unless CODEX_API_KEY is set or ``codex login status`` exits 0 (cached)."""
        if env.get("CODEX_API_KEY") or self._uses_custom_provider() or self._logged_in:
            return None
        if self._logged_in is None:
            self._logged_in = await self._login_status(env)
        if self._logged_in is None or self._logged_in:
            return None  # cannot tell (binary missing is reported by the turn itself)
        return EngineError(ErrorKind.NOT_LOGGED_IN,
                           "Codex is not logged in: run `codex login`, or set CODEX_API_KEY.")

    async def _login_status(self, env: dict[str, str]) -> bool | None:
        try:
            proc = await asyncio.create_subprocess_exec(
                self.command, "login", "status", env=env, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
        except OSError:
            return None
        try:
            return await asyncio.wait_for(proc.wait(), LOGIN_CHECK_TIMEOUT_S) == 0
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            return None

    def start(self, request: TurnRequest) -> Turn:
        """Start a turn (a fork on codex starts a new thread: the caller sends the context)."""
        env = merged_env(self.config.env, request.extra_env)
        resume = request.resume_session_id if not request.fork else None
        spec = ProcessSpec(
            argv=self.build_argv(request),
            cwd=request.cwd,
            env=env,
            stdin_data=request.prompt.encode("utf-8"),
            timeout_idle_s=self.config.timeout_idle_s,
            timeout_total_s=self.config.timeout_total_s,
            max_output_bytes=self.config.max_output_bytes,
            config_hint=binary_hint(self.name, self.DEFAULT_COMMAND),
        )

        async def preflight() -> EngineError | None:
            return await self.check_credentials(env)

        return SubprocessTurn(spec, CodexStreamParser(self, resume), preflight)
