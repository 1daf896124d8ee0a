"""Run one agent turn into a conversation: stream it into the database and report it live.

The reply is stored as a ``streaming`` message the moment the turn starts, its text is persisted
on a timer while it streams — a finished block within half a second, whatever comes next (see
:mod:`.reply_persistence`) — and its final status is written when the engine ends the turn. A process killed mid-turn therefore leaves a message the next start marks ``interrupted``
with its partial text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tunaflow_tui.agents.agent_events import (
    EngineError,
    ErrorKind,
    FinalMessage,
    Notice,
    ProcessStarted,
    SessionStarted,
    TextDelta,
    ToolUse,
)
from tunaflow_tui.agents.base import Engine, Turn, TurnRequest
from tunaflow_tui.core.marker_prose import ProseStream
from tunaflow_tui.core.markers import ParseResult, parse_markers
from tunaflow_tui.core.processes import ProcessIdentity
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.leases import LeaseLost, TurnLease
from tunaflow_tui.core.storage.records import MessageRecord
from tunaflow_tui.core.turns import ToolLine, Usage
from tunaflow_tui.core.workflow.event_text import USER_CANCELLED
from tunaflow_tui.runtime.events import (
    MessageActivity,
    MessageDelta,
    MessageFinished,
    MessageStarted,
    NoticeRaised,
    Observer,
    ToolActivity,
    UsageReported,
)
from tunaflow_tui.runtime.leftovers import AgentStillRunning, find_leftovers
from tunaflow_tui.runtime.reply_persistence import ReplyPersister
from tunaflow_tui.runtime.shared_guard import SharedGitGuard
from tunaflow_tui.runtime.turn_leases import LeaseKeeper

MarkerProgress = Callable[[ParseResult], None]
"""Told the reply so far, parsed, whenever a marker arrives while it streams."""



@dataclass(frozen=True, slots=True)
class TurnResult:
    """How a turn ended: the stored message, the full text, what the markers said, any error."""

    message: MessageRecord
    text: str
    parse: ParseResult
    error: EngineError | None

    @property
    def ok(self) -> bool:
        """True when the engine finished the turn without error."""
        return self.error is None

    @property
    def cancelled_by_user(self) -> bool:
        """True when the user stopped the turn (f4, "Cancel agent"): not an error of the agent."""
        return self.message.status == "interrupted" and self.message.error_message == USER_CANCELLED


class _Starting:
    """A turn between its call and its agent's start (lease, git snapshot, leftovers): cancellable too."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self.cancelled: str | None = None
        """Why it was cancelled before its agent started (the agent is then stopped as it starts)."""


