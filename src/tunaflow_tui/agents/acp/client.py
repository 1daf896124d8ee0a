"""tunaflow's side of an ACP connection: session updates, permission requests and file access.

Every handler that produces an event puts it on the turn's queue before its first ``await``: the SDK
runs each notification as its own task, and one await first would let later chunks overtake it.
Permission requests are decided by the role policy, then by the session's "allow always" answers,
then by the user through the :class:`~tunaflow_tui.agents.permissions.PermissionBroker`; whatever
is left unanswered when the turn ends (cancel, timeout, disconnect) is answered ``cancelled``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)

from tunaflow_tui.agents.acp.files import ScopedFiles
from tunaflow_tui.agents.acp.policy import Verdict, option_for, role_verdict, verdict_answer
from tunaflow_tui.agents.acp.updates import UpdateTranslator
from tunaflow_tui.agents.agent_events import EngineEvent, Notice
from tunaflow_tui.agents.permissions import PermissionAnswer, PermissionBroker, PermissionRequest
from tunaflow_tui.agents.process import shorten

CANCELLED = RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


class TurnClient:
    """The ACP client for one turn: answers the agent and feeds ``sink`` with engine events."""

    def __init__(
        self,
        *,
        sink: Callable[[EngineEvent], None],
        files: ScopedFiles,
        translator: UpdateTranslator,
        engine: str,
        role: str,
        broker: PermissionBroker | None,
        allowed_commands: Sequence[str] = (),
        on_mode_change: Callable[[str], Awaitable[None]] | None = None,
        always: Callable[[str], set[str]] | None = None,
    ) -> None:
        """Wire the client to the turn's event queue and fences."""
        self._sink = sink
        self.files = files
        self.translator = translator
        self._engine = engine
        self._role = role
        self._broker = broker
        self._allowed_commands = tuple(allowed_commands)
        self._on_mode_change = on_mode_change
        self._waiting: set[asyncio.Future[PermissionAnswer | None]] = set()
        self._asking: set[asyncio.Task[PermissionAnswer | None]] = set()
        kept: dict[str, set[str]] = {}
        # tool kinds the user allowed for the rest of an agent session (which outlives the turn)
        self._always = always or (lambda session_id: kept.setdefault(session_id, set()))
        self.closed = False

    @property
    def permissions_pending(self) -> int:
        """How many permission requests wait for the user."""
        return len(self._waiting)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Translate one update into events (queued at once)."""
        before = self.translator.mode
        for event in self.translator.on_update(update):
            self._sink(event)
        mode = self.translator.mode
        if mode != before and mode is not None and self._on_mode_change is not None:
            await self._on_mode_change(mode)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        """Policy first, then the session's "always" answers, then the user; fail closed."""
        for event in self.translator.on_tool(tool_call):
            self._sink(event)
        state = self.translator.tools[tool_call.tool_call_id]
        request = PermissionRequest(
            engine=self._engine, role=self._role, session_id=session_id, tool_call_id=tool_call.tool_call_id,
            title=state.title or "a tool", kind=state.kind or "other", paths=tuple(state.paths),
            command=state.command, diff=state.unified_diff())
        verdict = role_verdict(request, self.files.root, self._allowed_commands)
        answer = verdict_answer(verdict)
        if verdict is Verdict.DENY:
            self._sink(Notice(shorten(f"tunaflow refused {request.title} for the {self._role}: "
                                      f"{_why_denied(request)}.", 200), "warning"))
        elif answer is None and request.kind in self._always(session_id):
            answer = PermissionAnswer.ALLOW_ONCE
        elif answer is None:
            answer = await self._ask(request)
            if answer is PermissionAnswer.ALLOW_ALWAYS:
                self._always(session_id).add(request.kind)
        if answer is None:
            return CANCELLED
        option_id = option_for(answer, [(o.option_id, o.kind) for o in options])
        if option_id is None:
            return CANCELLED
        if answer is not PermissionAnswer.DENY:
            self.files.grant(request.paths)  # what was allowed may now be written through tunaflow
        return RequestPermissionResponse(outcome=AllowedOutcome(option_id=option_id, outcome="selected"))

    async def _ask(self, request: PermissionRequest) -> PermissionAnswer | None:
        if self._broker is None or self.closed:
            self._sink(Notice(shorten(f"{request.title} needs a decision, but nobody can be asked here; "
                                      "it was cancelled.", 200), "warning"))
            return None
        waiting: asyncio.Future[PermissionAnswer | None] = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(self._broker.decide(request))
        self._waiting.add(waiting)
        self._asking.add(task)

        def answered(done: asyncio.Task[PermissionAnswer | None]) -> None:
            self._asking.discard(done)
            if waiting.done():
                return
            if done.cancelled() or done.exception() is not None:
                waiting.set_result(None)
            else:
                waiting.set_result(done.result())

        task.add_done_callback(answered)
        try:
            return await waiting
        finally:
            self._waiting.discard(waiting)

    def cancel_pending(self, reason: str = "cancelled") -> None:
        """Answer every open permission request ``cancelled`` and withdraw the questions.

        ``reason`` (``timeout`` when the turn's timeout ends it) goes with the withdrawal, so the card
        that asked can say why nobody's answer reached the agent; the first reason given stands.
        """
        if self.closed:
            return
        self.closed = True
        for waiting in list(self._waiting):
            if not waiting.done():
                waiting.set_result(None)
        for task in list(self._asking):
            task.cancel(reason)

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        """Read a file inside the turn's folder."""
        content = await asyncio.to_thread(self.files.read, path, line, limit)
        return ReadTextFileResponse(content=content)

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: Any) -> WriteTextFileResponse | None:
        """Write a file inside the turn's folder (refused for roles that only read)."""
        await asyncio.to_thread(self.files.write, path, content)
        return WriteTextFileResponse()

    def on_connect(self, conn: Any) -> None:
        """Nothing to do: the turn holds the connection."""

    async def close(self) -> None:
        """Withdraw open questions and wait until the broker's tasks have ended."""
        self.cancel_pending()
        for task in list(self._asking):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def _why_denied(request: PermissionRequest) -> str:
    if request.role in ("reviewer", "verifier"):
        return "reviewers and verifiers only read"
    return "it works outside the turn's folder"
