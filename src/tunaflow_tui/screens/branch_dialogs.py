"""Small questions about a branch: its new label, and whether to delete it."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Static

from tunaflow_tui.keyhints import key_for
from tunaflow_tui.screens.dialog import DialogScreen


class RenameBranchScreen(DialogScreen[str | None]):
    """Ask for a branch's new label; dismisses with it (never empty), or None."""

    DEFAULT_CSS = "RenameBranchScreen > #dialog { max-width: 80; }"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="rename.cancel"),
    ]

    def __init__(self, label: str) -> None:
        super().__init__()
        self._label = label

    def compose(self) -> ComposeResult:
        cancel = key_for(self.app, type(self), "rename.cancel", words=True)
        with Vertical(id="dialog") as dialog:
            dialog.border_title = "Rename branch"
            yield Static("The branch's new label (enter renames it):", id="what", classes="field-label")
            yield Input(self._label, id="label")
            yield Static("", id="empty-hint", classes="dialog-problem")
            with Horizontal(id="buttons", classes="dialog-buttons"):
                yield Button(f"Cancel ({cancel})", id="cancel")
                yield Button("Rename (enter)", id="rename", variant="primary")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def _submit(self) -> None:
        label = " ".join(self.query_one(Input).value.split())
        if not label:
            self.query_one("#empty-hint", Static).update("A branch needs a label; escape keeps the old one.")
            return
        self.dismiss(label)

    @on(Input.Submitted)
    def _entered(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    @on(Button.Pressed, "#rename")
    def _rename_pressed(self) -> None:
        self._submit()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.dismiss(None)

    def action_cancel(self) -> None:
        """Keep the old label."""
        self.dismiss(None)


class ConfirmBranchScreen(DialogScreen[bool]):
    """Ask before a branch act that cannot be undone; dismisses True to go ahead."""

    DEFAULT_CSS = "ConfirmBranchScreen > #dialog { max-width: 80; }"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "confirm", "Yes", id="branch_confirm.yes"),
        Binding("escape,n", "cancel", "No", id="branch_confirm.no"),
    ]

    def __init__(self, title: str, text: str, confirm_words: str) -> None:
        super().__init__(classes="-danger")
        self._title = title
        self._text = text
        self._confirm_words = confirm_words

    def compose(self) -> ComposeResult:
        yes = key_for(self.app, type(self), "branch_confirm.yes", words=True)
        no = key_for(self.app, type(self), "branch_confirm.no", words=True)
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._title
            yield Static(self._text, id="what", classes="dialog-text", markup=False)
            with Horizontal(id="buttons", classes="dialog-buttons"):
                yield Button(f"Keep it ({no})", id="no")
                yield Button(f"{self._confirm_words} ({yes})", id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed, "#yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self.dismiss(False)

    def action_confirm(self) -> None:
        """Go ahead."""
        self.dismiss(True)

    def action_cancel(self) -> None:
        """Keep the branch as it is."""
        self.dismiss(False)
