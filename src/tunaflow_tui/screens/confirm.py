"""ConfirmDecisionScreen: the explicit confirmation a deliberate act asks for, in the words of its way on.

Accepting over a failed review, accepting an incomplete review and abandoning a plan each come with
a text (:attr:`~tunaflow_tui.core.workflow.ways.WayOn.confirm`) that names what happens and what the
record will say. The dialog shows that text, takes an optional reason for the record, and answers
with the reason (confirmed) or None (nothing happens).
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Static

from tunaflow_tui.keyhints import key_for
from tunaflow_tui.screens.dialog import DialogScreen


class ConfirmDecisionScreen(DialogScreen[str | None]):
    """Ask to confirm a decision: ``text`` says what happens; dismisses with the reason typed (maybe
    empty) when confirmed, None when not."""

    DEFAULT_CSS = """
    ConfirmDecisionScreen #what { margin-bottom: 1; }
    ConfirmDecisionScreen #keys { color: $text-muted; width: 1fr; height: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # priority: enter confirms from the reason field too (a field's own enter would only submit it)
        Binding("enter", "confirm", "Confirm", id="confirm.yes", priority=True),
        Binding("escape", "cancel", "Cancel", id="confirm.no"),
    ]

    def __init__(self, title: str, text: str, confirm_label: str) -> None:
        super().__init__(classes="-danger")
        self._title = title
        self._text = text
        self._confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        yes = key_for(self.app, ConfirmDecisionScreen, "confirm.yes", words=True)
        no = key_for(self.app, ConfirmDecisionScreen, "confirm.no", words=True)
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._title
            yield Static(self._text, id="what", classes="dialog-text", markup=False)
            yield Static("Reason for the record (optional):", id="reason-label", classes="field-label")
            yield Input(placeholder="why", id="reason")
            with Horizontal(id="choices", classes="dialog-buttons"):
                yield Button(f"{self._confirm_label} ({yes})", id="yes", variant="error")
                yield Button(f"Cancel ({no})", id="no")
            yield Static(f"{yes} {self._confirm_label.lower()} · {no} cancel: nothing happens", id="keys",
                         markup=False)

    def on_mount(self) -> None:
        self.query_one("#reason", Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # enter on the Cancel button presses it rather than confirming
        if action == "confirm":
            focused = self.focused
            return not (isinstance(focused, Button) and focused.id == "no")
        return True

    def action_confirm(self) -> None:
        self.dismiss(self.query_one("#reason", Input).value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#yes")
    def _yes(self) -> None:
        self.action_confirm()

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self.action_cancel()
