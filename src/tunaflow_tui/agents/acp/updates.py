"""Turn ACP session updates into tunaflow's engine events (pure; one translator per turn).

Text chunks become the reply; tool calls become tool lines (keyed by ``toolCallId``, merged across
updates, so a permission request that names only the id still knows the file and the diff); the
agent's plan becomes one tool line with its progress. History an agent replays while a session is
loaded is dropped: tunaflow's database already holds it.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    CurrentModeUpdate,
    FileEditToolCallContent,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
)

from tunaflow_tui.agents.agent_events import EngineEvent, TextDelta, ToolLine, ToolUse, Usage
from tunaflow_tui.agents.process import shorten

#: the tool line's name for each ACP tool kind
KIND_NAMES = {
    "read": "Read", "edit": "Edit", "delete": "Delete", "move": "Move", "search": "Search",
    "execute": "Run", "think": "Think", "fetch": "Fetch", "switch_mode": "Mode",
}
_STATUS = {"completed": "completed", "failed": "failed"}


@dataclass(slots=True)
class ToolCallState:
    """What is known about one tool call so far."""

    title: str = ""
    kind: str = ""
    status: str = ""
    paths: list[str] = field(default_factory=list)
    command: str = ""
    diffs: list[tuple[str, str | None, str]] = field(default_factory=list)  # path, old, new
    shown: ToolLine | None = None
    shown_status: str = ""

    def unified_diff(self) -> str:
        """The tool's file changes as one unified diff."""
        parts: list[str] = []
        for path, old, new in self.diffs:
            parts += difflib.unified_diff((old or "").splitlines(keepends=True), new.splitlines(keepends=True),
                                          fromfile="/dev/null" if old is None else path, tofile=path)
        return "".join(parts)


def command_of(raw_input: Any) -> str:
    """The shell command a tool's raw input names, if any."""
    if not isinstance(raw_input, dict):
        return ""
    value = raw_input.get("command") or raw_input.get("cmd")
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " ".join(value)
    return value if isinstance(value, str) else ""


def paths_of(raw_input: Any) -> list[str]:
    """File paths a tool's raw input names (``file_path``, ``path``, ``absolute_path``)."""
    if not isinstance(raw_input, dict):
        return []
    return [v for k in ("file_path", "path", "absolute_path", "notebook_path")
            if isinstance(v := raw_input.get(k), str) and v]


class UpdateTranslator:
    """SDK updates → engine events for one turn in the folder ``root``."""

    def __init__(self, root: Path) -> None:
        """Start with an empty reply."""
        self.root = root.resolve()
        self.replaying = False
        self._text: list[str] = []
        self.tools: dict[str, ToolCallState] = {}
        self.context_used: tuple[int, int] | None = None
        #: the session's cumulative cost in USD as the agent last reported it (``usage_update.cost``)
        self.session_cost: float | None = None
        #: the session's cost when this turn began (0 for a new session; None when unknown)
        self.cost_baseline: float | None = None
        self.mode: str | None = None

    @property
    def text(self) -> str:
        """The reply so far."""
        return "".join(self._text)

    def on_update(self, update: object) -> list[EngineEvent]:
        """Events for one ``session/update`` (none while history is being replayed)."""
        if isinstance(update, CurrentModeUpdate):
            self.mode = update.current_mode_id
            return []
        if self.replaying:
            return []
        if isinstance(update, AgentMessageChunk):
            block = update.content
            if isinstance(block, TextContentBlock) and block.text:
                self._text.append(block.text)
                return [TextDelta(block.text)]
            return []
        if isinstance(update, ToolCallStart | ToolCallProgress):
            return self.on_tool(update)
        if isinstance(update, AgentPlanUpdate):
            return [self._plan_line(update)]
        if isinstance(update, UsageUpdate):
            self.context_used = (update.used, update.size)
            if update.cost is not None and update.cost.currency.upper() == "USD":
                self.session_cost = update.cost.amount
            return [self.usage()]
        return []

    @property
    def cost_usd(self) -> float | None:
        """This turn's cost: the session's cumulative cost less what it was when the turn began (None
        when the agent reports none, or the session's earlier cost is unknown)."""
        if self.session_cost is None or self.cost_baseline is None:
            return None
        return max(self.session_cost - self.cost_baseline, 0.0)

    def usage(self, input_tokens: int = 0, output_tokens: int = 0, cached_tokens: int = 0) -> Usage:
        """The turn's usage so far: tokens where the agent counted them, its context window, its cost."""
        used, size = self.context_used or (0, 0)
        return Usage(input_tokens=input_tokens, output_tokens=output_tokens, cached_tokens=cached_tokens,
                     cost_usd=self.cost_usd, context_used=used, context_size=size)

    def merge(self, call: ToolCallStart | ToolCallProgress | ToolCallUpdate) -> ToolCallState:
        """Fold one tool call message into what is known about it."""
        state = self.tools.setdefault(call.tool_call_id, ToolCallState())
        state.title = call.title or state.title
        state.kind = call.kind or state.kind
        state.status = call.status or state.status
        for location in call.locations or []:
            if location.path not in state.paths:
                state.paths.append(location.path)
        for path in paths_of(call.raw_input):
            if path not in state.paths:
                state.paths.append(path)
        state.command = command_of(call.raw_input) or state.command
        diffs = [c for c in call.content or [] if isinstance(c, FileEditToolCallContent)]
        if diffs:
            state.diffs = [(d.path, d.old_text, d.new_text) for d in diffs]
        return state

    def line_for(self, state: ToolCallState) -> ToolLine:
        """The tool line shown for a tool call: its kind and the file (relative to the folder) or title."""
        name = KIND_NAMES.get(state.kind, "Tool")
        if state.command:
            detail = state.command
        elif state.paths:
            detail = ", ".join(self._relative(p) for p in state.paths)
        else:
            detail = state.title
        added = removed = 0
        for _path, old, new in state.diffs:
            for line in difflib.ndiff((old or "").splitlines(), new.splitlines()):
                added += line.startswith("+ ")
                removed += line.startswith("- ")
        if state.diffs:
            detail = f"{detail} (+{added} −{removed})"
        return ToolLine(name, shorten(detail, 120))

    def on_tool(self, call: ToolCallStart | ToolCallProgress | ToolCallUpdate) -> list[EngineEvent]:
        """A tool line when a call is first known well enough to name, and when it ends."""
        state = self.merge(call)
        if not state.paths and not state.command and state.status in ("", "pending") and not state.diffs:
            return []  # a bare announcement: the next update says what it works on
        line = self.line_for(state)
        status = _STATUS.get(state.status, "started")
        if line == state.shown and status == state.shown_status:
            return []
        state.shown, state.shown_status = line, status
        return [ToolUse(line, status)]

    def _relative(self, path: str) -> str:
        try:
            return str(Path(path).relative_to(self.root)) or "."
        except ValueError:
            return path

    def _plan_line(self, plan: AgentPlanUpdate) -> ToolUse:
        entries = plan.entries
        done = sum(1 for e in entries if e.status == "completed")
        current = next((e.content for e in entries if e.status == "in_progress"), "")
        current = current or next((e.content for e in entries if e.status == "pending"), "")
        detail = f"{done}/{len(entries)} done" + (f" · {current}" if current else "")
        return ToolUse(ToolLine("Plan", shorten(detail, 120)), "completed" if done == len(entries) else "started")

