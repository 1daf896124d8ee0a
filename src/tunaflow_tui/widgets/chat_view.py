"""The chat: a scrolling window onto a conversation that may hold hundreds of thousands of messages.

Only a window of the conversation is mounted (the newest ``window`` messages at first), and it stays
bounded in both directions: scrolling to the top loads an older page and releases the newest blocks
beyond ``max_mounted``; scrolling back to the bottom loads a newer page and releases the oldest.
**home** (ctrl+home from the composer) mounts the first page of the conversation directly and
**end** (ctrl+end) the newest, so reaching either end costs one page, however long the conversation.
:meth:`ChatView.open_at` mounts the page around any one message (a search hit) and focuses it.

The view follows the tail with :meth:`~textual.widget.Widget.anchor`: set once, it keeps the
newest text in sight while an answer streams, and lets go as soon as the user scrolls up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, cast

from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from tunaflow_tui.keyhints import key_for
from tunaflow_tui.textual_compat import anchor_released, forget_inner_outer_colours, is_anchor_released
from tunaflow_tui.widgets.composer import ComposerInput

if TYPE_CHECKING:
    from tunaflow_tui.viewmodels.chat import MessageSource, MessageView
    from tunaflow_tui.widgets.message_block import MessageBlock


def _new_block(view: MessageView) -> MessageBlock:
    # Loaded with the first message: an empty chat (and the first frame) does without Markdown.
    from tunaflow_tui.widgets.message_block import MessageBlock

    return MessageBlock(view)


def forget_released_lines() -> None:
    """Let removed blocks' rendered lines go.

    Textual 8.2 caches ``StylesCache.get_inner_outer`` per styles cache (``lru_cache(1024)`` on the
    method), so the last 1,024 widgets drawn stay alive with every line they rendered, long after
    they left the screen: paging through a long chat kept tens of megabytes of released messages.
    The cache only saves recomputing two colours; it refills at once.
    """
    forget_inner_outer_colours()


class ChatView(VerticalScroll):
    """The message list of one conversation.

    Args:
        source: Where messages come from (the database, through the controller).
        window: How many of the newest messages to mount when opened (default: sized to the terminal).
        page: How many messages each "load older" / "load newer" step mounts.
        max_mounted: Upper bound on mounted message blocks; far-away ones are pruned.
    """

    HELP = """\
## Chat
- **escape** leaves the composer for the newest message; **up / down** then move the message cursor
  (the focused message can be acted on: **b** forks a branch from it).
