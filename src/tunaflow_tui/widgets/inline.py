"""Short agent-written text in cards and views: Markdown code spans, and lists that wrap under their text."""

from __future__ import annotations

import re

from rich.table import Table
from rich.text import Text

_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def inline_text(text: str) -> Text:
    """Plain text with Markdown code spans (`like this`) shown in bold, without their backticks.

    Nothing else is interpreted: square brackets and other characters stay as written.
    """
    out = Text()
    position = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(text[position:match.start()])
        out.append(match.group(1), style="bold")
        position = match.end()
    out.append(text[position:])
    return out


def hanging_list(rows: list[tuple[str, str]]) -> Table:
    """``(marker, text)`` rows whose wrapped lines stay indented under the text, not the marker."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(ratio=1)
    for marker, text in rows:
        grid.add_row(marker, inline_text(text))
    return grid
