"""DecisionDock: the cards waiting for the user, above the composer.

The dock holds at most one card per plan: its pending proposal, its review verdict, or, once the
plan is done, the merge offer. A decided card stays, folded to its border (title and decision),
until the plan's next card replaces it. The dock is hidden while it is empty.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, TypeGuard

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from tunaflow_tui.widgets.decision.decision_card import DecisionCard

if TYPE_CHECKING:
    from tunaflow_tui.viewmodels.decision_queue import QueuedDecision
    from tunaflow_tui.viewmodels.plan_rows import ProposalView, VerdictView, WayView
    from tunaflow_tui.widgets.decision.done_card import DoneCard, DoneView
    from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard
    from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard
    from tunaflow_tui.widgets.decision.way_card import WayCard

PROPOSAL, VERDICT, DONE, WAY = "proposal", "verdict", "done", "way"
HINT_SEP = " · "


def fit_hint(text: str, width: int) -> str:
    """``text`` whole if it fits in ``width`` cells; otherwise as many whole ``·``-separated items
    as fit, then ``…`` (never a key cut from its words, never a word cut in two)."""
    if width <= 0 or cell_len(text) <= width:
        return text
    items = text.split(HINT_SEP)
    while len(items) > 1:
        items.pop()
        shown = HINT_SEP.join(items) + HINT_SEP + "…"
        if cell_len(shown) <= width:
            return shown
    words = items[0].split(" ")
    while len(words) > 1:
        words.pop()
        while len(words) > 1 and (len(words[-1]) == 1 or words[-1] == "then"):
            words.pop()  # a key never ends the line without its words
        shown = " ".join(words) + " …"
        if cell_len(shown) <= width:
            return shown
    return "…"
"""The ``DOCK_KIND`` of the card classes (they load with the first card, not with the dock)."""


def _capital(text: str) -> str:
    """``text`` with its first letter upper-case (the start of the dock's line)."""
    return text[:1].upper() + text[1:]


def card_kind(card: Widget) -> str | None:
    """``proposal``, ``verdict`` or ``done`` for a dock card; None for anything else."""
    return card.DOCK_KIND if isinstance(card, DecisionCard) else None


def is_proposal_card(card: Widget | None) -> TypeGuard[PlanProposalCard]:
    """True for a plan proposal card (told apart by its ``DOCK_KIND``, without loading its class)."""
    return card is not None and card_kind(card) == PROPOSAL


def is_verdict_card(card: Widget | None) -> TypeGuard[ReviewVerdictCard]:
    """True for a review verdict card."""
    return card is not None and card_kind(card) == VERDICT


def is_way_card(card: Widget | None) -> TypeGuard[WayCard]:
    """True for the card of a plan waiting without a proposal or verdict to show."""
    return card is not None and card_kind(card) == WAY


def is_done_card(card: Widget | None) -> TypeGuard[DoneCard]:
    """True for a finished plan's merge offer."""
    return card is not None and card_kind(card) == DONE


def card_plan_id(card: Widget) -> int | None:
    """The plan a dock card belongs to."""
    if not isinstance(card, DecisionCard):
        return None
    plan_id: int | None = card.view.plan_id
    return plan_id


def card_has_keys(card: Widget) -> bool:
    """True while a card's keys still decide something: it waits (held too), or offers a merge."""
    if is_done_card(card):
        return bool(tuple(card.hint_items()))
    if is_proposal_card(card):
        return card.is_pending
    return card_is_pending(card)


def card_is_pending(card: Widget) -> bool:
    """True while a card waits for a decision."""
    if is_proposal_card(card) or is_verdict_card(card) or is_way_card(card):
        return card.view.decision is None
    return False


class DockHint(Static):
    """The dock's one line of keys, cut after a whole key to the width it is drawn at.

    It is cut as it is drawn, to the width Textual draws it at (the dock's width less its padding,
    its scrollbar and the line's own padding), so any change of that width cuts it again.  A width
    measured beforehand can be stale (the dock hidden behind a narrow pinned pane, then shown), and
    Textual would then cut the line mid-word.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)
        self._text = ""

    @property
    def text(self) -> str:
        """The whole line, before it is cut to the width it is drawn at."""
        return self._text

    def show(self, text: str) -> None:
        """Show ``text``, cut to fit when it is drawn."""
        if text != self._text:
            self._text = text
            self.refresh()

    def render(self) -> Content:
        return Content(fit_hint(self._text, self.size.width))


class DecisionDock(VerticalScroll, can_focus=False):
    """The cards waiting for the user (one per plan), newest last."""

    DEFAULT_CSS = """
    DecisionDock { height: auto; max-height: 60%; display: none; padding: 0 1; scrollbar-size-vertical: 1; }
    DecisionDock > #dock-hint {
        dock: bottom; height: 1; background: $warning 20%; color: $text; padding: 0 1; text-style: bold;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    DecisionDock > #dock-hint.-quiet { background: $panel; text-style: none; }
    DecisionDock.-has-cards { display: block; }
    /* decided cards, and a done card the user is not on, fold to one line: their titled top border */
    DecisionDock > PlanProposalCard.-decided, DecisionDock > ReviewVerdictCard.-decided,
    DecisionDock > WayCard.-decided, DecisionDock > DoneCard:blur {
        height: 1; max-height: 1; overflow: hidden hidden; margin: 0; padding: 0 1;
        border: none; border-top: round $panel-lighten-2; border-title-color: $text-muted;
    }
    DecisionDock > DoneCard:blur { border-top: round $success; border-title-color: $text-success; }
    DecisionDock > DoneCard.-overridden:blur { border-top: round $warning; border-title-color: $text-warning; }
    /* a held proposal folds while the user is elsewhere, and opens whole when they move to it (f2) */
    DecisionDock > PlanProposalCard.-held:blur { max-height: 3; overflow: hidden hidden; margin: 0; }
    """

    def compose(self) -> ComposeResult:
        yield DockHint(id="dock-hint")

    queue: tuple[QueuedDecision, ...] = ()
    """Everything waiting for the user — plans and agents' questions — in the order f2 walks it (set by the app)."""

    jump_target: QueuedDecision | None = None
    """What f2 reaches from outside the cards (a plan's decision or an agent's question)."""

    def on_mount(self) -> None:
        self.refresh_hint()
        # the keys moving to an agent's question (in its own dock) change where f2 goes next
        self.watch(self.screen, "focused", self._focus_moved, init=False)

    def _focus_moved(self) -> None:
        if self.is_attached:
            self.refresh_hint()

    def set_queue(self, queue: tuple[QueuedDecision, ...], jump_target: QueuedDecision | None = None) -> None:
        """What waits for the user now, oldest first (held plans last), and what f2 reaches from outside the
        cards."""
        if (queue, jump_target) != (self.queue, self.jump_target):
            self.queue, self.jump_target = queue, jump_target
            self.refresh_hint()

    def waiting(self) -> tuple[QueuedDecision, ...]:
        """The queue less the plans whose card shows a decision just taken (the plan has not moved yet)."""
        def decided(plan_id: int | None) -> bool:
            card = self.card_for(plan_id) if plan_id is not None else None
            return card is not None and not card_has_keys(card) and not is_done_card(card)

        return tuple(entry for entry in self.queue if not decided(entry.plan_id))

    def _question_with_keys(self) -> int | None:
        """The agent's open question whose card has the keys (it lives in its own dock), if one has."""
        focused = self.app.focused
        if focused is None:
            return None
        for node in focused.ancestors_with_self:
            view = getattr(node, "view", None)
            request_id = getattr(view, "request_id", None)
            if isinstance(request_id, int) and not isinstance(node, DecisionCard):
                return request_id if getattr(view, "is_open", False) else None
        return None

    def _queue_text(self, jump: str) -> str | None:
        """With several decisions waiting (or an agent's question): how many, which card has the keys, and
        what f2 reaches next — in the order f2 walks them, questions and plans alike."""
        waiting = self.waiting()
        questions = [entry for entry in waiting if entry.question is not None]
        if len(waiting) < 2 and not questions:
            return None
        if len(waiting) == 1:
            return f"{_capital(waiting[0].name)} waits — {jump} focuses it"
        count = f"{len(waiting)} decisions waiting"
        focused = self.focused_card()
        if focused is not None and card_has_keys(focused) and not is_done_card(focused):
            kind = card_kind(focused)
            state = "held" if self._held(focused) else "review" if kind == VERDICT else "waiting"
            what = f"{focused.keys_owner()} {'review ' if kind == VERDICT and state == 'held' else ''}{state}"
            return f"{count} · {what}: {focused.key_hint()} · {jump} next"
        order = ", ".join(entry.name for entry in waiting)
        on = self._question_with_keys()
        at = next((n for n, entry in enumerate(waiting) if on is not None and entry.question == on), None)
        if at is not None:  # from the question that has the keys, f2 goes to the one after it
            following = waiting[(at + 1) % len(waiting)]
            return f"{count} — {jump} moves on to {following.name}, oldest first: {order}"
        target = self.jump_target if self.jump_target in waiting else waiting[0]
        return f"{count} — {jump} focuses {target.name}, then walks on, oldest first: {order}"

    @staticmethod
    def _held(card: DecisionCard) -> bool:
        view = card.view
        return getattr(view, "decision", None) == "hold" or bool(getattr(view, "held", False))

    def hint_text(self) -> tuple[str, bool]:
        """The keys of the newest card that waits (docked under the cards, so they never scroll away).

        The hint names the plan the keys act on (``Plan 2 waiting: a approve …``). While the card
        does not have the focus (it arrived as the user was typing, or scrolled out of view), the
        hint leads with the key that reaches it: its own keys do nothing until then. With several
        decisions waiting it leads with how many (``3 decisions waiting · Plan 2 review: a accept …``)
        and, with no card focused, names them in the order f2 walks them — an agent's open question by who
        asks (``the Developer's question``) — leading with the one f2 reaches next. Every key is named as
        the keymap has it now.
        """
        from tunaflow_tui.keyhints import app_key, hint_line

        jump = app_key(self.app, "decision.jump", "f2")
        several = self._queue_text(jump)
        if several is not None:
            return (several, True)
        pending = self.newest_pending()
        kind = card_kind(pending) if pending is not None else None
        if pending is not None and kind in (PROPOSAL, VERDICT, WAY):
            state = "held" if self._held(pending) else "waiting"  # held: f2 and its keys still reach it
            what = f"{pending.keys_owner()} {'review ' if kind == VERDICT else ''}{state}"
            keys = pending.key_hint()
            if pending.has_focus:
                return (f"{what}: {keys} · {jump} focus", True)
            return (f"{what} — {jump} focuses it, then {keys}", True)
        card = self.newest_done()
        if card is not None:
            if card.has_focus:
                words = {"done.merge": "merge into the base branch", "done.remove_worktree": "remove the worktree"}
                keys = hint_line(self.app, type(card), [(binding_id, words[binding_id])
                                                        for binding_id, _ in card.hint_items()])
                return (f"{card.keys_owner()} done: {keys}", False)
            return (f"{card.keys_owner()} done — {jump} focuses it, then {card.key_hint()}", False)
        return ("", False)

    def refresh_hint(self) -> None:
        """Bring the key hint in line with the cards."""
        text, urgent = self.hint_text()
        hint = self.query_one("#dock-hint", DockHint)
        hint.show(text)
        hint.display = bool(text)
        hint.set_class(not urgent, "-quiet")

    def on_resize(self) -> None:
        """A smaller dock may hide the card that has the keys (the hint cuts itself to its new width)."""
        self.call_after_refresh(self.keys_follow_the_eye)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """The cards moved: the card with the keys may have gone out of view."""
        super().watch_scroll_y(old_value, new_value)
        if self.is_attached:
            card = self.focused_card()
            if card is not None and card is not self._seen_with_keys and self.can_view_partial(card):
                # on screen as drawn before this move: seen, even if the check after its focus comes later
                self._seen_with_keys = card
            self.call_after_refresh(self.keys_follow_the_eye)

    def focused_card(self) -> DecisionCard | None:
        """The card that has the keys (the focus is on it or inside it), if any."""
        return next((card for card in self.cards() if card.has_focus_within), None)

    def keys_follow_the_eye(self) -> None:
        """A card that has the keys but no row on screen any more gives them up, to the composer.

        Its keys would otherwise act on a plan the user cannot see (``x`` on a finished plan scrolled
        away). The hint under the cards then leads with the key that brings it back. Checked once
        the cards have been drawn where they are now, and not while the dock is still scrolling to a
        card (f2 scrolls it into view).
        """
        card = self.focused_card()
        if card is None or not self.is_attached or not self.display:
            return
        if self.app.animator.is_being_animated(self, "scroll_y"):
            return  # the animation's last step checks again
        if self.can_view_partial(card):
            self._seen_with_keys = card
            return
        if self._seen_with_keys is not card:
            return  # focused and not drawn in view yet: the scroll to it (f2, an arriving card) is still coming
        self._seen_with_keys = None  # brought back (f2), it has to be drawn in view before it can leave it
        self._release_focus(card)
        self.refresh_hint()

    def on_plan_proposal_card_decided(self) -> None:
        self.call_after_refresh(self.refresh_hint)

    def on_review_verdict_card_decided(self) -> None:
        self.call_after_refresh(self.refresh_hint)

    def on_decision_requested(self) -> None:
        """A card's key decided: the card shows the decision at once, and so does the hint (not
        ``Plan waiting: a approve…`` until the plan moves, seconds later)."""
        self.call_after_refresh(self.refresh_hint)

    _seen_with_keys: Widget | None = None
    """The focused card once it has been in view: only a card the user saw can scroll away from them."""

    def on_descendant_focus(self) -> None:
        if self.focused_card() is not self._seen_with_keys:
            self._seen_with_keys = None
        self.refresh_hint()
        # a card focused where it already stands in view is seen there (no scroll would tell)
        self.call_after_refresh(self.keys_follow_the_eye)

    def on_descendant_blur(self) -> None:
        if self.focused_card() is None:  # the keys went elsewhere: a card focused again starts unseen
            self._seen_with_keys = None
        self.refresh_hint()

    def cards(self) -> list[DecisionCard]:
        """The cards, oldest first."""
        return [c for c in self.children if isinstance(c, DecisionCard)]

    def card_for(self, plan_id: int) -> DecisionCard | None:
        """The card of a plan, if any."""
        return next((c for c in self.cards() if card_plan_id(c) == plan_id), None)

    def newest_done(self) -> DoneCard | None:
        """The newest finished plan's card that still offers something (a merge, a worktree to remove)."""
        done = [c for c in self.cards() if is_done_card(c) and tuple(c.hint_items())]
        card = done[-1] if done else None
        return card if is_done_card(card) else None

    def newest_pending(self) -> DecisionCard | None:
        """The newest card still waiting for a decision."""
        pending = [c for c in self.cards() if card_is_pending(c)]
        return pending[-1] if pending else None

    def _release_focus(self, card: Widget) -> None:
        """A card leaving the dock with the focus hands it to the composer, never to another card.

        Textual would move the focus to the next card in the chain (another plan's, out of view),
        whose keys would then act on a plan the user is not looking at.
        """
        if card.has_focus_within:
            # at once, not after a refresh: a card arriving meanwhile may take the focus from here
            composer = getattr(self.app, "composer", None)
            field = getattr(composer, "input", None)
            self.screen.set_focus(field if isinstance(field, Widget) and field.focusable else None)

    async def _put(self, plan_id: int, card: DecisionCard) -> DecisionCard:
        old = self.card_for(plan_id)
        had_focus = old is not None and old.has_focus_within
        holder = self.focused_card()
        # another plan's card has the keys: the new one must not scroll it out of view (it would give them up)
        elsewhere = holder is not None and holder is not old and card_has_keys(holder)
        if old is not None:
            self._release_focus(old)
            await old.remove()
        await self.mount(card)
        if had_focus:  # the same plan's next state: the focus stays with the plan the user was on
            card.focus_on_its_own(came_from=old)  # the user was on the card, not typing in the composer
        self.set_class(True, "-has-cards")
        self.refresh_hint()
        if not elsewhere:
            self.call_after_refresh(self.scroll_to_widget, card, animate=False)
        return card

    async def show_proposal(self, view: ProposalView) -> PlanProposalCard:
        """Show (or refresh) a plan's proposal card."""
        from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard

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
        from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard

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
        from tunaflow_tui.widgets.decision.done_card import DoneCard

        old = self.card_for(view.plan_id)
        if isinstance(old, DoneCard):
            old.update_view(view)
            self.refresh_hint()
            return old
        card = await self._put(view.plan_id, DoneCard(view))
        assert isinstance(card, DoneCard)
        return card

    async def show_way(self, view: WayView) -> WayCard:
        """Show (or refresh) the card of a plan that waits without a proposal or verdict to show."""
        from tunaflow_tui.widgets.decision.way_card import WayCard

        return await self._show_way_card(WayCard, view)

    async def show_conflict(self, view: WayView) -> WayCard:
        """Show (or refresh) the card of a plan whose merge conflicted (a way card with its own keys)."""
        from tunaflow_tui.widgets.decision.conflict_card import ConflictCard

        return await self._show_way_card(ConflictCard, view)

    async def _show_way_card(self, kind: type[WayCard], view: WayView) -> WayCard:
        """The plan's undecided card of ``kind`` refreshed in place, else a new one put in its place."""
        old = self.card_for(view.plan_id)
        if isinstance(old, kind) and old.view.decision is None:
            if old.view != view:
                old.view = view
                old.refresh_bindings()
                self.refresh_hint()
            return old
        card = await self._put(view.plan_id, kind(view))
        assert isinstance(card, kind)
        return card

    def mark_decided(self, plan_id: int, decision: str | None) -> None:
        """Show ``decision`` on a plan's card (None: back to pending, e.g. when the decision failed)."""
        card = self.card_for(plan_id)
        if is_proposal_card(card):  # noqa: SIM114 (each branch narrows the view type for replace)
            card.view = replace(card.view, decision=decision)
        elif is_verdict_card(card):  # noqa: SIM114
            card.view = replace(card.view, decision=decision)
        elif is_way_card(card):
            card.view = replace(card.view, decision=decision)
        else:
            return
        card.refresh_bindings()
        self.refresh_hint()

    async def drop(self, plan_id: int) -> None:
        """Remove a plan's card."""
        card = self.card_for(plan_id)
        if card is not None:
            self._release_focus(card)
            await card.remove()
        self.set_class(bool(self.cards()), "-has-cards")
        self.refresh_hint()
