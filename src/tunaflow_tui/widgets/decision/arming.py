"""Decision keys that arm a moment after a card took the focus on its own.

When a proposal, a verdict or a finished plan arrives, the app may move the focus to its card. A
key the user was already typing must not decide anything: for :data:`ARMING_SECONDS` after such a
focus the card's keys do nothing. A typed character goes back to the text field the user was typing
in (together with the focus, so the rest of the word follows it); any other decision key asks to be
pressed again. A key the card does not bind acts as it would anywhere (``i`` goes to the composer).
A card the user focuses (f2, tab, a click, the palette) is armed at once.
"""

from __future__ import annotations

import time
from typing import ClassVar

from textual import events
from textual.widget import Widget
from textual.widgets import Input, TextArea


def now() -> float:
    """The clock arming is measured on (``time.monotonic``; tests put a clock they move by hand here)."""
    return time.monotonic()


ARMING_SECONDS = 0.7
"""How long a card or decision modal that appeared on its own ignores its decision keys."""

AUTO_FOCUS_WINDOW = 0.5
"""A focus that lands this soon after :meth:`ArmedCard.focus_on_its_own` is that automatic focus."""

PRESS_AGAIN = "Decision keys are armed in a moment — press again."


def typed_back_note(what: str, jump_key: str = "f2") -> str:
    """What the user is told when keys typed for something else were handed back."""
    return (f"A {what} appeared while you were typing: your keys went where you were typing. "
            f"{jump_key} focuses it.")


class ArmedCard(Widget):
    """A focusable decision card whose keys arm :data:`ARMING_SECONDS` after an automatic focus."""

    CARD_NAME: ClassVar[str] = "decision"
    """How notifications name the card ("plan proposal", "review verdict", …)."""

    _armed_at: float = 0.0
    _auto_focus: tuple[float, float, Widget | None] | None = None
    _typed_in: Widget | None = None
    _told: str = ""

    @property
    def is_armed(self) -> bool:
        """True when the card's decision keys act."""
        return now() >= self._armed_at

    def arm(self) -> None:
        """Let the decision keys act from now on (the user chose to be here)."""
        self._armed_at = 0.0
        self._typed_in = None

    def focus_on_its_own(self, arming: float = ARMING_SECONDS, *, came_from: Widget | None = None) -> None:
        """Focus the card because it arrived, not because the user asked: its keys arm after ``arming``.

        ``came_from``: where the user was, when the focus already moved on their behalf (a card replaced
        by the next one of its plan hands the focus on through the composer); by default the focused widget.
        """
        if self.has_focus:
            return
        self._auto_focus = (now(), arming, came_from or self.app.focused)
        self.focus()

    def on_focus(self) -> None:
        """An automatic focus starts the arming time; any other focus arms at once."""
        auto, self._auto_focus = self._auto_focus, None
        at = now()
        if auto is not None and at - auto[0] < AUTO_FOCUS_WINDOW:
            self._armed_at = at + auto[1]
            self._typed_in = auto[2]
            self._told = ""
        else:
            self.arm()

    def on_click(self) -> None:
        """A click is the user's choice: the keys act."""
        self.arm()

    def on_key(self, event: events.Key) -> None:
        """While arming, a typed character goes back to the text field the user was typing in; a key
        of the card's asks to be pressed again; any other key acts as it would without the card."""
        if self.is_armed or not event.is_printable:
            return
        target = self._typed_in
        typing = isinstance(target, Input | TextArea) and target.is_attached
        if not typing and not self._binds(event.key):
            return  # not a decision, and the user was not typing: `i`, a letter for the composer…
        event.stop()
        event.prevent_default()
        if target is not None and typing:
            if self.has_focus:
                self.app.set_focus(target)
            target.post_message(events.Key(event.key, event.character))
            from tunaflow_tui.keyhints import app_key

            self._tell(typed_back_note(self.CARD_NAME, app_key(self.app, "decision.jump", "f2")))
        else:
            self._tell(PRESS_AGAIN)

    def _binds(self, key: str) -> bool:
        """Whether ``key`` (as the user's keymap has it) is one of the card's own keys."""
        active = self.screen.active_bindings.get(key)
        return active is not None and active.node is self

    def keys_armed(self) -> bool:
        """True when a decision may be taken now; otherwise tells the user to press again."""
        if self.is_armed:
            return True
        self._tell(PRESS_AGAIN)
        return False

    def _tell(self, text: str) -> None:
        if self._told != text:  # once per arming, not once per key of a word
            self._told = text
            self.notify(text, timeout=6)
