"""Permission questions agents ask during turns, open until someone answers them.

Each turn gets a broker for its conversation; a question becomes a :class:`PermissionAsked` event
(the app shows a decision card; ``tunaflow run`` has nobody to ask, so the turn's idle timeout ends
it) and waits. :meth:`PermissionDesk.answer` settles it; a question the engine withdrew (the turn was
cancelled or timed out) is settled as ``None`` with the reason the engine gave when it cancelled the
wait (``task.cancel("timeout")``), and a late answer to it is ignored.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass

from tunaflow_tui.agents.permissions import PermissionAnswer, PermissionBroker, PermissionRequest
from tunaflow_tui.runtime.events import PermissionAsked, PermissionSettled, RuntimeEvent

#: why a question was withdrawn when the engine did not say (the turn was cancelled, or its agent went away)
WITHDRAWN = "cancelled"


@dataclass(frozen=True, slots=True)
class OpenQuestion:
    """A question waiting for an answer."""

    request_id: int
    conversation_id: str
    request: PermissionRequest


class PermissionDesk:
    """The runtime's open permission questions, answered by id."""

    def __init__(self, emit: Callable[[RuntimeEvent], None]) -> None:
        """Report questions through ``emit``."""
        self._emit = emit
        self._ids = itertools.count(1)
        self._open: dict[int, tuple[OpenQuestion, asyncio.Future[PermissionAnswer | None]]] = {}

    def broker(self, conversation_id: str) -> PermissionBroker:
        """The broker a turn in ``conversation_id`` asks through."""
        return _ConversationBroker(self, conversation_id)

    def open_questions(self, conversation_id: str | None = None) -> list[OpenQuestion]:
        """The questions still waiting (of one conversation, or all), oldest first."""
        return [q for q, _ in self._open.values() if conversation_id in (None, q.conversation_id)]

    def answer(self, request_id: int, answer: PermissionAnswer) -> bool:
        """Answer an open question; False when it is no longer open (answered, withdrawn, or unknown)."""
        entry = self._open.get(request_id)
        if entry is None or entry[1].done():
            return False
        entry[1].set_result(answer)
        return True

    async def ask(self, conversation_id: str, request: PermissionRequest) -> PermissionAnswer | None:
        """Open a question and wait for its answer (cancelling the wait withdraws it)."""
        question = OpenQuestion(next(self._ids), conversation_id, request)
        waiting: asyncio.Future[PermissionAnswer | None] = asyncio.get_running_loop().create_future()
        self._open[question.request_id] = (question, waiting)
        answer: PermissionAnswer | None = None
        reason = ""
        try:
            self._emit(PermissionAsked(conversation_id, question.request_id, request))
            answer = await waiting
            return answer
        except asyncio.CancelledError as withdrawn:  # the engine says why with the cancel's message
            reason = str(withdrawn.args[0]) if withdrawn.args and withdrawn.args[0] else WITHDRAWN
            raise
        finally:
            self._open.pop(question.request_id, None)
            if answer is None and not reason:
                reason = WITHDRAWN
            self._emit(PermissionSettled(conversation_id, question.request_id, answer, reason))


class _ConversationBroker:
    """A :class:`PermissionBroker` that asks through the desk for one conversation."""

    def __init__(self, desk: PermissionDesk, conversation_id: str) -> None:
        self._desk = desk
        self._conversation_id = conversation_id

    async def decide(self, request: PermissionRequest) -> PermissionAnswer | None:
        return await self._desk.ask(self._conversation_id, request)
