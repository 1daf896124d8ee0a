"""The help screen: every key binding (as currently mapped), filtered as you type, and the ideas behind the workflow."""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Input, Markdown, Static

from tunaflow_tui.screens.dialog import DialogScreen

CONCEPTS = """\
## How tunaflow works

**Plan.** You talk to the *Architect* in the main chat. When it proposes a plan, a plan card
appears. A plan becomes a tracked unit of work with subtasks, a phase and a history of events.

**Gates.** Nothing happens behind your back. On a plan card: **{plan.approve}** approve,
**{plan.edit}** edit the plan first (title, subtasks, description, expected outcome; what you approve
is your edited version), **{plan.revise}** request a revision (your feedback goes back to the
Architect), **{plan.hold}** hold (**{decision.jump}** brings a held plan back). After review you decide
again: accept, rework (the findings go to the Developer), or redesign (back to the Architect).
Accepting over a failed review, accepting a review a seat gave no verdict on, and abandoning a plan
each ask you to confirm, and the plan's record says which one happened. Whatever a plan waits on —
a review to start, an interrupted step — it has a card with its keys, and **{decision.jump}** reaches it.

**Phases.** Chat → Drafting → Approval → Dev → Review → Rework → Done. Approving starts *Dev*: the
Developer works on its own git branch and worktree, so your working tree is untouched until merge.
When it reports the implementation complete, *Review* runs your tests and asks a Reviewer and a
Verifier (blind to each other, read-only) for a verdict. Three failed reviews in a row ask you
whether to redesign or carry on.

**Branches.** An approved plan's implementation and its review each run in a branch of the
conversation, listed in the sidebar: pick one to follow it in the pane on the right, and pin the pane
for a 50:50 split.

**Markers.** Agents structure their answers with HTML comments such as
`<!-- tunaflow:plan-proposal -->` or `<!-- tunaflow:review-verdict -->`. tunaflow turns them into
cards and never shows them raw. A marker from a role that may not emit it changes nothing.

**Keys in terminals.** Most terminals cannot tell shift+enter from enter: use **{composer.newline}** for a
new line in the composer. Every key can be remapped by its id in the keymap setting, and every action
is in the command palette (**{app.palette}**). Use `tunaflow --no-mouse` to keep your terminal's own
text selection.
"""


@dataclass(frozen=True, slots=True)
class BindingRow:
    """One key of the key list: its keys, what it does, its id for the keymap."""

    keys: str
    description: str
    binding_id: str


@dataclass(frozen=True, slots=True)
class BindingSection:
    """A titled group of key bindings (e.g. "Chat", "Composer")."""

    title: str
    rows: tuple[BindingRow, ...]


def key_text(app: App[Any], binding: Binding, keys: str | None = None) -> str:
    """The keys of ``binding`` as the footer writes them, e.g. ``f1 / ?`` for ``f1,question_mark``.

    ``keys`` replaces the binding's own keys (a keymap override); the binding's ``key_display``
    names its first key only while the keys are the binding's own.
    """
    own = keys is None or keys == binding.key
    shown = []
    for number, key in enumerate(k.strip() for k in (binding.key if keys is None else keys).split(",")):
        if number == 0 and own and binding.key_display:
            shown.append(binding.key_display)
        elif key:
            shown.append(app.get_key_display(Binding(key, binding.action)))
    return " / ".join(shown)


def binding_sections(app: App[Any], sources: Sequence[tuple[str, str]],
                     keymap: Mapping[str, str]) -> list[BindingSection]:
    """One section per ``(title, "module:Class")`` source: the class's own bindings, keys as mapped.

    ``textual.app:App`` stands for the running app's class.  Only bindings a class declares itself
    are listed, so a subclass that adds none does not repeat its parent's.  A source that does not
    exist (any more) is left out rather than breaking help.
    """
    sections = []
    for title, where in sources:
        module, _, name = where.partition(":")
        cls = getattr(importlib.import_module(module), name, None)
        if cls is None:
            continue
        own = type(app).BINDINGS if cls is App else vars(cls).get("BINDINGS", ())
        rows = []
        for binding in own:
            if not isinstance(binding, Binding) or binding.system:
                continue
            keys = key_text(app, binding, keymap.get(binding.id or ""))
            rows.append(BindingRow(keys, binding.description or binding.action, binding.id or "—"))
        sections.append(BindingSection(title, tuple(rows)))
    return sections


