"""PermissionDock: an agent's permission questions, above the composer of the conversation they belong to.

The main chat's dock sits above the decision dock; a branch's sits in the branch pane above the
branch's composer. Each question is a :class:`~tunaflow_tui.widgets.permission.permission_card.PermissionCard`;
a line under the cards names the keys of the newest open one (``f2`` first while it does not have the
focus). The focus follows the decision cards' rules: a card that was answered, withdrawn, or scrolled
out of view gives its keys up, to its conversation's composer, never to another card.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from tunaflow_tui.viewmodels.permission_views import PermissionCardView
from tunaflow_tui.widgets.decision.decision_dock import fit_hint
from tunaflow_tui.widgets.permission.permission_card import PermissionCard

KEEP_SETTLED = 1
"""Answered cards a dock keeps (newest first): the last outcome stays in sight, older ones go."""


class PermissionDock(VerticalScroll, can_focus=False):
    """The permission questions of one conversation (oldest first) and the keys of the newest open one."""

    DEFAULT_CSS = """
    PermissionDock { height: auto; max-height: 50%; padding: 0 1; scrollbar-size-vertical: 1; }
    PermissionDock > #permission-hint {
        dock: bottom; height: 1; background: $warning 20%; color: $text; padding: 0 1; text-style: bold;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def __init__(self, conversation_id: str, *, id: str | None = None) -> None:
        """A dock for the questions asked in ``conversation_id``."""
        super().__init__(id=id, classes="permission-dock")
        self.conversation_id = conversation_id
        self._seen_with_keys: Widget | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="permission-hint", markup=False)

    def on_mount(self) -> None:
        self.refresh_hint()

    # ------------------------------------------------------------------ the cards
    def cards(self) -> list[PermissionCard]:
        """The cards, oldest first."""
        return [c for c in self.children if isinstance(c, PermissionCard)]

    def card_for(self, request_id: int) -> PermissionCard | None:
        """The card of one question, if shown here."""
        return next((c for c in self.cards() if c.view.request_id == request_id), None)

    def newest_open(self) -> PermissionCard | None:
        """The newest card whose question waits for an answer."""
        waiting = [c for c in self.cards() if c.view.is_open]
        return waiting[-1] if waiting else None

    async def show(self, view: PermissionCardView) -> PermissionCard:
        """Show a question (or its new state); answered cards beyond :data:`KEEP_SETTLED` leave."""
        card = self.card_for(view.request_id)
        if card is not None:
            self.update(view)
            return card
        card = PermissionCard(view, id=f"permission-{view.request_id}")
        await self.mount(card)
        await self._prune()
        self.refresh_hint()
        self.call_after_refresh(self.scroll_to_widget, card, animate=False)
        return card

    def update(self, view: PermissionCardView) -> None:
        """A question's new state (answered or withdrawn): its card says so and gives its keys up."""
        card = self.card_for(view.request_id)
        if card is None:
            return
        card.view = view
        if not view.is_open:
            self._release_focus(card)
        self.refresh_hint()

    async def _prune(self) -> None:
        settled = [c for c in self.cards() if not c.view.is_open]
        for card in settled[: max(len(settled) - KEEP_SETTLED, 0)]:
            self._release_focus(card)
            await card.remove()

    # ------------------------------------------------------------------ the keys
    def hint_text(self) -> str:
        """The keys of the newest open question; while its card lacks the focus, the key that reaches it first."""
        from tunaflow_tui.keyhints import app_key

        card = self.newest_open()
        if card is None:
            return ""
        keys = card.key_hint()
        if card.has_focus:
            return f"{card.view.asker} asks: {keys}"
        return f"{card.view.asker} asks — {app_key(self.app, 'decision.jump', 'f2')} focuses it, then {keys}"

    def refresh_hint(self) -> None:
        """Bring the key line in line with the cards."""
        if not self.is_attached:
            return
        hint = self.query_one("#permission-hint", Static)
        text = self.hint_text()
        width = hint.content_size.width or self.content_size.width - 2
        hint.update(fit_hint(text, width))
        hint.display = bool(text)

    def on_descendant_focus(self) -> None:
        focused = self.app.focused
        if focused is not self._seen_with_keys:
            self._seen_with_keys = None
        self.refresh_hint()
        # a card focused where it already stands in view is seen there (no scroll would tell)
        self.call_after_refresh(self.keys_follow_the_eye)

    def on_descendant_blur(self) -> None:
        if not any(c.has_focus for c in self.cards()):  # the keys went elsewhere: a card focused again starts unseen
            self._seen_with_keys = None
        self.refresh_hint()

    def on_resize(self) -> None:
        self.call_after_refresh(self.refresh_hint)
        self.call_after_refresh(self.keys_follow_the_eye)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """The cards moved: the card with the keys may have gone out of view."""
        super().watch_scroll_y(old_value, new_value)
        if self.is_attached:
            self.call_after_refresh(self.keys_follow_the_eye)

    def keys_follow_the_eye(self) -> None:
        """A card with the keys that no longer has a row on screen gives them up, to the composer."""
        card = next((c for c in self.cards() if c.has_focus), None)
        if card is None or not self.is_attached or not self.display:
            return
        if self.app.animator.is_being_animated(self, "scroll_y"):
            return
        if self.can_view_partial(card) and self.screen.can_view_partial(card):
            self._seen_with_keys = card
            return
        if self._seen_with_keys is not card:
            return  # focused and not drawn in view yet: the scroll to it is still coming
        self._seen_with_keys = None  # brought back (f2), it has to be drawn in view before it can leave it
        self._release_focus(card)
        self.refresh_hint()

    def _release_focus(self, card: Widget) -> None:
        """A card giving its keys up hands the focus to its conversation's composer (never to another card)."""
        if not card.has_focus_within:
            return
        from tunaflow_tui.widgets.composer import Composer

        node = self.parent
        while node is not None and isinstance(node, Widget):
            composers = [c for c in node.query(Composer) if c.display and not c.disabled]
            if composers:
                composers[0].focus_input()
                return
            node = node.parent
        self.screen.set_focus(None)
