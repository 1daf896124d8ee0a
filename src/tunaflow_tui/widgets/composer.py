"""The composer: where the user writes the next message.

**enter** sends.  A newline needs a chord, because most terminals cannot tell shift+enter or
ctrl+enter from enter (and tmux / SSH drop what little they can): **ctrl+j** (a line feed) works
everywhere, and **shift+enter** where the terminal reports it (kitty keyboard protocol).  alt+enter
is not offered: a terminal sends it as ESC CR, which reaches the app as a plain enter.  Both chords
are one binding with an id, so they can be remapped.

Keys can arrive in one burst (a slow SSH link, a macro); the newline takes its turn behind the
keys already queued for the input, so it lands after them.

**ctrl+up / ctrl+down** walk through the messages sent earlier in this session; **ctrl+home /
ctrl+end** show the chat's first / newest message while the cursor stays here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static, TextArea

from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.widgets.decision import arming
from tunaflow_tui.widgets.stream_clock import StreamClock


class ComposerInput(TextArea):
    """The text area inside the :class:`Composer`; its keys are the composer's keys."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Send", priority=True, id="composer.send"),
        Binding("ctrl+j,shift+enter", "newline", "Newline", priority=True, id="composer.newline",
                key_display="ctrl+j"),
        Binding("ctrl+up", "history(-1)", "Earlier", show=False, id="composer.history_back"),
        Binding("ctrl+down", "history(1)", "Later", show=False, id="composer.history_forward"),
        Binding("ctrl+home", "chat_jump('first')", "First message", show=False, id="composer.chat_first"),
        Binding("ctrl+end", "chat_jump('newest')", "Newest message", show=False, id="composer.chat_newest"),
    ]

    last_key_at: float | None = None
    """When a key last reached the input (on the arming clock); None before the first one."""

    def on_key(self) -> None:
        """Remember when the user last typed here (the app holds its cards back while they do, and
        streaming answers add rows less often)."""
        self.last_key_at = arming.now()
        StreamClock.of(self.app).typed()

    def action_submit(self) -> None:
        """Send what was typed before enter, after the keys already waiting for this input.

        Like the newline, the send goes through the input's own queue: letters typed before enter
        are in the message, letters typed right after it start the next one.
        """
        self.call_later(self._submit)

    def _submit(self) -> None:
        composer = next((a for a in self.ancestors if isinstance(a, Composer)), None)
        if composer is not None:
            composer.submit()

    def action_newline(self) -> None:
        """Insert a line break at the cursor, after the keys already waiting for this input.

        The binding has priority (so nothing else can claim the chord), which runs this action as
        soon as the app reads the key, possibly before letters typed just before it have reached
        the input; inserting through the input's own queue keeps the typed order.
        """
        self.call_later(self._insert_newline)

    def _insert_newline(self) -> None:
        self.insert("\n")

    def action_chat_jump(self, where: str) -> None:
        """Ask for the chat to show its first or newest message; the cursor stays here."""
        composer = next((a for a in self.ancestors if isinstance(a, Composer)), None)
        if composer is not None and where in ("first", "newest"):
            composer.post_message(Composer.ChatJump(composer, where))

    def action_history(self, step: int) -> None:
        """Show an earlier (-1) or later (+1) sent message."""
        composer = next((a for a in self.ancestors if isinstance(a, Composer)), None)
        if composer is not None:
            composer.step_history(step)


