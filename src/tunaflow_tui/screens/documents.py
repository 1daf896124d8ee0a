"""DocumentScreen: a plan document (plan, task, review, result) read in a modal Markdown viewer."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Markdown

from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.keyhints import key_for
from tunaflow_tui.screens.dialog import DialogScreen

DOCUMENT_MAX_BYTES = 512 * 1024


def read_document(path: str, limit: int = DOCUMENT_MAX_BYTES) -> str:
    """The text of a plan document, cut at `limit` bytes; an unreadable file yields an explanation.

    Agents write these files, so terminal control sequences in them are removed.
    """
    try:
        with Path(path).open("rb") as file:
            data = file.read(limit + 1)
    except OSError as error:
        return neutralize(f"*Cannot open `{path}`: {error.strerror or error}*")
    text = neutralize(data[:limit].decode("utf-8", errors="replace"))
    if len(data) > limit:
        text += f"\n\n*… cut at {limit // 1024} KiB. Open the file in an editor to see the rest.*"
    return text



class DocumentScreen(DialogScreen[None]):
    """A read-only Markdown viewer for a plan document."""

    DEFAULT_CSS = """
    DocumentScreen > #dialog { width: 90%; max-width: 120; height: 1fr; padding: 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close", id="document.close"),
    ]

    def __init__(self, name: str, path: str) -> None:
        super().__init__()
        self.doc_name = name
        self.path = path

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog") as frame:
            frame.border_title = Content(self.doc_name)  # a file name, not markup
            frame.border_subtitle = f"{key_for(self.app, type(self), 'document.close', words=True)} close"
            yield Markdown(read_document(self.path), id="document")

    def on_mount(self) -> None:
        self.query_one("#dialog").focus()
