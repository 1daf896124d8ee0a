"""DecisionDock: the cards waiting for the user, above the composer; and the DoneCard with the merge offer.

The dock holds at most one card per plan: its pending proposal, its review verdict, or, once the
plan is done, the merge offer. A decided card stays, folded to its border (title and decision),
until the plan's next card replaces it. The dock is hidden while it is empty.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from tunaflow_tui.views.plans import ProposalView, VerdictView
from tunaflow_tui.widgets.plan_card import PlanProposalCard
from tunaflow_tui.widgets.verdict_card import ReviewVerdictCard

DONE = Binding.Group("Done")


@dataclass(frozen=True)
class DoneView:
    """A finished plan and what is left to do with its branch."""

    plan_id: int
    title: str
    git_branch: str | None = None
    base_branch: str | None = None
    has_worktree: bool = False
    merged: str | None = None
    """The merge outcome once merged (e.g. ``fast-forward``)."""


class DoneCard(Vertical, can_focus=True):
    """A done plan: **m** merges its branch into the base, **x** removes its worktree."""

    HELP = """
## Plan done

- **m** merge the plan's branch into its base (fast-forward or a merge commit; never forced).
- **x** remove the plan's worktree (its git branch stays).
"""

    DEFAULT_CSS = """
    DoneCard { height: auto; border: round $success; padding: 0 1; margin: 1 0 0 0; border-title-style: bold; }
    DoneCard:focus { border: double $success; }
    DoneCard .keys { color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "done('merge')", "Merge plan", id="done.merge", group=DONE,
                tooltip="Merge the plan's branch into its base"),
        Binding("x", "done('remove_worktree')", "Remove worktree", id="done.remove_worktree", group=DONE,
                tooltip="Remove the plan's worktree; the git branch stays"),
    ]

    @dataclass
    class Requested(Message):
        """The user asked to ``merge`` or ``remove_worktree`` for a done plan."""

        plan_id: int
        action: str

    view: reactive[DoneView] = reactive(DoneView(0, ""), recompose=True)

    def __init__(self, view: DoneView, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(DoneCard.view, view)

    def compose(self) -> ComposeResult:
        view = self.view
        self.border_title = "✔ Plan done"
        yield Static(view.title, markup=False)
        if view.merged:
            yield Static(f"Merged into {view.base_branch}: {view.merged}", markup=False)
        elif view.git_branch:
            yield Static(f"{view.git_branch} is ready to merge into {view.base_branch}.", markup=False)
        else:
            yield Static("The work was done in place (no git branch to merge).", markup=False)
        keys = []
        if view.git_branch and not view.merged:
            keys.append("[b]m[/b] merge")
        if view.has_worktree:
            keys.append("[b]x[/b] remove worktree")
        if keys:
            yield Static("   ".join(keys), classes="keys")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "done":
            if parameters and parameters[0] == "merge":
                return bool(self.view.git_branch) and not self.view.merged
            return self.view.has_worktree
        return True

    def action_done(self, action: str) -> None:
        if self.check_action("done", (action,)):
            self.post_message(self.Requested(self.view.plan_id, action))

    def update_view(self, view: DoneView) -> None:
        """Show a new state (after a merge or a worktree removal)."""
        self.view = view
        self.refresh_bindings()


Card = PlanProposalCard | ReviewVerdictCard | DoneCard


def card_plan_id(card: Widget) -> int | None:
    """The plan a dock card belongs to."""
    if isinstance(card, (PlanProposalCard, ReviewVerdictCard, DoneCard)):
        return card.view.plan_id
    return None


def card_is_pending(card: Widget) -> bool:
    """True while a card waits for a decision."""
    if isinstance(card, PlanProposalCard):
        return card.view.decision is None
    if isinstance(card, ReviewVerdictCard):
        return card.view.decision is None
    return False


class DecisionDock(VerticalScroll, can_focus=False):
    """The cards waiting for the user (one per plan), newest last."""

    DEFAULT_CSS = """
    DecisionDock { height: auto; max-height: 60%; display: none; padding: 0 1; scrollbar-size-vertical: 1; }
    DecisionDock > #dock-hint {
        dock: bottom; height: 1; background: $warning 20%; color: $text; padding: 0 1; text-style: bold;
    }
    DecisionDock > #dock-hint.-quiet { background: $panel; text-style: none; }
    DecisionDock.-has-cards { display: block; }
    DecisionDock > PlanProposalCard.-decided, DecisionDock > ReviewVerdictCard.-decided {
        max-height: 3; overflow: hidden hidden; margin: 0;
    }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="dock-hint", markup=False)

    def hint_text(self) -> tuple[str, bool]:
        """The keys of the newest card that waits (docked under the cards, so they never scroll away)."""
        pending = self.newest_pending()
        if isinstance(pending, PlanProposalCard):
            return ("Plan waiting: a approve · r request revision · h hold · f2 focus", True)
        if isinstance(pending, ReviewVerdictCard):
            text = "Review waiting: a accept · w rework · d redesign"
            if pending.view.has_errored_seat:
                text += " · t retry seat"
            return (text + " · f2 focus", True)
        done = [c for c in self.cards() if isinstance(c, DoneCard)]
        if done and done[-1].view.git_branch and not done[-1].view.merged:
            return ("Plan done: m merge into the base branch · x remove the worktree", False)
        return ("", False)

    def refresh_hint(self) -> None:
        """Bring the key hint in line with the cards."""
        text, urgent = self.hint_text()
        hint = self.query_one("#dock-hint", Static)
        hint.update(text)
        hint.display = bool(text)
        hint.set_class(not urgent, "-quiet")

    def on_mount(self) -> None:
        self.refresh_hint()

    def on_plan_proposal_card_decided(self) -> None:
        self.call_after_refresh(self.refresh_hint)

    def on_review_verdict_card_decided(self) -> None:
        self.call_after_refresh(self.refresh_hint)

    def cards(self) -> list[Widget]:
        """The cards, oldest first."""
        return [c for c in self.children if isinstance(c, (PlanProposalCard, ReviewVerdictCard, DoneCard))]

    def card_for(self, plan_id: int) -> Widget | None:
        """The card of a plan, if any."""
        return next((c for c in self.cards() if card_plan_id(c) == plan_id), None)

    def newest_pending(self) -> Widget | None:
        """The newest card still waiting for a decision."""
        pending = [c for c in self.cards() if card_is_pending(c)]
        return pending[-1] if pending else None

    async def _put(self, plan_id: int, card: Widget) -> Widget:
        old = self.card_for(plan_id)
        if old is not None:
            await old.remove()
        await self.mount(card)
        self.set_class(True, "-has-cards")
        self.refresh_hint()
        self.call_after_refresh(self.scroll_to_widget, card, animate=False)
        return card

    async def show_proposal(self, view: ProposalView) -> PlanProposalCard:
        """Show (or refresh) a plan's proposal card."""
        assert view.plan_id is not None
        old = self.card_for(view.plan_id)
        if isinstance(old, PlanProposalCard) and old.view.message_id == view.message_id \
                and old.view.revision == view.revision:
            if old.view != view:
                old.view = view
                old.refresh_bindings()
                self.refresh_hint()
            return old
        card = await self._put(view.plan_id, PlanProposalCard(view))
        assert isinstance(card, PlanProposalCard)
        return card

    async def show_verdict(self, view: VerdictView) -> ReviewVerdictCard:
        """Show (or refresh) a plan's verdict card."""
        old = self.card_for(view.plan_id)
        if isinstance(old, ReviewVerdictCard) and old.view.round_no == view.round_no \
                and (old.view.decision is None or view.decision is not None):
            if old.view != view:
                old.view = view
                old.refresh_bindings()
                self.refresh_hint()
            return old
        card = await self._put(view.plan_id, ReviewVerdictCard(view))
        assert isinstance(card, ReviewVerdictCard)
        return card

    async def show_done(self, view: DoneView) -> DoneCard:
        """Show (or refresh) the merge offer of a done plan."""
        old = self.card_for(view.plan_id)
        if isinstance(old, DoneCard):
            old.update_view(view)
            self.refresh_hint()
            return old
        card = await self._put(view.plan_id, DoneCard(view))
        assert isinstance(card, DoneCard)
        return card

    def mark_decided(self, plan_id: int, decision: str | None) -> None:
        """Show ``decision`` on a plan's card (None: back to pending, e.g. when the decision failed)."""
        card = self.card_for(plan_id)
        if isinstance(card, (PlanProposalCard, ReviewVerdictCard)):
            card.view = replace(card.view, decision=decision)  # type: ignore[arg-type]
            card.refresh_bindings()
            self.refresh_hint()

    async def drop(self, plan_id: int) -> None:
        """Remove a plan's card."""
        card = self.card_for(plan_id)
        if card is not None:
            await card.remove()
        self.set_class(bool(self.cards()), "-has-cards")
        self.refresh_hint()