class Composer(Vertical):
    """Recipient line plus a multi-line input.

    Args:
        recipient: Who will receive the message, e.g. ``Architect (claude)``.
        placeholder: Grey text shown while the input is empty.
        cursor_blink: Blink the cursor (turned off in tests and snapshots).
    """

    HELP = """\
## Composer
- **enter** sends the message to the recipient shown above the input.
- **ctrl+j** (or **shift+enter** where the terminal reports it) starts a new line.
- **ctrl+up / ctrl+down** recall messages you sent earlier.
- **ctrl+home / ctrl+end** show the chat's first / newest message without leaving the composer.
"""

    recipient: reactive[str] = reactive("")
    """Who will receive the next message; shown above the input as ``→ Architect (claude)``."""

    vet: Callable[[str], str | None] | None = None
    """Asked before a message is sent: why it cannot be (then it stays in the input and the user is
    told), or None to send it."""

    @dataclass
    class Submitted(Message):
        """The user sent ``text`` (never empty or only whitespace)."""

        composer: Composer
        text: str

        @property
        def control(self) -> Composer:
            """The composer that sent the text."""
            return self.composer

    @dataclass
    class ChatJump(Message):
        """The user asked, from the composer, to see the chat's ``first`` or ``newest`` message."""

        composer: Composer
        where: str

        @property
        def control(self) -> Composer:
            """The composer the key was pressed in."""
            return self.composer

    def __init__(
        self,
        recipient: str = "",
        *,
        placeholder: str | None = None,
        cursor_blink: bool = True,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._placeholder = placeholder
        self._cursor_blink = cursor_blink
        self._history: list[str] = []
        self._history_index = 0
        self.set_reactive(Composer.recipient, recipient)

    def compose(self) -> ComposeResult:
        yield Static(self._recipient_content(), id="composer-recipient", markup=False)
        yield ComposerInput(
            id="composer-input",
            placeholder=self._placeholder if self._placeholder is not None else self.default_placeholder(),
            soft_wrap=True,
            show_line_numbers=False,
            compact=True,
        )

    def default_placeholder(self) -> str:
        """``Message…  (enter sends · ctrl+j new line)`` with the keys as mapped now."""
        from tunaflow_tui.keyhints import key_for

        send = key_for(self.app, ComposerInput, "composer.send", words=True)
        newline = key_for(self.app, ComposerInput, "composer.newline", words=True)
        return f"Message…  ({send} sends · {newline} new line)"

    def on_mount(self) -> None:
        self.input.cursor_blink = self._cursor_blink

    @property
    def input(self) -> ComposerInput:
        """The text area."""
        return self.query_one(ComposerInput)

    @property
    def text(self) -> str:
        """The text currently in the input."""
        return self.input.text

    def _recipient_content(self) -> Content:
        who = neutralize(self.recipient) or "nobody"
        suffix = "  (sending is paused)" if self.disabled else ""
        return Content(f"→ {who}{suffix}")

    def watch_recipient(self) -> None:
        if self.is_mounted:
            self.query_one("#composer-recipient", Static).update(self._recipient_content())

    def watch_disabled(self, disabled: bool) -> None:
        super().watch_disabled(disabled)
        if self.is_mounted:
            self.query_one("#composer-recipient", Static).update(self._recipient_content())

    def focus_input(self) -> None:
        """Put the cursor in the input."""
        self.input.focus()

    def chosen(self) -> None:
        """The user moved to the input (``i``): a card arriving right now leaves them there, as it
        would if they had typed (the app's cards wait while the user types)."""
        self.input.last_key_at = arming.now()
        self.focus_input()

    def submit(self) -> bool:
        """Send the text if there is any; returns whether a message was posted."""
        text = self.input.text
        if self.disabled or not text.strip():
            return False
        refusal = self.vet(text) if self.vet is not None else None
        if refusal is not None:  # nothing is sent: the text stays for the user to fix
            self.app.notify(refusal, severity="warning", timeout=8)
            return False
        self.post_message(self.Submitted(self, text))
        if not self._history or self._history[-1] != text:
            self._history.append(text)
        self._history_index = len(self._history)
        self.input.clear()
        return True

    def step_history(self, step: int) -> None:
        """Replace the input with the previous (-1) or next (+1) sent message."""
        if not self._history:
            return
        index = max(0, min(len(self._history), self._history_index + step))
        self._history_index = index
        text = self._history[index] if index < len(self._history) else ""
        self.input.load_text(text)
        self.input.move_cursor(self.input.document.end)
