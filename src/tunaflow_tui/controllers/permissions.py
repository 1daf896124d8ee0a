"""Permission questions from agents as decision cards: what each card shows, and where its answer goes.

The runtime reports a question (:class:`~tunaflow_tui.runtime.events.PermissionAsked`) and its end
(:class:`~tunaflow_tui.runtime.events.PermissionSettled`); this controller turns them into card views
for the app to show and passes the user's key to the runtime's permission desk. A key pressed on a
card whose question was withdrawn (the turn was cancelled or ran out of time) changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from tunaflow_tui.agents.permissions import PermissionAnswer, PermissionRequest
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.runtime.events import PermissionAsked, PermissionSettled, RuntimeEvent

#: diff lines a card shows before it says how many more there are
DIFF_LINES = 12

STATE_WORDS = {
    "open": "",
    PermissionAnswer.ALLOW_ONCE.value: "allowed once",
    PermissionAnswer.ALLOW_ALWAYS.value: "allowed for the rest of this session",
    PermissionAnswer.DENY.value: "denied",
    "withdrawn": "not answered: the turn ended (cancelled or idle timeout), so the agent was told cancelled",
}


@dataclass(frozen=True, slots=True)
class PermissionCardView:
    """What a permission card shows: who asks, to do what, on which file or command, and its state."""

    request_id: int
    conversation_id: str
    asker: str
    title: str
    target: str
    diff: tuple[str, ...] = ()
    diff_more: int = 0
    state: str = "open"  # open | allow_once | allow_always | deny | withdrawn

    @property
    def is_open(self) -> bool:
        """True while the question waits for an answer."""
        return self.state == "open"

    @property
    def state_words(self) -> str:
        """The card's closing line once the question is settled."""
        return STATE_WORDS.get(self.state, self.state)


def card_view(request_id: int, conversation_id: str, request: PermissionRequest) -> PermissionCardView:
    """The view of one question; the agent's words are made inert (no escape sequence reaches the screen)."""
    target = request.command or ", ".join(request.paths)
    lines = [neutralize(line) for line in request.diff.splitlines() if not line.startswith(("---", "+++"))]
    return PermissionCardView(
        request_id=request_id, conversation_id=conversation_id,
        asker=neutralize(f"{request.engine} ({request.role.capitalize()})"),
        title=" ".join(neutralize(request.title).split()) or "a tool", target=neutralize(target),
        diff=tuple(lines[:DIFF_LINES]), diff_more=max(len(lines) - DIFF_LINES, 0))


class PermissionPort(Protocol):
    """What the controller needs from the app: show a card, update it, tell the user something."""

    def show_permission(self, view: PermissionCardView) -> None:
        """Show a new card."""
        ...

    def update_permission(self, view: PermissionCardView) -> None:
        """Show the card's new state."""
        ...

    def tell(self, text: str) -> None:
        """A short notice."""
        ...


class PermissionAnswering(Protocol):
    """Where answers go (the runtime's :class:`~tunaflow_tui.runtime.permissions.PermissionDesk`)."""

    def answer(self, request_id: int, answer: PermissionAnswer) -> bool:
        """Answer an open question; False when it is no longer open."""
        ...


class PermissionCards:
    """Keeps one view per question and routes the user's answers."""

    def __init__(self, port: PermissionPort, desk: PermissionAnswering) -> None:
        """Show cards through ``port``; answer through ``desk``."""
        self._port = port
        self._desk = desk
        self.views: dict[int, PermissionCardView] = {}

    def on_runtime_event(self, event: RuntimeEvent) -> None:
        """A question opens a card; its end closes it."""
        if isinstance(event, PermissionAsked):
            view = card_view(event.request_id, event.conversation_id, event.request)
            self.views[view.request_id] = view
            self._port.show_permission(view)
        elif isinstance(event, PermissionSettled):
            known = self.views.get(event.request_id)
            if known is not None:
                settled = replace(known, state=event.answer.value if event.answer else "withdrawn")
                self.views[event.request_id] = settled
                self._port.update_permission(settled)

    def answer(self, request_id: int, answer: PermissionAnswer) -> bool:
        """Pass the user's answer on; a question no longer open is left as it is, and the user told."""
        if self._desk.answer(request_id, answer):
            return True
        self._port.tell("That question is no longer open: the agent's turn has ended.")
        return False
