"""What every decision card shares: the one message a decision key posts, and key hints from bindings.

A plan card and a verdict card both end in a :class:`DecisionRequested` naming a
:class:`~tunaflow_tui.core.workflow.decision_words.Decision`; the app hands it to the decision
controller, which asks the runtime to apply it. No layer in between renames the decision.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol

from textual.app import RenderResult
from textual.content import Content
from textual.message import Message
from textual.renderables.blank import Blank

from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.keyhints import hint_line, key_for
from tunaflow_tui.widgets.decision.arming import ArmedCard


class CardView(Protocol):
    """What every dock card's view has: the plan it belongs to (a frozen dataclass in practice)."""

    @property
    def plan_id(self) -> int | None:
        """The plan the card is about (None for a proposal not yet stored as a plan)."""
        ...


@dataclass
class DecisionRequested(Message):
    """The user decided on a plan with a card (or a dialog).

    ``revision`` / ``round_no`` say which proposal revision or review round the card showed, so a
    key pressed on a card that has gone stale is refused instead of deciding on something newer.
    """

    plan_id: int | None
    decision: Decision
    feedback: str = ""
    seat: str | None = None
    revision: int | None = None
    round_no: int | None = None
    message_id: int | None = None


class DecisionCard(ArmedCard):
    """A focusable card that decides something about one plan.

    Subclasses declare ``DOCK_KIND`` (how the dock tells cards apart), ``HINTS`` (binding id →
    the words shown after its key, in the order shown) and a ``view`` with a ``plan_id``.
    """

    DEFAULT_CSS = """
    /* the focus ring: the card that has the keys draws a heavy frame in the accent colour, where every
       other card has a rounded one (a decided card keeps its folded look: it has no keys left) */
    DecisionCard:focus, DecisionCard.-pending:focus, DecisionCard.-held:focus, DecisionCard.-overridden:focus {
        border: heavy $accent; border-title-color: $accent; border-title-style: bold;
    }
    """

    DOCK_KIND: ClassVar[str] = ""
    """How the decision dock tells its cards apart without importing every card class."""

    HINTS: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(binding id, words) of the keys the card's hint line names, in order."""

    if TYPE_CHECKING:
        view: CardView
        """The card's view; each card class declares its own, more precise, reactive ``view``."""

    def render(self) -> RenderResult:
        """Nothing of its own: a card is its children (while it composes them again, it shows blank,
        never Textual's stand-in, the widget's class names such as ``PlanProposalCard.-decided``)."""
        return Blank(self.background_colors[1])

    def keys_owner(self) -> str:
        """What the card's keys act on, as the footer and the card's title name it (``Plan 2``)."""
        plan_id = self.view.plan_id
        return f"Plan {plan_id}" if plan_id is not None else "Plan"

    def hint_items(self) -> Iterable[tuple[str, str]]:
        """The (binding id, words) pairs that act now (a subclass drops the ones that do not)."""
        return self.HINTS

    def key_hint(self, *, sep: str = " · ") -> str:
        """``a approve · r request revision`` with the keys as currently mapped."""
        return hint_line(self.app, type(self), self.hint_items(), sep=sep)

    def key_content(self) -> Content:
        """The hint as the card's own footer shows it: each key in bold (never read as markup)."""
        parts: list[tuple[str, str] | str] = []
        for binding_id, words in self.hint_items():
            if parts:
                parts.append("   ")
            parts += [(key_for(self.app, type(self), binding_id), "bold"), f" {words}"]
        return Content.assemble(*parts)