def _escape_cell(text: str) -> str:
    return text.replace("|", "\\|")


def _first_key(keys: str) -> str:
    return keys.split(" / ")[0]


def fill_keys(text: str, sections: Sequence[BindingSection]) -> str:
    """``text`` with each ``{binding.id}`` replaced by that binding's first key as mapped now."""
    keys = {row.binding_id: _first_key(row.keys) for section in sections for row in section.rows}

    def key(match: re.Match[str]) -> str:
        return keys.get(match.group(1), match.group(1))

    return re.sub(r"\{([a-z_]+\.[a-z_.]+)\}", key, text)


def help_markdown(sections: Sequence[BindingSection], concepts: str = CONCEPTS) -> str:
    """The help text: one key table per section, then the concepts (keys as mapped now)."""
    close = next((row.keys for section in sections for row in section.rows if row.binding_id == "help.close"),
                 "escape / f1")
    shown = "** or **".join(close.split(" / ")[:2])
    parts = ["# tunaflow help\n", f"Press **{shown}** to close.\n"]
    for section in sections:
        if not section.rows:
            continue
        parts.append(f"## {section.title}\n")
        parts.append("| Keys | Action | Id |\n|---|---|---|")
        for row in section.rows:
            parts.append(
                f"| {_escape_cell(row.keys)} | {_escape_cell(row.description)} | `{row.binding_id}` |"
            )
        parts.append("")
    parts.append(fill_keys(concepts, sections))
    return "\n".join(parts)


def matching_sections(sections: Sequence[BindingSection], query: str) -> list[BindingSection]:
    """The sections and rows that match every word of ``query`` (in the keys, the action, the id or
    the section's title, case ignored); a section with no matching row is left out."""
    words = query.lower().split()
    if not words:
        return [section for section in sections if section.rows]
    found = []
    for section in sections:
        rows = tuple(row for row in section.rows
                     if all(word in f"{section.title} {row.keys} {row.description} {row.binding_id}".lower()
                            for word in words))
        if rows:
            found.append(BindingSection(section.title, rows))
    return found


KEY_WIDTH = 13
"""Columns for a key before it wraps (``home / ^home`` fits): the rest of a column is the action's."""

WIDE = 110
"""From this terminal width on, each key also shows its id for the keymap (at 80 columns it is left
out to keep two keys a line; the filter finds a key by its id either way)."""


def _cells(row: BindingRow | None, with_ids: bool) -> list[Text]:
    if row is None:
        return [Text(" "), Text(" ")] + ([Text(" ")] if with_ids else [])
    cells = [Text(row.keys, style="bold"), Text(row.description)]
    return cells + ([Text(row.binding_id, style="dim")] if with_ids else [])


def key_table(sections: Sequence[BindingSection], *, with_ids: bool = False) -> Group:
    """The key list, two keys a line: per section a title line, then its keys down the left half and
    on down the right half — keys, what they do and, with ``with_ids``, the id (dim) for the keymap.

    Every section's halves have the same columns, so the keys line up from one section to the next.
    """
    width = min(max((cell_len(row.keys) for section in sections for row in section.rows), default=1), KEY_WIDTH)
    parts: list[RenderableType] = []
    for section in sections:
        parts.append(Text(section.title, style="bold underline"))
        grid = Table.grid(expand=True, padding=(0, 1, 0, 0))
        for half in range(2):
            if half:
                grid.add_column(width=1)  # the gutter between the halves
            grid.add_column(width=width)
            grid.add_column(ratio=1)
            if with_ids:
                grid.add_column(no_wrap=True, justify="right")
        rows = section.rows
        down = (len(rows) + 1) // 2
        for line in range(down):
            right = rows[down + line] if down + line < len(rows) else None
            grid.add_row(*_cells(rows[line], with_ids), Text(""), *_cells(right, with_ids))
        parts.append(grid)
    return Group(*parts)


