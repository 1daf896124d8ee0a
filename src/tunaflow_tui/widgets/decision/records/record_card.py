"""RecordCard: a record in the chat, one line folded, its details unfolded (enter / space / a click)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from textual.content import Content
from textual.events import Click
from textual.reactive import reactive
from textual.widgets import Static

from tunaflow_tui.core.snippet_text import line_runs

#: How a detail line's inline Markdown is drawn (its syntax, backticks and asterisks, is not shown).
INLINE_STYLES: dict[str, str] = {"": "", "code": "bold", "strong": "bold", "em": "italic"}


def rendered_line(line: str) -> Content:
    """A detail line with its inline Markdown drawn and marker comments left out."""
    return Content.assemble(*((run.text, INLINE_STYLES[run.style]) for run in line_runs(line)))


class RecordCard(Static):
    """A record folded to its headline; :attr:`expanded` shows the details under it.

    Subclasses set :attr:`KIND` and say what the record reads as (:meth:`headline`, :meth:`details`).
    The message holding the card toggles it from the keyboard; a click on it toggles it too.

    Args:
        meta: The record's data (``meta`` of its message).
    """

    KIND: ClassVar[str] = ""

    DEFAULT_CSS = """
    RecordCard { height: auto; }
    """

    expanded: reactive[bool] = reactive(False)
    """True while the details show."""

    def __init__(self, meta: Mapping[str, object], *, classes: str | None = None) -> None:
        super().__init__("", classes=classes, markup=False)
        self.meta = meta
        self.hint_key = "enter"
        """The key named in the hint (the message that holds the card sets the one in force)."""

    def headline(self) -> str:
        """The record in one line."""
        return ""

    def details(self) -> list[str]:
        """The lines that unfold under the headline."""
        return []

    def on_mount(self) -> None:
        self._draw()

    def watch_expanded(self) -> None:
        self._draw()

    def toggle(self) -> None:
        """Unfold or fold the details."""
        self.expanded = not self.expanded

    def _draw(self) -> None:
        action = "fold" if self.expanded else "details"
        text = rendered_line(self.headline()) + Content.styled(f"  {self.hint_key}: {action}", "$text-muted")
        if self.expanded:
            for line in self.details():
                text += Content("\n") + rendered_line(line)
        self.update(text)

    def on_click(self, event: Click) -> None:
        event.stop()
        self.toggle()
