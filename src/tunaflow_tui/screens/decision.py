"""DecisionScreen: a generic modal asking the user to pick one of a few labelled choices."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Key
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class DecisionScreen(ModalScreen[str | None]):
    """Show a question with choices `(key, label, value)`; dismisses with the chosen value.

    Pressing a choice's key or its button chooses it; escape dismisses with None ("decide later").
    """

    DEFAULT_CSS = """
    DecisionScreen { align: center middle; }
    DecisionScreen > #dialog {
        width: 80%; max-width: 90; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 0 1;
        border-title-style: bold;
    }
    DecisionScreen #body { margin-bottom: 1; }
    DecisionScreen #later { color: $text-muted; }
    DecisionScreen #choices { height: auto; margin-top: 1; }
    DecisionScreen #choices Button { margin-right: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "later", "Decide later", id="decision.later"),
    ]

    def __init__(self, title: str, body: str, choices: tuple[tuple[str, str, str], ...]) -> None:
        super().__init__()
        self._title = title
        self._body = body
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._title
            yield Static(self._body, id="body", markup=False)
            yield from self.compose_details()
            with Horizontal(id="choices"):
                for number, (key, label, _value) in enumerate(self.choices):
                    yield Button(f"{label} ({key})", id=f"choice-{number}",
                                 variant="primary" if number == 0 else "default")
            yield Label("esc — decide later", id="later")

    def compose_details(self) -> ComposeResult:
        """Extra content between the body and the buttons (for subclasses)."""
        yield from ()

    def on_mount(self) -> None:
        if self.choices:
            self.query_one("#choice-0", Button).focus()

    def on_key(self, event: Key) -> None:
        for key, _label, value in self.choices:
            if event.key == key:
                event.stop()
                event.prevent_default()
                self.dismiss(value)
                return

    @on(Button.Pressed)
    def _chosen(self, event: Button.Pressed) -> None:
        if event.button.id and event.button.id.startswith("choice-"):
            self.dismiss(self.choices[int(event.button.id.removeprefix("choice-"))][2])

    def action_later(self) -> None:
        self.dismiss(None)


DEV_STALLED_CHOICES: tuple[tuple[str, str, str], ...] = (
    ("c", "Continue", "continue"),
    ("m", "Mark complete", "complete"),
    ("x", "Abandon", "abandon"),
)


def dev_stalled_screen(plan_title: str) -> DecisionScreen:
    """The question asked when the Developer stopped without saying it finished."""
    return DecisionScreen(
        "The Developer stopped",
        f"The Developer stopped working on “{plan_title}” without saying it finished.\n"
        "Continue asks it to carry on; mark complete starts the review; abandon ends the plan.",
        DEV_STALLED_CHOICES,
    )
