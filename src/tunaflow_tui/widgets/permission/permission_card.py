"""A compact card for a question an agent asks before it uses a tool: allow once, allow for the session, deny.

The card shows who asks, the tool and its file or command, and the change where the agent sent one.
Its keys post :class:`PermissionAnswered` for its own question only; once the question is settled
(answered, or withdrawn when the turn was cancelled or its idle timeout ended it) the card folds to
its outcome and its keys are gone: they no longer show in the footer and do nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.app import RenderResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive

from tunaflow_tui.agents.permissions import PermissionAnswer
from tunaflow_tui.keyhints import hint_line
from tunaflow_tui.viewmodels.permission_views import PermissionCardView
from tunaflow_tui.widgets.decision.arming import ArmedCard

DECIDE = Binding.Group("Decide")

#: the card's title once settled, by state (a question withdrawn or timed out was not answered)
BORDER_WORDS = {PermissionAnswer.ALLOW_ONCE.value: "allowed", PermissionAnswer.ALLOW_ALWAYS.value: "allowed",
                PermissionAnswer.DENY.value: "denied"}


@dataclass
class PermissionAnswered(Message):
    """The user answered a permission question with a card's key."""

    request_id: int
    answer: PermissionAnswer


class PermissionCard(ArmedCard, can_focus=True):
    """One agent's permission question, answered by key."""

    CARD_NAME: ClassVar[str] = "permission question"

    HELP = """\
## Agent's permission question
An agent (on an ACP engine) asks before it writes a file or runs a command the role's policy leaves to
you. The card shows the tool, the file or command, and the change where the agent sent one.

- **a** allows it once; **A** allows this kind of action for the rest of the agent's session; **d** denies it.
- **f2** reaches the newest question waiting, in the main chat or in the branch it belongs to.
- A question nobody answers ends with the turn's idle timeout: the agent is told *cancelled* and the
  card says so.
"""

    DEFAULT_CSS = """
    PermissionCard {
        height: auto;
        border: round $warning;
        border-title-color: $text-warning;
        padding: 0 1;
    }
    PermissionCard:focus { border: heavy $accent; border-title-color: $accent; border-title-style: bold; }
    PermissionCard.-settled { border: round $panel-lighten-2; border-title-color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "answer('allow_once')", "Allow once", id="permission.allow_once", group=DECIDE,
                tooltip="Let the agent do this once"),
        Binding("A", "answer('allow_always')", "Allow for session", id="permission.allow_always", group=DECIDE,
                tooltip="Let the agent do this kind of thing for the rest of its session"),
        Binding("d", "answer('deny')", "Deny", id="permission.deny", group=DECIDE,
                tooltip="Refuse; the agent is told no"),
    ]

    HINTS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("permission.allow_once", "allow once"),
        ("permission.allow_always", "allow for session"),
        ("permission.deny", "deny"),
    )

    view: reactive[PermissionCardView] = reactive(PermissionCardView(0, "", "", "", ""), layout=True)

    def __init__(self, view: PermissionCardView, *, id: str | None = None) -> None:
        """Show ``view``."""
        super().__init__(id=id)
        self.set_reactive(PermissionCard.view, view)
        self._dress(view)

    def _dress(self, view: PermissionCardView) -> None:
        self.set_class(not view.is_open, "-settled")
        self.border_title = f"Permission · {BORDER_WORDS.get(view.state, 'not answered')}" if not view.is_open \
            else "Permission"

    def render(self) -> RenderResult:
        """Who asks and what, the target, the diff while it is open, then the outcome once settled.

        One widget, drawn as one text: a question arriving (or settling) lays out one node, not a
        column of them, so the card is on screen in the next frame.
        """
        view = self.view
        lines: list[Content] = [Content.assemble((f"{view.asker} asks: ", "bold"), view.title)]
        if view.target:
            lines.append(Content.styled(view.target, "bold"))
        if view.is_open and view.diff:
            lines += [Content.styled(line, "dim") for line in view.diff]
            if view.diff_more:
                lines.append(Content.styled(f"… {view.diff_more} more lines", "dim"))
        if not view.is_open:
            lines.append(Content.styled(view.state_words, "italic"))
        return Content("\n").join(lines)

    def watch_view(self, view: PermissionCardView) -> None:
        """A settled question gives its keys up: the footer drops them, the card shows the outcome."""
        self._dress(view)
        self.refresh_bindings()

    def key_hint(self) -> str:
        """``a allow once · A allow for session · d deny``, with the keys as currently mapped."""
        return hint_line(self.app, PermissionCard, self.HINTS)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The answer keys act (and show) only while the question is open."""
        if action == "answer":
            return self.view.is_open
        return True

    def action_answer(self, answer: str) -> None:
        """Post the answer (only while the question is open and the keys are armed)."""
        if not self.view.is_open:
            return
        if not self.keys_armed():
            return
        self.post_message(PermissionAnswered(self.view.request_id, PermissionAnswer(answer)))