class TurnRunner:
    """Runs turns and keeps track of the running ones so they can be cancelled."""

    def __init__(self, store: Store, emit: Observer, guard: SharedGitGuard | None = None) -> None:
        self._store = store
        self._emit = emit
        self._guard = guard
        self._running: dict[int, tuple[str, Turn]] = {}  # message id -> (conversation, turn)
        self._starting: set[_Starting] = set()  # turns called whose agent has not started yet
        self.stop_reason: str | None = None
        self._cancel_reasons: dict[int, str] = {}  # message id -> why it was cancelled (e.g. "cancelled by you")
        """Why every running turn is being stopped (set before cancelling them, e.g. ``stopped by SIGTERM``)."""
        self.leases = LeaseKeeper(store, on_lost=self._lease_lost)
        """The conversations' leases this process holds: one turn per conversation across processes."""
        self._background: set[asyncio.Task[int]] = set()

    def _lease_lost(self, lease: TurnLease) -> None:
        # another process took the conversation over: this turn writes nothing more, so stop its agent
        task = asyncio.get_running_loop().create_task(
            self.cancel(lease.conversation_id, reason="another tunaflow process took this conversation over"))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @property
    def running_conversations(self) -> tuple[str, ...]:
        """Conversations with a turn in progress."""
        return tuple(dict.fromkeys(cid for cid, _turn in self._running.values()))

    async def cancel(self, conversation_id: str | None = None, *, reason: str | None = None) -> int:
        """Cancel the turns in ``conversation_id`` (or every running turn); returns how many.

        ``reason`` is what the interrupted replies record (e.g. "cancelled by you").
        """
        targets = [(mid, t) for mid, (cid, t) in list(self._running.items()) if conversation_id in (None, cid)]
        # a turn still starting (its status already says the agent is working) stops as its agent starts
        early = [s for s in self._starting if s.cancelled is None and conversation_id in (None, s.conversation_id)]
        for starting in early:
            starting.cancelled = reason or "cancelled"
        for message_id, turn in targets:
            if reason:
                self._cancel_reasons[message_id] = reason
            await turn.cancel()
        return len(targets) + len(early)

    async def run(
        self,
        *,
        engine: Engine,
        model: str,
        conversation_id: str,
        role: str,
        request: TurnRequest,
        on_markers: MarkerProgress | None = None,
        plan_id: int | None = None,
        meta: Mapping[str, object] | None = None,
    ) -> TurnResult:
        """Run ``request`` on ``engine`` and store the reply in ``conversation_id``.

        ``plan_id`` is the plan the turn works for, recorded with its process group. ``meta`` is stored
        with the reply from its start (e.g. which roundtable seat and round it answers).

        Raises :class:`AgentStillRunning`, before anything is stored, when an agent that an earlier
        tunaflow started in this conversation still runs, and
        :class:`~tunaflow_tui.core.storage.leases.TurnInProgress` while another process holds the
        conversation's lease (its turn is being written there). The turn holds the lease while it
        runs; every write of its reply checks it, so a turn whose lease was taken over writes nothing.

        ``on_markers`` is called while the reply streams, each time a marker comment arrives, with
        the text so far parsed for ``role`` (so the markers' validity is the same as at the end).

        A turn outside the plan's own git guard runs inside the runner's :class:`SharedGitGuard`: git's
        shared hooks and configuration are put back after it if the agent changed them.
        """
        starting = _Starting(conversation_id)
        self._starting.add(starting)
        try:
            async with self.leases.holding(conversation_id, role) as lease:
                guard = self._guard if self._guard is not None and self._guard.covers(role, plan_id) else None
                shared = await guard.before() if guard is not None else None
                try:
                    return await self._run(engine=engine, model=model, conversation_id=conversation_id, role=role,
                                           request=request, on_markers=on_markers, plan_id=plan_id, meta=meta,
                                           lease=lease, starting=starting)
                finally:
                    if guard is not None:
                        await guard.after(shared, f"The {role} agent ({engine.name})", conversation_id)
        finally:
            self._starting.discard(starting)

    async def _run(
        self,
        *,
        engine: Engine,
        model: str,
        conversation_id: str,
        role: str,
        request: TurnRequest,
        on_markers: MarkerProgress | None,
        plan_id: int | None,
        meta: Mapping[str, object] | None,
        lease: TurnLease,
        starting: _Starting,
    ) -> TurnResult:
        store = self._store
        leftovers = find_leftovers(store, conversations=(conversation_id,))
        if leftovers:  # never a second agent beside one an earlier tunaflow left running here
            raise AgentStillRunning(leftovers)
        before = store.get_conversation(conversation_id)
        previous_session = (before.native_engine, before.native_session_id) if before is not None else (None, None)
        with store.fenced(lease):
            message = store.add_message(
                conversation_id, "assistant", "", persona=role, engine=engine.name, model=model or None,
                status="streaming", meta=meta,
            )
            store.attach_lease_message(lease, message.id)
        self._emit(MessageStarted(conversation_id, message.id, role, engine.name, model))
        text_parts: list[str] = []
        tools: list[ToolLine] = []
        display = ProseStream()
        usage: Usage | None = None
        session_id: str | None = None
        final_text: str | None = None
        error: EngineError | None = None
        saved = [0, 0]  # characters of text and tool lines stored so far

        def save() -> None:
            content = "".join(text_parts)
            if (len(content), len(tools)) != (saved[0], saved[1]):
                with store.fenced(lease):  # a turn whose lease was taken over writes nothing more
                    store.update_message(message.id, content=content, tools=tools)
                saved[0], saved[1] = len(content), len(tools)

        persister = ReplyPersister(save)
        last_char = ""
        processes: list[int] = []  # records of the process groups this turn started
        turn: Turn | None = None
        try:
            turn = engine.start(request)
            self._running[message.id] = (conversation_id, turn)
            self._starting.discard(starting)  # from here on it is cancelled as a running turn
            if starting.cancelled is not None:  # cancelled while it was starting
                self._cancel_reasons[message.id] = starting.cancelled
                await turn.cancel()
            async for event in turn:
                if isinstance(event, TextDelta):
                    text_parts.append(event.text)
                    seen = display.markers_seen
                    step = display.feed(event.text)
                    if step.text:
                        self._emit(MessageDelta(conversation_id, message.id, step.text))
                    if step.activity is not None:
                        self._emit(MessageActivity(conversation_id, message.id, step.activity))
                    if on_markers is not None and display.markers_seen > seen:
                        self._report_markers(on_markers, "".join(text_parts), role, conversation_id, message.id)
                    if event.text:
                        persister.changed(block_done="\n\n" in last_char + event.text)
                        last_char = event.text[-1]
                elif isinstance(event, ToolUse):
                    if not tools or tools[-1] != event.tool:
                        tools.append(event.tool)
                    persister.changed(block_done=True)  # the text before a tool call is a finished block
                    self._emit(ToolActivity(conversation_id, message.id, event.tool, event.status))
                elif isinstance(event, Usage):
                    usage = event
                    self._emit(UsageReported(conversation_id, message.id, event))  # the live meter
                elif isinstance(event, SessionStarted):
                    session_id = event.session_id
                    store.set_native_session(conversation_id, engine.name, session_id)
                elif isinstance(event, ProcessStarted):
                    identity = ProcessIdentity(event.pid, event.pgid, event.start_ticks)
                    processes.append(store.record_process(
                        "agent", identity, label=f"{role} agent ({engine.name})", conversation_id=conversation_id,
                        message_id=message.id, plan_id=plan_id).id)
                elif isinstance(event, Notice):
                    self._emit(NoticeRaised(event.message, event.level, conversation_id, message.id))
                elif isinstance(event, FinalMessage):
                    final_text = event.text
                elif isinstance(event, EngineError):
                    error = event
        except asyncio.CancelledError as exc:
            if turn is not None:
                await turn.cancel()  # ends the agent's process group before the reply is marked
            reason = self.stop_reason or (exc.args[0] if exc.args and isinstance(exc.args[0], str) else "cancelled")
            error = EngineError(ErrorKind.CANCELLED, reason, partial_text="".join(text_parts))
            raise
        except Exception as exc:  # an engine bug must not lose the message or hang the cycle
            error = EngineError(ErrorKind.CRASHED, f"engine failed: {exc}", partial_text="".join(text_parts))
        finally:
            persister.close()
            for record_id in processes:  # the engine has ended its process group by now
                store.forget_process(record_id)
            self._running.pop(message.id, None)
            try:
                with store.fenced(lease):
                    message = self._finish(message, text_parts, final_text, error, usage, session_id, tools)
            except LeaseLost as lost:
                error = EngineError(ErrorKind.CANCELLED, str(lost), partial_text="".join(text_parts))
                message = store.get_message(message.id) or message
            if session_id is not None and message.status == "error" and not message.content.strip():
                # A session that failed before writing anything may have no transcript to resume:
                # the next turn goes on from the session the conversation had before.
                engine_name, old_session = previous_session
                store.set_native_session(conversation_id, engine_name or engine.name, old_session)
        tail = display.finish()
        if tail.text:
            self._emit(MessageDelta(conversation_id, message.id, tail.text))
        self._emit(
            MessageFinished(
                conversation_id, message.id, message.status, message.error_kind, message.error_message
            )
        )
        parse = parse_markers(message.content, role)
        return TurnResult(message, message.content, parse, error)

    def _report_markers(
        self, on_markers: MarkerProgress, text: str, role: str, conversation_id: str, message_id: int
    ) -> None:
        try:
            on_markers(parse_markers(text, role))
        except Exception as exc:  # progress is a courtesy: the turn goes on, the end of it is authoritative
            self._emit(NoticeRaised(f"Could not apply a marker while the reply streamed: {exc}", "warning",
                                    conversation_id, message_id))

    def _finish(
        self,
        message: MessageRecord,
        text_parts: list[str],
        final_text: str | None,
        error: EngineError | None,
        usage: Usage | None,
        session_id: str | None,
        tools: list[ToolLine],
    ) -> MessageRecord:
        streamed = "".join(text_parts)
        if error is None and final_text is None:
            error = EngineError(ErrorKind.MALFORMED_OUTPUT, "the engine ended the turn without a result")
        if error is None:
            content = final_text if final_text else streamed
            return self._store.update_message(
                message.id, content=content, status="done", usage=usage, native_session_id=session_id, tools=tools
            )
        content = streamed or error.partial_text
        cancelled_because = self._cancel_reasons.pop(message.id, None)
        detail = error.message
        if error.kind == ErrorKind.CANCELLED:
            detail = self.stop_reason or cancelled_because or detail
        if error.stderr_tail:
            detail = f"{detail}\n\n{error.stderr_tail}"
        status = "interrupted" if error.kind == ErrorKind.CANCELLED else "error"
        return self._store.update_message(
            message.id,
            content=content,
            status=status,
            usage=usage,
            native_session_id=session_id,
            error_kind=str(error.kind),
            error_message=detail,
            tools=tools,
        )
