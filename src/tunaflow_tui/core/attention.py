"""When to call the user back to tunaflow, and the desktop-notification escape that does it.

Two things deserve the user's attention: a decision that becomes pending (a proposal to approve, a
verdict to accept) and agents that finish their work. Neither needs a signal while the user is
looking at it; both do when the user is *elsewhere*: the terminal window is in the background,
another screen (the workflow view, help) covers the chat, or the focus is in a pane other than the
one where it happened.

The signal is the terminal bell and, if the user turned it on, a desktop notification written as
**OSC 9** (``ESC ] 9 ; text BEL``). OSC 9 was chosen over OSC 777 (``notify;title;body``) because
it is understood by the most terminals people run agents in (iTerm2, kitty, WezTerm, Ghostty,
Windows Terminal; foot and VTE-based terminals use OSC 777) and has no field separators that
agent text could break. ConEmu reads ``9;<digits>;`` as its own commands, so the text always
starts with ``tunaflow:``. The text is made inert with :func:`neutralize` (no escape sequence can
end the OSC early or start another one), flattened to one line and capped.
"""

from __future__ import annotations

from dataclasses import dataclass

from tunaflow_tui.core.terminal_text import neutralize

__all__ = [
    "NOTIFICATION_LIMIT",
    "AttentionGate",
    "Whereabouts",
    "desktop_notification",
    "is_elsewhere",
    "notification_text",
]

NOTIFICATION_LIMIT = 160
"""Longest text (in characters) a desktop notification carries."""

PREFIX = "tunaflow: "


@dataclass(frozen=True, slots=True)
class Whereabouts:
    """Where the user's attention is, as the app can tell.

    Attributes:
        app_focused: The terminal window has the focus (terminals report it with focus events).
        on_main_screen: The chat screen is showing (no workflow view, help or modal over it).
        watching: The conversation whose view holds the focus (``main``, ``branch:3``), or None
            when the focus is in neither the chat column nor the branch pane.
    """

    app_focused: bool
    on_main_screen: bool
    watching: str | None


def is_elsewhere(where: Whereabouts, conversation_id: str | None = None) -> bool:
    """True when the user is not looking at what happened.

    ``conversation_id`` is where it happened; None for a pending decision, which shows in the
    decision dock under the main chat (so a user in the main conversation sees it).
    """
    if not where.app_focused or not where.on_main_screen:
        return True
    return where.watching != (conversation_id or "main")


class AttentionGate:
    """Keeps signals from piling up: at most one per ``quiet_s`` seconds, except for decisions.

    A decision always gets its signal (it waits for the user); "agents finished" is skipped when
    any signal was given less than ``quiet_s`` seconds before.
    """

    def __init__(self, quiet_s: float = 10.0) -> None:
        self.quiet_s = quiet_s
        self._last: float | None = None

    def allow(self, now: float, *, decision: bool) -> bool:
        """Whether to signal now; records the signal when it is allowed."""
        if not decision and self._last is not None and now - self._last < self.quiet_s:
            return False
        self._last = now
        return True


def notification_text(text: str, limit: int = NOTIFICATION_LIMIT) -> str:
    """``text`` as one inert line of at most ``limit`` characters, starting with ``tunaflow:``."""
    flat = " ".join(neutralize(text).split())
    room = max(1, limit - len(PREFIX))
    if len(flat) > room:
        flat = flat[: room - 1].rstrip() + "…"
    return PREFIX + flat


def desktop_notification(text: str, limit: int = NOTIFICATION_LIMIT) -> str:
    """The OSC 9 escape sequence that asks the terminal to show ``text`` as a desktop notification."""
    return f"\x1b]9;{notification_text(text, limit)}\x07"
