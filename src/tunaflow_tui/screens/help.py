"""The help screen: every key binding (as currently mapped) and the ideas behind the workflow."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

CONCEPTS = """\
## How tunaflow works

**Plan.** You talk to the *Architect* in the main chat. When it proposes a plan, a plan card
appears. A plan becomes a tracked unit of work with subtasks, a phase and a history of events.

**Gates.** Nothing happens behind your back. On a plan card: **a** approve, **r** request a
revision (your feedback goes back to the Architect), **h** hold. After review you decide again:
accept, rework (the findings go to the Developer), or redesign (back to the Architect).

**Phases.** Chat → Drafting → Approval → Dev → Review → Rework → Done. Approving starts *Dev*: the
Developer works on its own git branch and worktree, so your working tree is untouched until merge.
When it reports the implementation complete, *Review* runs your tests and asks a Reviewer and a
Verifier (blind to each other, read-only) for a verdict. Three failed reviews in a row ask you
whether to redesign or carry on.

**Branches.** Fork the conversation from any message to explore an idea without disturbing the
main chat. A branch opens in a drawer on the right; pin it for a 50:50 split. *Adopt* brings a
summary of the branch back into its parent.

**Roundtable.** Several agents, from different vendors if you like, discuss one topic in a branch,
one after another or all at once. A synthesizer states the consensus, what is contested and who
dissents.

**Markers.** Agents structure their answers with HTML comments such as
`<!-- tunaflow:plan-proposal -->` or `<!-- tunaflow:review-verdict -->`. tunaflow turns them into
cards and never shows them raw. A marker from a role that may not emit it changes nothing.

**Keys in terminals.** Most terminals cannot tell shift+enter from enter: use **ctrl+j** for a new
line in the composer. Every key can be remapped by its id in the keymap setting, and every action is
in the command palette (**ctrl+p**). Use `tunaflow --no-mouse` to keep your terminal's own text
selection.
"""


@dataclass(frozen=True, slots=True)
class BindingRow:
    """One line of the key table."""

    keys: str
    description: str
    binding_id: str


@dataclass(frozen=True, slots=True)
class BindingSection:
    """A titled group of key bindings (e.g. "Chat", "Composer")."""

    title: str
    rows: tuple[BindingRow, ...]


def _escape_cell(text: str) -> str:
    return text.replace("|", "\\|")


def help_markdown(sections: Sequence[BindingSection], concepts: str = CONCEPTS) -> str:
    """The help text: one key table per section, then the concepts."""
    parts = ["# tunaflow help\n", "Press **escape** or **f1** to close.\n"]
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
    parts.append(concepts)
    return "\n".join(parts)


class HelpScreen(ModalScreen[None]):
    """A scrollable modal listing every binding and explaining plans, gates, branches, markers.

    Args:
        sections: The key bindings to list, already resolved through the user's keymap.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "dismiss", "Close", id="help.close"),
    ]

    def __init__(self, sections: Sequence[BindingSection]) -> None:
        super().__init__()
        self.sections = tuple(sections)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Markdown(help_markdown(self.sections), id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()
