"""Small modals: pick one item from a list, and the ContextPack overview."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Label, OptionList
from textual.widgets.option_list import Option

from tunaflow_tui.screens.dialog import DialogScreen


class PickerScreen(DialogScreen[str | None]):
    """Choose one of ``choices`` (value, label); dismisses with the value, or None on escape."""

    DEFAULT_CSS = """
    PickerScreen { align: center middle; }
    PickerScreen > #dialog {
        width: 70%; max-width: 80; height: auto; max-height: 80%;
        border: thick $primary; background: $surface; padding: 0 1; border-title-style: bold;
    }
    PickerScreen #hint { color: $text-muted; margin-bottom: 1; }
    PickerScreen OptionList { height: auto; max-height: 20; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="picker.cancel"),
    ]

    def __init__(self, title: str, hint: str, choices: Sequence[tuple[str, str]], current: str | None = None) -> None:
        super().__init__()
        self._title = title
        self._hint = hint
        self.choices = tuple(choices)
        self._current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._title
            yield Label(self._hint, id="hint", markup=False)
            yield OptionList(*[Option(Text(label), id=value) for value, label in self.choices], id="choices")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        values = [value for value, _ in self.choices]
        if self._current in values:
            options.highlighted = values.index(self._current)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        """Close without choosing."""
        self.dismiss(None)


class ContextPackScreen(DialogScreen[None]):
    """The sections of a ContextPack and their token counts."""

    DEFAULT_CSS = """
    ContextPackScreen { align: center middle; }
    ContextPackScreen > #dialog {
        width: 80%; max-width: 90; height: auto; max-height: 80%;
        border: thick $primary; background: $surface; padding: 0 1; border-title-style: bold;
    }
    ContextPackScreen #intro, ContextPackScreen #total { margin-bottom: 1; }
    ContextPackScreen #intro { width: 1fr; height: auto; }
    ContextPackScreen #total { text-style: bold; }
    ContextPackScreen DataTable { height: auto; max-height: 16; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close", id="context.close"),
    ]

    def __init__(self, intro: str, rows: Sequence[tuple[str, int, bool]], total: int, budget: int) -> None:
        super().__init__()
        self.intro = intro
        self.rows = tuple(rows)
        self.total = total
        self.budget = budget

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = "Context pack"
            yield Label(self.intro, id="intro", markup=False)
            table: DataTable[str] = DataTable(id="sections", cursor_type="row", zebra_stripes=True)
            table.add_columns("Section", "Tokens", "Cut to budget")
            for name, tokens, truncated in self.rows:
                table.add_row(name, f"{tokens:,}", "yes" if truncated else "")
            yield table
            from tunaflow_tui.keyhints import key_for

            close = key_for(self.app, type(self), "context.close", words=True)
            yield Label(f"Total {self.total:,} tokens of a {self.budget:,} token budget · {close} closes", id="total")

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
