"""Add a seat to a roundtable between rounds: its name, engine, role and whether it is blind.

The seat speaks last, from the next round on. A name already taken, an empty name or a custom role
that is too long is named under the form and nothing changes; enter on a field or "Add" confirms,
escape cancels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from tunaflow_tui.core.roundtable.seats import Seat, SeatSpecError, check_unique, normalize_role
from tunaflow_tui.screens.dialog import DialogScreen


class AddSeatScreen(DialogScreen[Seat | None]):
    """Returns the new :class:`Seat`, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="seat.cancel")]
    DEFAULT_CSS = """
    AddSeatScreen > #dialog { width: 90%; max-width: 80; }
    AddSeatScreen #seat-blind { margin-top: 1; }
    """

    def __init__(self, *, seats: Sequence[Seat], engines: Sequence[str]) -> None:
        super().__init__()
        self._seats = tuple(seats)
        self._engines = tuple(engines)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = "Add seat"
            yield Static("The new seat speaks last, from the next round.", classes="dialog-text")
            yield Label("Name", classes="field-label")
            yield Input(placeholder="letters, digits, . - _", id="seat-name")
            # the engine the last seat uses: a line-up on one engine grows on it
            last = self._seats[-1].engine if self._seats and self._seats[-1].engine in self._engines else None
            yield Label("Engine", classes="field-label")
            yield Select([(engine, engine) for engine in self._engines], value=last or self._engines[0],
                         allow_blank=False, id="seat-engine")
            yield Label("Role", classes="field-label")
            yield Input(placeholder="proposer, critic, judge, synthesizer or your own words", id="seat-role")
            yield Checkbox("blind (sees only the topic and its role)", id="seat-blind")
            yield Static("", id="seat-error", classes="dialog-problem")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="seat-cancel")
                yield Button("Add", variant="primary", id="seat-add")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#seat-name", Input).focus()

    def read(self) -> Seat:
        """The seat as the form describes it; SeatSpecError naming what is wrong."""
        name = self.query_one("#seat-name", Input).value.strip()
        role, text = normalize_role(self.query_one("#seat-role", Input).value)
        seat = Seat(name=name, engine=str(self.query_one("#seat-engine", Select).value), role=role, role_text=text,
                    blind=self.query_one("#seat-blind", Checkbox).value)
        check_unique((*self._seats, seat))
        return seat

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self._add()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "seat-add":
            self._add()
        elif event.button.id == "seat-cancel":
            self.dismiss(None)

    def _add(self) -> None:
        try:
            seat = self.read()
        except SeatSpecError as error:
            self.query_one("#seat-error", Static).update(str(error))
            return
        self.dismiss(seat)

    def action_cancel(self) -> None:
        """Close the form; nothing changes."""
        self.dismiss(None)
