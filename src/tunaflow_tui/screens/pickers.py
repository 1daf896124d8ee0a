"""Small modals: pick one item from a list, and the ContextPack overview."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Label, OptionList, Static
from textual.widgets.option_list import Option

from tunaflow_tui.screens.dialog import DialogScreen
from tunaflow_tui.viewmodels.context_pack import PackView

#: Drops a link by id; returns what to tell the user and the packs rebuilt.
DropLink = Callable[[int], Awaitable[tuple[str, list[PackView]]]]


class PickerScreen(DialogScreen[str | None]):
    """Choose one of ``choices`` (value, label); dismisses with the value, or None on escape."""

    DEFAULT_CSS = """
    PickerScreen > #dialog { width: 70%; max-width: 80; }
    PickerScreen #hint { color: $text-muted; }
    PickerScreen OptionList { height: auto; max-height: 20; }
    PickerScreen.-short OptionList { max-height: 14; }
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
            yield Static(self._hint, id="hint", classes="dialog-text", markup=False)
            yield OptionList(*[Option(Text(label), id=value) for value, label in self.choices], id="choices")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        values = [value for value, _ in self.choices]
        if self._current in values:
            options.highlighted = values.index(self._current)
        options.focus()
        # once laid out: the list starts at its top, or just far enough down to show the current choice
        self.call_after_refresh(self._show_current)

    def _show_current(self) -> None:
        options = self.query_one(OptionList)
        options.scroll_home(animate=False, immediate=True)
        if options.highlighted is not None:
            options.scroll_to_highlight()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        """Close without choosing."""
        self.dismiss(None)


class ContextPackScreen(DialogScreen[None]):
    """A ContextPack: each section's tokens, budget and what was cut, and the highlighted section's text.

    It shows the pack of the turn about to be sent and, when one was sent, the last turn's pack.
    """

    DEFAULT_CSS = """
    ContextPackScreen > #dialog { width: 90%; max-width: 120; height: 1fr; max-height: 40; }
    ContextPackScreen #intro { width: 1fr; height: auto; max-height: 3; }
    ContextPackScreen #total { text-style: bold; height: 1; }
    ContextPackScreen DataTable { height: auto; max-height: 12; margin-top: 1; }
    ContextPackScreen #section-text-box { height: 1fr; border-top: solid $primary-muted; }
    ContextPackScreen #section-text { width: 1fr; }
    ContextPackScreen #pack-keys { color: $text-muted; height: 1; }
    """

    HELP = """\
## Context pack
What an agent's turn receives: every section with its tokens, its own budget and what was cut to
fit, and the highlighted section's text; the last row, *whole prompt*, is the exact text sent. A turn
that resumes the engine's session gets only what that session has not seen ("since your last turn").
**l** switches between the turn about to be sent and the last turn sent. **x** drops one of the linked sessions the pack cites: the conversation's next turns
go without it, and it is not linked again.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close", id="context.close"),
        Binding("l", "switch", "Next / last turn", id="context.switch"),
        Binding("x", "drop_link", "Drop a link", id="context.drop_link"),
    ]

    def __init__(self, packs: Sequence[PackView], *, drop_link: DropLink | None = None) -> None:
        super().__init__()
        self.packs = tuple(packs)
        self.shown = 0
        self._drop_link = drop_link

    @property
    def pack(self) -> PackView:
        """The pack on screen."""
        return self.packs[self.shown]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("", id="intro", markup=False)
            yield Label("", id="total", markup=False)
            table: DataTable[str] = DataTable(id="sections", cursor_type="row", zebra_stripes=True)
            table.add_columns("Section", "Tokens", "Budget", "Cut")
            yield table
            with VerticalScroll(id="section-text-box"):
                yield Static("", id="section-text", markup=False)
            yield Label("", id="pack-keys", markup=False)

    def on_mount(self) -> None:
        super().on_mount()
        self._show()
        self.query_one(DataTable).focus()

    def _show(self) -> None:
        from tunaflow_tui.keyhints import key_for

        pack = self.pack
        dialog = self.query_one("#dialog")
        dialog.border_title = f"Context pack: {pack.title}"
        self.query_one("#intro", Label).update(pack.intro)
        self.query_one("#total", Label).update(f"Total {pack.total:,} tokens of a {pack.budget:,} token budget")
        table = self.query_one(DataTable)
        table.clear()
        for row in pack.rows:
            budget = f"{row.budget:,}" if row.budget is not None else "—"
            table.add_row(row.name, f"{row.tokens:,}", budget, row.cut)
        table.move_cursor(row=0)
        self._show_text(0)
        close = key_for(self.app, type(self), "context.close", words=True)
        keys = f"up/down: a section's text · {close}: close"
        if pack.links and self._drop_link is not None:
            keys = f"{key_for(self.app, type(self), 'context.drop_link', words=True)}: drop a link · " + keys
        if len(self.packs) > 1:
            other = self.packs[(self.shown + 1) % len(self.packs)].title
            keys = f"{key_for(self.app, type(self), 'context.switch', words=True)}: {other} · " + keys
        self.query_one("#pack-keys", Label).update(keys)

    def _show_text(self, index: int) -> None:
        rows = self.pack.rows
        if 0 <= index < len(rows):
            self.query_one("#section-text", Static).update(Text(rows[index].text))
            self.query_one("#section-text-box", VerticalScroll).scroll_home(animate=False)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_text(event.cursor_row)

    def action_drop_link(self) -> None:
        """Pick one of the pack's linked sessions and drop it from the conversation's next turns."""
        pack = self.pack
        if self._drop_link is None or not pack.links:
            self.notify("This pack cites no linked session.", severity="information")
            return
        where = "main" if pack.conversation_id == "main" else pack.conversation_id
        picker = PickerScreen("Drop a link", f"The next turns in {where} go without the session you pick, "
                              "and it is not linked again.", [(str(link.link_id), link.label) for link in pack.links])
        self.app.push_screen(picker, self._drop_chosen)

    def _drop_chosen(self, value: str | None) -> None:
        if value is not None and self._drop_link is not None:
            self.run_worker(self._drop(int(value)), group="drop-link", exit_on_error=False)

    async def _drop(self, link_id: int) -> None:
        assert self._drop_link is not None
        message, packs = await self._drop_link(link_id)
        if not self.is_attached:
            return
        title = self.pack.title
        table = self.query_one("#sections", DataTable)
        rows = self.pack.rows
        section = rows[table.cursor_row].name if 0 <= table.cursor_row < len(rows) else None
        self.packs = tuple(packs)
        self.shown = next((i for i, pack in enumerate(self.packs) if pack.title == title), 0)
        self._show()
        names = [row.name for row in self.pack.rows]
        if section in names:  # stay on the section the user was looking at
            table.move_cursor(row=names.index(section))
        self.notify(message)

    def action_switch(self) -> None:
        """Show the other pack: the last turn sent, or the turn about to be sent."""
        if len(self.packs) > 1:
            self.shown = (self.shown + 1) % len(self.packs)
            self._show()
