"""A compact card for a question an agent asks before it uses a tool: allow once, allow for the session, deny.

The card shows who asks, the tool and its file or command, and the change where the agent sent one.
Its keys post :class:`PermissionAnswered`; once the question is settled (answered, or withdrawn when
the turn ended) the card says so and its keys do nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from tunaflow_tui.agents.permissions import PermissionAnswer
from tunaflow_tui.keyhints import hint_line
from tunaflow_tui.viewmodels.permissions import PermissionCardView
from tunaflow_tui.widgets.arming import ArmedCard

DECIDE = Binding.Group("Decide")


@dataclass
class PermissionAnswered(Message):
    """The user answered a permission question with a card's key."""

    request_id: int
    answer: PermissionAnswer


class PermissionCard(ArmedCard, can_focus=True):
    """One agent's permission question, answered by key."""

    CARD_NAME: ClassVar[str] = "permission question"

    DEFAULT_CSS = """
    PermissionCard {
        height: auto;
        border: round $warning;
        padding: 0 1;
        margin: 0 0 1 0;
    }
    PermissionCard:focus { border: round $accent; }
    PermissionCard.-settled { border: round $panel; }
    PermissionCard > .permission-diff { color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "answer('allow_once')", "Allow once", id="permission.allow_once", group=DECIDE,
                tooltip="Let the agent do this once"),
        Binding("a", "answer('allow_always')", "Allow for session", id="permission.allow_always", group=DECIDE,
                tooltip="Let the agent do this kind of thing for the rest of its session"),
        Binding("n", "answer('deny')", "Deny", id="permission.deny", group=DECIDE,
                tooltip="Refuse; the agent is told no"),
    ]

    HINTS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("permission.allow_once", "allow once"),
        ("permission.allow_always", "allow for this session"),
        ("permission.deny", "deny"),
    )

    view: reactive[PermissionCardView] = reactive(PermissionCardView(0, "", "", "", ""), recompose=True)

    def __init__(self, view: PermissionCardView, *, id: str | None = None) -> None:
        """Show ``view``."""
        super().__init__(id=id)
        self.set_reactive(PermissionCard.view, view)

    def compose(self) -> ComposeResult:
        """Who asks and what, the target, the diff, then the keys or the outcome."""
        view = self.view
        self.set_class(not view.is_open, "-settled")
        yield Static(Content.from_markup("[b]$asker asks:[/b] $title", asker=view.asker, title=view.title),
                     classes="permission-title")
        if view.target:
            yield Static(Content(view.target), classes="permission-target")
        if view.diff:
            more = f"\n… {view.diff_more} more lines" if view.diff_more else ""
            yield Static(Content("\n".join(view.diff) + more), classes="permission-diff")
        if view.is_open:
            yield Static(Content(hint_line(self.app, PermissionCard, self.HINTS)), classes="permission-keys")
        else:
            yield Static(Content(view.state_words), classes="permission-outcome")

    def action_answer(self, answer: str) -> None:
        """Post the answer (only while the question is open and the keys are armed)."""
        if not self.view.is_open:
            self.notify("That question is no longer open.", timeout=4)
            return
        if not self.keys_armed():
            return
        self.post_message(PermissionAnswered(self.view.request_id, PermissionAnswer(answer)))
