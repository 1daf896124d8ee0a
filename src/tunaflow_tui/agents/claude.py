"""Claude Code (``claude -p --output-format stream-json``) as an engine.

The prompt goes in on stdin (so a prompt that starts with ``-`` or is very long is safe), the
persona via ``--append-system-prompt``. A new conversation gets a fresh ``--session-id``; later turns
``--resume`` it exactly (``--fork-session`` for a branch). Success is judged by the final ``result``
line's ``is_error`` — auth and API failures arrive as ``subtype: success`` with ``is_error: true``.

Permission profiles:
- READ_ONLY: ``--tools Read,Grep,Glob --permission-mode plan`` (the model cannot even see Edit/Write/Bash);
- EDIT: ``--permission-mode acceptEdits --allowedTools Bash`` (edits and shell commands are approved,
  because a Developer must be able to run the tests; it works in its own worktree), plus
  ``--disallowedTools "Bash(git push:*)"`` unless pushing is allowed (a deny rule beats the allow);
- CHAT: Claude's default permissions (nothing is auto-approved in ``-p`` mode).
"""

from __future__ import annotations

import uuid
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

READ_ONLY_TOOLS = "Read,Grep,Glob"



class ClaudeStreamParser(StreamParser):
    """Parses ``claude -p --output-format stream-json --verbose --include-partial-messages`` lines."""

    def __init__(self) -> None:
        """Start with an empty reply."""
        self._text: list[str] = []
        self._partial_ids: set[str] = set()
        self._tool_names: dict[str, tuple[str, str]] = {}
        self._session_reported = False
        self._result: dict[str, Any] | None = None
        self._assistant_error = ""
        self._block_open = False

    @property
    def partial_text(self) -> str:
        """The reply so far."""
        return "".join(self._text)

    def _add_text(self, text: str, new_block: bool) -> list[EngineEvent]:
        events: list[EngineEvent] = []
        if new_block and self._text and not self.partial_text.endswith("\n\n"):
            sep = "\n\n" if not self.partial_text.endswith("\n") else "\n"
            self._text.append(sep)
            events.append(TextDelta(sep))
        if text:
            self._text.append(text)
            events.append(TextDelta(text))
        return events

    def on_json(self, obj: dict[str, Any]) -> list[EngineEvent]:
        """Events for one stream-json object."""
        kind = obj.get("type")
        if kind == "system":
            return self._on_system(obj)
        if obj.get("parent_tool_use_id"):
            return []  # a sub-agent's own output is not the reply
        if kind == "stream_event":
            return self._on_stream_event(obj.get("event") or {})
        if kind == "assistant":
            return self._on_assistant(obj)
        if kind == "user":
            return self._on_tool_results(obj)
        if kind == "result":
            self._result = obj
            return self.final_events()
        return []

    def _on_system(self, obj: dict[str, Any]) -> list[EngineEvent]:
        subtype = obj.get("subtype")
        if subtype == "init" and not self._session_reported and isinstance(obj.get("session_id"), str):
            self._session_reported = True
            return [SessionStarted(obj["session_id"])]
        if subtype == "api_retry":
            status = obj.get("error_status")
            reason = f"HTTP {status}" if status else str(obj.get("error") or "unknown error")
            return [Notice(f"Claude API request failed ({reason}); retry {obj.get('attempt')} of "
                           f"{obj.get('max_retries')}.", "warning")]
        return []

    def _on_stream_event(self, event: dict[str, Any]) -> list[EngineEvent]:
        etype = event.get("type")
        if etype == "message_start":
            message_id = (event.get("message") or {}).get("id")
            if isinstance(message_id, str):
                self._partial_ids.add(message_id)
            return []
        if etype == "content_block_start":
            block = event.get("content_block") or {}
            if block.get("type") == "text":
                self._block_open = True
            return []
        if etype == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                new_block = self._block_open
                self._block_open = False
                return self._add_text(delta["text"], new_block)
        return []

    def _on_assistant(self, obj: dict[str, Any]) -> list[EngineEvent]:
        message = obj.get("message") or {}
        if obj.get("error"):
            # a synthetic error message ("Not logged in", "Invalid API key"): it becomes the error card
            texts = [b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text"]
            self._assistant_error = f"{obj['error']}: {' '.join(texts)}".strip()
            return []
        streamed = message.get("id") in self._partial_ids
        events: list[EngineEvent] = []
        for block in message.get("content") or []:
            btype = block.get("type")
            if btype == "text" and not streamed and isinstance(block.get("text"), str):
                events += self._add_text(block["text"], True)
            elif btype == "tool_use":
                name = str(block.get("name") or "tool")
                summary = tool_summary(block.get("input"))
                if isinstance(block.get("id"), str):
                    self._tool_names[block["id"]] = (name, summary)
                events.append(ToolUse(ToolLine(name, summary), "started"))
        return events

    def _on_tool_results(self, obj: dict[str, Any]) -> list[EngineEvent]:
        events: list[EngineEvent] = []
        content = (obj.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                name, summary = self._tool_names.get(str(block.get("tool_use_id")), ("tool", ""))
                status = "failed" if block.get("is_error") else "completed"
                events.append(ToolUse(ToolLine(name, summary), status))
        return events

    def _usage_events(self, result: dict[str, Any]) -> list[EngineEvent]:
        usage = result.get("usage") or {}
        cost = result.get("total_cost_usd")
        return [Usage(
            input_tokens=token_count(usage.get("input_tokens"))
            + token_count(usage.get("cache_creation_input_tokens")),
            output_tokens=token_count(usage.get("output_tokens")),
            cached_tokens=token_count(usage.get("cache_read_input_tokens")),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
        )]

    def final_events(self) -> list[EngineEvent]:
        """Usage and permission-denial notices from the ``result`` line (before the terminal event)."""
        result = self._result
        if result is None:
            return []
        events = self._usage_events(result)
        for denial in result.get("permission_denials") or []:
            if isinstance(denial, dict):
                target = tool_summary(denial.get("tool_input"))
                events.append(Notice(shorten(f"Claude was not allowed to use {denial.get('tool_name', 'a tool')}"
                                             f"{' on ' + target if target else ''}.", 200), "warning"))
        return events

    def finish(self, exit_code: int, stderr_tail: str, malformed_lines: int) -> FinalMessage | EngineError:
        """Judge the turn by the ``result`` line (``is_error``), else by exit code and stderr."""
        result = self._result
        if result is None:
            if "Invalid session ID" in stderr_tail:
                return EngineError(ErrorKind.BAD_REQUEST, "Claude rejected the session id.")
            if exit_code == 0:
                return EngineError(ErrorKind.MALFORMED_OUTPUT,
                                   "Claude finished without a result line; its output could not be read.")
            return EngineError(ErrorKind.CRASHED, f"Claude exited with code {exit_code} without a result.")
        if not result.get("is_error"):
            text = self.partial_text or str(result.get("result") or "")
            return FinalMessage(text)
        return self._classify(result)

    def _classify(self, result: dict[str, Any]) -> EngineError:
        text = str(result.get("result") or "")
        errors = [str(e) for e in result.get("errors") or []]
        detail = "; ".join(errors) or text or self._assistant_error or "Claude reported an error."
        status = result.get("api_error_status")
        lowered = f"{text} {self._assistant_error} {detail}".lower()
        if "not logged in" in lowered:
            return EngineError(ErrorKind.NOT_LOGGED_IN,
                               f"{detail} — run `claude` and /login, or set ANTHROPIC_API_KEY.")
        if status in (401, 403) or "authentication_failed" in lowered:
            return EngineError(ErrorKind.AUTH_REJECTED, f"Claude's credentials were rejected: {detail}")
        if status == 429 or "rate_limit" in lowered:
            return EngineError(ErrorKind.RATE_LIMITED, f"Claude is rate limited: {detail}")
        if any("no conversation found" in e.lower() for e in errors):
            return EngineError(ErrorKind.BAD_REQUEST, f"The Claude session cannot be resumed: {detail}")
        subtype = str(result.get("subtype") or "")
        prefix = f"Claude stopped ({subtype})" if subtype.startswith("error_") else "Claude failed"
        return EngineError(ErrorKind.CRASHED, f"{prefix}: {detail}")


NO_PUSH_RULE = "Bash(git push:*)"
"""Claude's permission rule that denies every ``git push …`` command."""


class ClaudeEngine(Engine):
    """Runs turns with the ``claude`` CLI in print mode with streaming JSON output."""

    #: every flag this adapter can put on the command line (checked against ``claude --help``)
    FLAGS: ClassVar[frozenset[str]] = frozenset({
        "-p", "--output-format", "--verbose", "--include-partial-messages", "--append-system-prompt",
        "--model", "--session-id", "--resume", "--fork-session", "--tools", "--permission-mode",
        "--allowedTools", "--disallowedTools",
    })
    DEFAULT_COMMAND: ClassVar[str] = "claude"

    def __init__(self, config: EngineConfig) -> None:
        """Configure the engine; nothing runs until ``start``."""
        self.config = config
        self.name = config.name or "claude"
        self.type = "claude"

    @property
    def supports_native_fork(self) -> bool:
        """Claude can resume a session into a new one (``--resume ID --fork-session``)."""
        return True

    def build_argv(self, request: TurnRequest, new_session_id: str | None) -> list[str]:
        """The argv for one turn (the prompt itself goes on stdin)."""
        argv = [self.config.command or self.DEFAULT_COMMAND, "-p", "--output-format", "stream-json",
                "--verbose", "--include-partial-messages"]
        if self.config.model:
            argv += ["--model", self.config.model]
        if request.system:
            argv += ["--append-system-prompt", request.system]
        if request.profile is PermissionProfile.READ_ONLY:
            argv += ["--tools", READ_ONLY_TOOLS, "--permission-mode", "plan"]
        elif request.profile is PermissionProfile.EDIT:
            argv += ["--permission-mode", "acceptEdits", "--allowedTools", "Bash"]
            if not request.allow_push:
                argv += ["--disallowedTools", NO_PUSH_RULE]
        if request.resume_session_id:
            argv += ["--resume", request.resume_session_id]
            if request.fork:
                argv.append("--fork-session")
        elif new_session_id:
            argv += ["--session-id", new_session_id]
        return argv + list(self.config.extra_args)

    def start(self, request: TurnRequest) -> Turn:
        """Start a turn; a new conversation gets a fresh session id, a later one resumes exactly."""
        new_id = None if request.resume_session_id else str(uuid.uuid4())
        spec = ProcessSpec(
            argv=self.build_argv(request, new_id),
            cwd=request.cwd,
            env=merged_env(self.config.env, request.extra_env),
            stdin_data=request.prompt.encode("utf-8"),
            timeout_idle_s=self.config.timeout_idle_s,
            timeout_total_s=self.config.timeout_total_s,
            max_output_bytes=self.config.max_output_bytes,
            config_hint=binary_hint(self.name, self.DEFAULT_COMMAND),
        )
        return SubprocessTurn(spec, ClaudeStreamParser())
