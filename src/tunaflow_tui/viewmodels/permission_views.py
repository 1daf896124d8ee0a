"""What a permission card shows: an agent's question before it uses a tool, made inert for the screen."""

from __future__ import annotations

from dataclasses import dataclass

from tunaflow_tui.agents.permissions import PermissionAnswer, PermissionRequest
from tunaflow_tui.core.terminal_text import neutralize

#: diff lines a card shows before it says how many more there are (the card stays compact at 80×24)
DIFF_LINES = 8

#: the states a card takes once its question is settled, besides the answers
WITHDRAWN = "withdrawn"
TIMED_OUT = "timeout"

STATE_WORDS = {
    "open": "",
    PermissionAnswer.ALLOW_ONCE.value: "allowed once",
    PermissionAnswer.ALLOW_ALWAYS.value: "allowed for the rest of this session",
    PermissionAnswer.DENY.value: "denied: the agent was told no",
    WITHDRAWN: "not answered: the turn ended first (cancelled), so the agent was told cancelled",
    TIMED_OUT: "not answered in time: the turn's idle timeout stopped it, and the agent was told cancelled",
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
    state: str = "open"  # open | allow_once | allow_always | deny | withdrawn | timeout
    role: str = ""
    """The asking agent's role (``Architect``): the decision queue names the question by it."""

    @property
    def is_open(self) -> bool:
        """True while the question waits for an answer."""
        return self.state == "open"

    @property
    def state_words(self) -> str:
        """The card's closing line once the question is settled."""
        return STATE_WORDS.get(self.state, self.state)


def settled_state(answer: PermissionAnswer | None, reason: str) -> str:
    """The card's state once its question closed: the answer, else why nobody's answer came."""
    if answer is not None:
        return answer.value
    return TIMED_OUT if reason == TIMED_OUT else WITHDRAWN


def card_view(request_id: int, conversation_id: str, request: PermissionRequest) -> PermissionCardView:
    """The view of one question; the agent's words are made inert (no escape sequence reaches the screen)."""
    target = request.command or ", ".join(request.paths)
    lines = [neutralize(line) for line in request.diff.splitlines() if not line.startswith(("---", "+++"))]
    return PermissionCardView(
        request_id=request_id, conversation_id=conversation_id,
        asker=neutralize(f"{request.engine} ({request.role.capitalize()})"),
        title=" ".join(neutralize(request.title).split()) or "a tool", target=neutralize(target),
        diff=tuple(lines[:DIFF_LINES]), diff_more=max(len(lines) - DIFF_LINES, 0),
        role=neutralize(request.role.capitalize()))