- Scrolling to the top loads older messages, scrolling back down newer ones.
- **home** jumps to the first message of the conversation (**ctrl+home** from the composer).
- **end** jumps back to the newest message and follows new text again (**ctrl+end** from the composer).
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "previous_message", "Previous message", show=False, id="chat.previous"),
        Binding("down", "next_message", "Next message", show=False, id="chat.next"),
        Binding("home,ctrl+home", "first", "First", id="chat.first"),
        Binding("end,ctrl+end", "latest", "Newest", id="chat.latest"),
    ]

    FIRST_PAINT: ClassVar[int] = 12
    """Messages mounted before the first frame; the rest of the window follows right after."""

    MIN_WINDOW: ClassVar[int] = 12
    MAX_WINDOW: ClassVar[int] = 40
    """Bounds of the window sized to the terminal (when no ``window`` is given)."""

    def __init__(
        self,
        source: MessageSource,
        *,
        window: int | None = None,
        page: int = 20,
        max_mounted: int = 60,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.source = source
        self._window = None if window is None else max(1, window)
        self.page_size = max(1, page)
        self.max_mounted = max(self._window or self.MAX_WINDOW, self.page_size * 2, max_mounted)
        self.has_older = False
        """True when older messages exist that are not mounted."""
        self.has_newer = False
        """True when the newest messages were pruned (the user is reading far back)."""
        self._busy = False
        self._ready = False
        self._shown = 0  # which window is mounted: a window still arriving for an earlier one is dropped
        # Their keys are named on mount, as the keymap has them (see _name_keys).
        self._older_hint = Static("", id="older-hint", markup=False)
        self._newer_hint = Static("", id="newer-hint", markup=False)
        self._empty_hint = Static("", id="empty-hint", markup=False)

    # -- queries ---------------------------------------------------------------------------------

    @property
    def window_size(self) -> int:
        """How many of the newest messages a (re)opened conversation mounts.

        Unless fixed by ``window``: half the terminal's height (a message takes at least three
        rows), so about two screens of history are ready to scroll through; older pages load on
        scroll-up.
        """
        if self._window is not None:
            return self._window
        height = self.app.size.height if self.is_attached else 2 * self.MAX_WINDOW
        return max(self.MIN_WINDOW, min(self.MAX_WINDOW, height // 2))

    def blocks(self) -> list[MessageBlock]:
        """The mounted message blocks, oldest first."""
        hints = (self._empty_hint, self._older_hint, self._newer_hint)
        return [cast("MessageBlock", child) for child in self.children if child not in hints]

    def block_for(self, message_id: int) -> MessageBlock | None:
        """The mounted block showing ``message_id``, if any."""
        for block in self.blocks():
            if block.message_id == message_id:
                return block
        return None

    @property
    def focused_message_id(self) -> int | None:
        """The id of the message that has focus (for "branch from message" and similar)."""
        block = self._focused_block()
        return block.message_id if block else None

    @property
    def pages_on_scroll(self) -> bool:
        """True once scrolling to the top or the bottom loads the next page: a window just opened
        (the newest messages, the first page, a search hit) scrolls itself into place first."""
        return self._ready

    @property
    def is_following(self) -> bool:
        """True while the view sticks to the newest text."""
        return self.is_anchored and not is_anchor_released(self)

    # -- lifecycle -------------------------------------------------------------------------------

    def compose(self) -> list[Widget]:
        return [self._empty_hint, self._older_hint, self._newer_hint]

    async def on_mount(self) -> None:
        self._name_keys()
        await self.reload()

    def _name_keys(self) -> None:
        """Write the hints with the keys in force: a key remapped in ``[ui.keymap]`` shows as remapped."""
        send = key_for(self.app, ComposerInput, "composer.send", "enter", words=True)
        first = key_for(self.app, type(self), "chat.first", "home", words=True)
        latest = key_for(self.app, type(self), "chat.latest", "end", words=True)
        self._empty_hint.update(f"No messages yet. Type below and press {send} to send.")
        self._older_hint.update(f"↑ older messages: scroll up or press {first}")
        self._newer_hint.update(f"↓ newer messages: press {latest}")

    async def reload(self, source: MessageSource | None = None) -> None:
        """Show the newest window again (of ``source`` if given) and follow the tail."""
        if source is not None:
            self.source = source
        self._busy = True
        self._shown += 1
        shown = self._shown
        try:
            await self._release(self.blocks())
            views = self.source.window(None, self.window_size)
            self.has_older = len(views) >= self.window_size and self.source.count() > len(views)
            self.has_newer = False
            # Paint what fills a screen first; the rest of the window arrives after the first frame.
            split = max(0, len(views) - self.FIRST_PAINT)
            await self._mount_views(views[split:], before=self._newer_hint)
            self._update_hints()
            self.anchor()
        finally:
            self._busy = False
        if split:
            self.call_after_refresh(self._mount_rest, views[:split], shown)
        else:
            self.call_after_refresh(self._set_ready, shown)

    async def _mount_rest(self, views: Sequence[MessageView], shown: int) -> None:
        if shown != self._shown:  # another window was opened meanwhile (a search hit): it stays alone
            return
        blocks = self.blocks()
        if blocks:
            await self._mount_views(views, before=blocks[0])
        self.call_after_refresh(self._set_ready, shown)

    def _set_ready(self, shown: int) -> None:
        """Let scrolling page again, unless another window was opened since ``shown`` was (a search
        hit right after the chat opened: the first window's late word must not let it page away)."""
        if shown == self._shown:
            self._ready = True

    def follow(self) -> None:
        """Scroll to the newest text and keep following it."""
        self.anchor()

    # -- adding and streaming --------------------------------------------------------------------

    async def add_message(self, view: MessageView) -> MessageBlock | None:
        """Show a new finished message at the end; None if the tail is not mounted right now."""
        if self.has_newer:
            return None
        block = _new_block(view)
        await self._mount_views_blocks([block], before=self._newer_hint)
        await self._prune_top()
        self._update_hints()
        return block

    async def start_stream(self, view: MessageView) -> MessageBlock:
        """Add a message whose text will stream in; write to it with ``block.append(chunk)``."""
        if self.has_newer:
            await self.reload()
        block = _new_block(view)
        await self._mount_views_blocks([block], before=self._newer_hint)
        await self._prune_top()
        self._update_hints()
        return block

    def toggle_records(self) -> None:
        """Unfold every mounted record to its details; fold them all when every one is unfolded."""
        cards = [block.record for block in self.blocks() if block.record is not None]
        unfold = not all(card.expanded for card in cards)
        for card in cards:
            card.expanded = unfold

    # -- paging ----------------------------------------------------------------------------------

    async def load_older(self) -> int:
        """Mount one page of older messages above the window; returns how many were added."""
        if self._busy or not self.has_older:
            return 0
        self._busy = True
        try:
            blocks = self.blocks()
            first = blocks[0] if blocks else None
            views = self.source.window(first.message_id if first else None, self.page_size)
            if len(views) < self.page_size:
                self.has_older = False
            if not views:
                self._update_hints()
                return 0
            self.release_anchor()
            offset = (first.virtual_region.y - self.scroll_y) if first else 0.0
            await self._mount_views(views, before=first or self._newer_hint)
            blocks = self.blocks()
            excess = len(blocks) - self.max_mounted
            if excess > 0:
                await self._release(blocks[-excess:])
                self._reading_history()
            self._update_hints()
            if first is not None:
                self.call_after_refresh(self._keep_in_place, first, offset)
            return len(views)
        finally:
            self._busy = False

    async def load_newer(self) -> int:
        """Mount one page of newer messages after pruning them earlier; returns how many."""
        if self._busy or not self.has_newer:
            return 0
        self._busy = True
        try:
            blocks = self.blocks()
            if not blocks:
                self.has_newer = False
                return 0
            views = self.source.after(blocks[-1].message_id, self.page_size)
            await self._mount_views(views, before=self._newer_hint)
            await self._prune_top()
            if len(views) < self.page_size:
                self.has_newer = False
                self._follow_from_the_bottom()
            self._update_hints()
            return len(views)
        finally:
            self._busy = False

    async def _prune_top(self) -> None:
        """Remove the oldest blocks beyond ``max_mounted`` without moving what the user sees."""
        blocks = self.blocks()
        excess = len(blocks) - self.max_mounted
        if excess <= 0:
            return
        survivor = blocks[excess]
        following = self.is_following
        offset = survivor.virtual_region.y - self.scroll_y
        await self._release(blocks[:excess])
        self.has_older = True
        if not following:
            self.call_after_refresh(self._keep_in_place, survivor, offset)

    async def jump_first(self) -> None:
        """Show the first page of the conversation (released: whatever was mounted) from its top."""
        if self._busy:
            return
        focused = self._focused_block() is not None
        if not self.has_older:  # the first message is mounted already (a held key repeats): just show it
            self.release_anchor()
            self.scroll_home(animate=False, immediate=True)
            blocks = self.blocks()
            if focused and blocks:
                blocks[0].focus(scroll_visible=False)
            return
        self._busy = True
        self._ready = False  # the scroll to the top is ours: it must not page
        self._shown += 1
        try:
            self.release_anchor()
            views = self.source.first(self.window_size)
            with self.app.batch_update():
                await self._release(self.blocks())
                await self._mount_views(views, before=self._newer_hint)
                self.has_older = False
                if len(views) >= self.window_size and self.source.count() > len(views):
                    self._reading_history()
                else:
                    self.has_newer = False
                    self._follow_from_the_bottom()
                self._update_hints()
                self.scroll_home(animate=False, immediate=True)
            blocks = self.blocks()
            if focused and blocks:
                blocks[0].focus(scroll_visible=False)
        finally:
            self._busy = False
        self.call_after_refresh(self._scroll_home_then_ready, self._shown)

    async def jump_latest(self) -> None:
        """Show the newest messages (mounting them again if they were released) and follow new text."""
        if self._busy:
            return
        focused = self._focused_block() is not None
        if self.has_newer:
            await self.reload()
        else:
            self.anchor()
        blocks = self.blocks()
        if focused and blocks:
            blocks[-1].focus(scroll_visible=False)

    async def open_at(self, message_id: int) -> MessageBlock | None:
        """Show the messages around ``message_id``, however far back it is, and focus it.

        Half a window on either side of it is mounted in place of what was (one query each way);
        paging goes on from there in both directions. None when the conversation has no such message.
        """
        half = max(1, self.window_size // 2)
        older = self.source.window(message_id + 1, half + 1)  # ends with the message itself
        if not older or older[-1].id != message_id:
            return None
        newer = self.source.after(message_id, half)
        more_newer = len(newer) == half and bool(self.source.after(newer[-1].id, 1))
        self._busy = True
        self._ready = False  # the scroll to the message is ours: it must not page
        self._shown += 1
        try:
            self.release_anchor()
            with self.app.batch_update():
                await self._release(self.blocks())
                await self._mount_views([*older, *newer], before=self._newer_hint)
                self.has_older = bool(self.source.window(older[0].id, 1))
                if more_newer:
                    self._reading_history()
                else:
                    self.has_newer = False
                    self._follow_from_the_bottom()
                self._update_hints()
        finally:
            self._busy = False
        block = self.block_for(message_id)
        if block is not None:
            block.focus(scroll_visible=False)
            self.call_after_refresh(self._scroll_to_block_then_ready, block, self._shown)
        return block

    def _scroll_to_block_then_ready(self, block: MessageBlock, shown: int, tries: int = 8,
                                    last_y: int = -1) -> None:
        """Put ``block`` at the top; again after each refresh while the blocks above it still grow
        (their Markdown lays out after mounting), then let scrolling page again."""
        if shown != self._shown:  # another window was opened meanwhile
            return
        if not block.is_attached:
            self._set_ready(shown)
            return
        y = block.virtual_region.y
        self.scroll_to(y=y, animate=False, immediate=True)
        if y != last_y and tries > 0:
            self.call_after_refresh(self._scroll_to_block_then_ready, block, shown, tries - 1, y)
        else:
            self.call_after_refresh(self._set_ready, shown)

    def _reading_history(self) -> None:
        """The newest messages are released: stop following the tail until they are back."""
        self.has_newer = True
        # Not anchored: Textual would anchor again at the bottom of the window, which is not the
        # bottom of the conversation, and the next page could no longer be scrolled to.
        self.anchor(False)

    def _follow_from_the_bottom(self) -> None:
        """The newest messages are mounted again: follow new text once the user is at the bottom."""
        anchor_released(self)  # as after a scroll up: Textual anchors again at the bottom

    async def _release(self, blocks: Sequence[Widget]) -> None:
        """Remove ``blocks`` and let go of everything they rendered."""
        if blocks:
            await self.remove_children(blocks)
            forget_released_lines()

    def _keep_in_place(self, block: MessageBlock, offset: float) -> None:
        """Scroll so that ``block`` is ``offset`` rows below the top of the view, as before."""
        if block.is_attached:
            self.scroll_to(y=block.virtual_region.y - offset, animate=False, immediate=True)

    async def _mount_views(self, views: Sequence[MessageView], *, before: Widget) -> None:
        await self._mount_views_blocks([_new_block(view) for view in views], before=before)

    async def _mount_views_blocks(self, blocks: list[MessageBlock], *, before: Widget) -> None:
        if blocks:
            await self.mount_all(blocks, before=before)

    def _update_hints(self) -> None:
        self._older_hint.display = self.has_older
        self._newer_hint.display = self.has_newer
        self._empty_hint.display = not self.blocks() and not self.has_older

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        """Put the thumb where the view is when the scrollbar appears.

        Textual moves the thumb only while the bar shows, so a view that followed the newest message
        in the same layout that made the bar appear (the dock grew, the chat shrank) drew its thumb
        at the top while showing the bottom.
        """
        if shown:
            self.vertical_scrollbar.position = self.scroll_y

    def on_resize(self) -> None:
        """Stay at the newest text, thumb included, when the chat changes size while following it.

        Textual lays an anchored view out against its size before the change and puts it at the
        bottom on the next layout, moving the thumb without repainting it: the chat showed its end
        with the thumb still where the earlier layout put it (the dock grew under a new verdict).
        Scrolling to the end here, with the new size, moves view and thumb together.
        """
        if self.is_following and self.show_vertical_scrollbar and self.scroll_y != self.max_scroll_y:
            self.scroll_end(animate=False, immediate=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Load the previous page at the top and the next one at the bottom."""
        super().watch_scroll_y(old_value, new_value)
        if not self._ready or self._busy:
            return
        if new_value <= 0 < old_value and self.has_older:
            self.run_worker(self.load_older(), group="chat-paging", exclusive=True, exit_on_error=False)
        elif new_value >= self.max_scroll_y > old_value and self.has_newer:
            self.run_worker(self.load_newer(), group="chat-paging", exclusive=True, exit_on_error=False)

    # -- keyboard --------------------------------------------------------------------------------

    def _focused_block(self) -> MessageBlock | None:
        focused = self.screen.focused if self.is_attached else None
        node = focused
        blocks = self.blocks()
        while node is not None and node is not self:
            if node in blocks:
                return node
            node = node.parent if isinstance(node.parent, Widget) else None
        return None

    async def action_previous_message(self) -> None:
        """Focus the message above the focused one (loading older messages at the top)."""
        blocks = self.blocks()
        current = self._focused_block()
        index = blocks.index(current) if current in blocks else len(blocks)
        if index == 0 and self.has_older:
            await self.load_older()
            blocks = self.blocks()
            index = blocks.index(current) if current in blocks else 0
        if index > 0:
            blocks[index - 1].focus()

    async def action_next_message(self) -> None:
        """Focus the message below the focused one (loading newer ones at the bottom)."""
        blocks = self.blocks()
        current = self._focused_block()
        if current is None:
            return
        index = blocks.index(current)
        if index == len(blocks) - 1 and self.has_newer:
            await self.load_newer()
            blocks = self.blocks()
            index = blocks.index(current) if current in blocks else len(blocks) - 1
        if index + 1 < len(blocks):
            blocks[index + 1].focus()

    async def action_first(self) -> None:
        """Jump to the first message of the conversation."""
        await self.jump_first()

    def _scroll_home_then_ready(self, shown: int) -> None:
        if shown != self._shown:  # another window was opened meanwhile
            return
        self.scroll_home(animate=False, immediate=True)
        self.call_after_refresh(self._set_ready, shown)

    async def action_latest(self) -> None:
        """Jump to the newest message and follow new text again."""
        await self.jump_latest()
