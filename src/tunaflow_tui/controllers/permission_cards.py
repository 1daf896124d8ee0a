"""Permission questions from agents as decision cards: what each card shows, and where its answer goes.

The runtime reports a question (:class:`~tunaflow_tui.runtime.events.PermissionAsked`) and its end
(:class:`~tunaflow_tui.runtime.events.PermissionSettled`); this controller turns them into card views
for the app to show and passes the user's key to the runtime's permission desk. A key pressed on a
card whose question was withdrawn (the turn was cancelled or ran out of time) changes nothing.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Protocol

from tunaflow_tui.agents.permissions import PermissionAnswer
from tunaflow_tui.runtime.events import PermissionAsked, PermissionSettled, RuntimeEvent
from tunaflow_tui.viewmodels.permission_views import PermissionCardView, card_view, settled_state


class PermissionPort(Protocol):
    """What the controller needs from the app: show a card, update it, tell the user something."""

    async def show_permission(self, view: PermissionCardView) -> None:
        """Show a new card."""
        ...

    async def update_permission(self, view: PermissionCardView) -> None:
        """Show the card's new state."""
        ...

    def tell(self, text: str) -> None:
        """A short notice."""
        ...


class PermissionAnswering(Protocol):
    """Where answers go (the runtime's :class:`~tunaflow_tui.runtime.permission_desk.PermissionDesk`)."""

    def answer(self, request_id: int, answer: PermissionAnswer) -> bool:
        """Answer an open question; False when it is no longer open."""
        ...


class PermissionCards:
    """Keeps one view per question (the open ones, and the last settled one of each conversation) and
    routes the user's answers."""

    def __init__(self, port: PermissionPort, desk: PermissionAnswering) -> None:
        """Show cards through ``port``; answer through ``desk``."""
        self._port = port
        self._desk = desk
        self.views: dict[int, PermissionCardView] = {}
        self.asked_at: dict[int, datetime] = {}
        """When each question still open was asked (f2 walks them with the plans' decisions, oldest first)."""

    async def on_runtime_event(self, event: RuntimeEvent) -> None:
        """A question opens a card; its end closes it."""
        if isinstance(event, PermissionAsked):
            view = card_view(event.request_id, event.conversation_id, event.request)
            self._forget_settled(event.conversation_id)
            self.views[view.request_id] = view
            self.asked_at[view.request_id] = datetime.now(UTC)
            await self._port.show_permission(view)
        elif isinstance(event, PermissionSettled):
            known = self.views.get(event.request_id)
            self.asked_at.pop(event.request_id, None)
            if known is not None:
                settled = replace(known, state=settled_state(event.answer, event.reason))
                self.views[event.request_id] = settled
                await self._port.update_permission(settled)

    def _forget_settled(self, conversation_id: str) -> None:
        for request_id, view in list(self.views.items()):
            if view.conversation_id == conversation_id and not view.is_open:
                del self.views[request_id]

    def open_views(self, conversation_id: str | None = None) -> list[PermissionCardView]:
        """The questions still waiting (of one conversation, or all), oldest first."""
        return [v for v in self.views.values() if v.is_open and conversation_id in (None, v.conversation_id)]

    def answer(self, request_id: int, answer: PermissionAnswer) -> bool:
        """Pass the user's answer on; a question no longer open is left as it is, and the user told."""
        if self._desk.answer(request_id, answer):
            return True
        self._port.tell("That question is no longer open: the agent's turn has ended.")
        return False