class HelpScreen(DialogScreen[None]):
    """Every key, grouped by where it works, filtered as the user types; then the ideas behind the workflow.

    Two keys a line (keys and what they do; on a wide terminal also the id for the keymap), taken
    from the bindings as mapped now, so the list stays true when a key is remapped.

    Args:
        sections: The key bindings to list, already resolved through the user's keymap.
    """

    DEFAULT_CSS = """
    HelpScreen > #dialog { width: 90%; max-width: 110; height: 1fr; max-height: 48; padding: 0 1; }
    HelpScreen #help-filter { margin-bottom: 1; }
    HelpScreen #help-body { height: 1fr; }
    HelpScreen #help-keys { width: 1fr; height: auto; }
    HelpScreen #help-none { color: $text-muted; width: 1fr; height: auto; }
    HelpScreen #help-text { margin-top: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1", "dismiss", "Close", id="help.close"),
        Binding("down", "scroll('down')", "Scroll", show=False, id="help.down"),
        Binding("up", "scroll('up')", "Scroll", show=False, id="help.up"),
        Binding("pagedown", "scroll('page_down')", "Page down", show=False, id="help.page_down"),
        Binding("pageup", "scroll('page_up')", "Page up", show=False, id="help.page_up"),
    ]

    def __init__(self, sections: Sequence[BindingSection]) -> None:
        super().__init__()
        self.sections = tuple(sections)
        self.shown: tuple[BindingSection, ...] = tuple(matching_sections(self.sections, ""))
        """The sections and rows listed now (after the filter)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = "tunaflow help"
            close = next((row.keys for section in self.sections for row in section.rows
                          if row.binding_id == "help.close"), "escape / f1")
            dialog.border_subtitle = f"{close}: close · up/down: scroll"
            yield Input(placeholder="Type to filter the keys (e.g. branch, adopt, f5)", id="help-filter",
                        compact=True)
            with VerticalScroll(id="help-body"):
                yield Static(self._key_list(), id="help-keys")
                yield Static("", id="help-none", markup=False)
                yield Markdown(fill_keys(CONCEPTS, self.sections), id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-none").display = False
        self.query_one("#help-filter", Input).focus()

    @on(Input.Changed, "#help-filter")
    def _filter(self, event: Input.Changed) -> None:
        query = event.value.strip()
        self.shown = tuple(matching_sections(self.sections, query))
        self.query_one("#help-keys", Static).update(self._key_list())
        self.query_one("#help-keys").display = bool(self.shown)
        none = self.query_one("#help-none", Static)
        none.update(f"No key matches “{query}”." if not self.shown else "")
        none.display = not self.shown
        self.query_one("#help-text").display = not query  # the concepts only with the whole list
        self.query_one("#help-body", VerticalScroll).scroll_home(animate=False)

    def _key_list(self) -> Group:
        return key_table(self.shown, with_ids=self.app.size.width >= WIDE)

    def on_resize(self) -> None:
        """Another width may show the ids, or leave them out."""
        self.query_one("#help-keys", Static).update(self._key_list())

    def action_scroll(self, how: str) -> None:
        """Scroll the list while the filter keeps the focus."""
        body = self.query_one("#help-body", VerticalScroll)
        {"down": body.scroll_down, "up": body.scroll_up, "page_down": body.scroll_page_down,
         "page_up": body.scroll_page_up}[how](animate=False)
