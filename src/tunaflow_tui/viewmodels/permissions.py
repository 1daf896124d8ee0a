"""What a permission card shows: an agent's question before it uses a tool, made inert for the screen."""

from __future__ import annotations

from dataclasses import dataclass

from tunaflow_tui.agents.permissions import PermissionAnswer, PermissionRequest
from tunaflow_tui.core.terminal_text import neutralize

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
