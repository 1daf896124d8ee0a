"""One chat message: who spoke, the Markdown body, tools used, usage, and an error card.

Everything shown is agent output and therefore untrusted: every string goes through
:func:`~tunaflow_tui.core.terminal_text.neutralize` and is displayed without markup parsing.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static

from tunaflow_tui.core.terminal_text import StreamNeutralizer, neutralize
from tunaflow_tui.views.chat import MessageView, ToolLineView

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer
    from textual.widgets._markdown import MarkdownStream


def _plain(text: str) -> Content:
    """Neutralised text as Content, so square brackets are never read as markup."""
    return Content(neutralize(text))


def tools_summary(tools: tuple[ToolLineView, ...]) -> str:
    """``1 tool used`` / ``3 tools used``."""
    return f"{len(tools)} tool{'s' if len(tools) != 1 else ''} used"


MAX_RENDERED_CHARS = 40_000
"""Beyond this many characters a message's text is saved but not rendered (a note says so)."""

FLUSH_INTERVAL = 1 / 12
"""Streamed text reaches the screen at most this often (seconds).

Every write into a Markdown document that grows a paragraph changes its height, and a height
change lays out the whole screen.  Streams deliver hundreds of chunks a second; the eye needs a
dozen updates.  Chunks are collected and written together, for all streaming blocks of the app
in the same tick, so several parallel streams cost one layout per tick, not one per chunk.
"""


class _StreamClock:
    """One timer per app that writes the collected text of every streaming block at once."""

    _clocks: ClassVar[weakref.WeakKeyDictionary[App[object], _StreamClock]] = weakref.WeakKeyDictionary()

    def __init__(self, app: App[object]) -> None:
        self.app = app
        self.waiting: dict[MessageBlock, None] = {}
        self.timer: Timer | None = None

    @classmethod
    def of(cls, app: App[object]) -> _StreamClock:
        """The clock of ``app`` (created on first use)."""
        clock = cls._clocks.get(app)
        if clock is None:
            clock = cls._clocks[app] = cls(app)
        return clock

    def schedule(self, block: MessageBlock) -> None:
        """Write ``block``'s collected text on the next tick."""
        self.waiting[block] = None
        if self.timer is None:
            self.timer = self.app.set_interval(FLUSH_INTERVAL, self._tick, name="stream-flush")
        else:
            self.timer.resume()

    def forget(self, block: MessageBlock) -> None:
        """``block`` wrote its text itself (or went away)."""
        self.waiting.pop(block, None)

    async def _tick(self) -> None:
        blocks = list(self.waiting)
        self.waiting.clear()
        if not blocks:
            if self.timer is not None:
                self.timer.pause()
            return
        for block in blocks:
            await block._flush()


class MessageBlock(Vertical, can_focus=True):
    """A focusable message in the chat.

    Args:
        view: The message to show.  A view with status ``streaming`` starts an empty stream
            that :meth:`append` writes to; :meth:`finish` settles it.
    """

    HELP = """\
## Message
- **t** shows or hides the tools the agent used.
- **r** retries a failed turn (when the error card offers it).
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "toggle_tools", "Tools", id="message.tools"),
        Binding("r", "retry", "Retry", id="message.retry"),
    ]

    @dataclass
    class RetryRequested(Message):
        """The user asked to run the failed turn that produced this message again."""

        message_id: int

    def __init__(self, view: MessageView, *, id: str | None = None) -> None:
        super().__init__(id=id, classes=" ".join(self._status_classes(view)))
        self.view = view
        self._stream: MarkdownStream | None = None
        self._shown = ""
        self._pending: list[str] = []
        self._flushed_at = 0.0
        self._hidden_chars = 0
        self._neutralizer = StreamNeutralizer()

    @staticmethod
    def _status_classes(view: MessageView) -> list[str]:
        classes = [f"-{view.role}"]
        if view.error is not None:
            classes.append("-error")
        if view.status in ("interrupted", "streaming"):
            classes.append(f"-{view.status}")
        return classes

    @property
    def message_id(self) -> int:
        """The id of the message this block shows."""
        return self.view.id

    @property
    def text(self) -> str:
        """The (neutralised) body text rendered so far."""
        return self._shown

    @property
    def is_streaming(self) -> bool:
        """True until :meth:`finish` is called on a streaming message."""
        return self.view.status == "streaming"

    def compose(self) -> ComposeResult:
        yield Static(self._label_content(), classes="message-label", markup=False)
        self._shown = "" if self.is_streaming else self._capped(neutralize(self.view.content))
        yield Markdown(self._shown, classes="message-body")
        # Most messages have no extras: no empty container to style and lay out for them.
        extras = self._extras()
        if extras:
            yield Vertical(*extras, classes="message-extras")

    def _capped(self, text: str) -> str:
        """``text`` cut at :data:`MAX_RENDERED_CHARS`, remembering how much was left out."""
        self._hidden_chars = max(0, len(text) - MAX_RENDERED_CHARS)
        return text[:MAX_RENDERED_CHARS]

    def _label_content(self) -> Content:
        view = self.view
        badge = {"streaming": " · writing…", "interrupted": " · interrupted", "error": " · failed"}
        return Content(neutralize(view.label) + badge.get(view.status, ""))

    def _extras(self) -> list[Widget]:
        """Tools, truncation note, interruption note, error card and usage for the current view."""
        view = self.view
        widgets: list[Widget] = []
        if view.tools:
            lines = [
                Static(_plain(f"• {tool.name}  {tool.detail}".rstrip()), classes="tool-line", markup=False)
                for tool in view.tools
            ]
            widgets.append(
                Collapsible(*lines, title=tools_summary(view.tools), collapsed=True, classes="message-tools")
            )
        if self._hidden_chars:
            widgets.append(
                Static(f"… {self._hidden_chars:,} more characters not shown (the full text is saved)",
                       classes="message-truncated")
            )
        if view.status == "interrupted":
            widgets.append(Static("⚠ interrupted: the answer above is partial", classes="message-interrupted"))
        if view.error is not None:
            error = view.error
            card_children: list[Widget] = [
                Static(_plain(f"✖ {error.kind}: {error.message}"), classes="error-title", markup=False)
            ]
            if error.stderr_tail.strip():
                card_children.append(Static(_plain(error.stderr_tail.rstrip()), classes="error-stderr", markup=False))
            if error.retryable:
                card_children.append(Static("press r to retry", classes="error-hint"))
            widgets.append(Vertical(*card_children, classes="error-card"))
        if view.usage_text and view.status != "streaming":
            widgets.append(Static(_plain(view.usage_text), classes="message-usage", markup=False))
        return widgets

    async def _render_extras(self) -> None:
        """Rebuild tools, usage and error card from the current view."""
        for old in self.query_children(".message-extras"):
            await old.remove()
        widgets = self._extras()
        if widgets:
            await self.mount(Vertical(*widgets, classes="message-extras"))
        view = self.view
        self.set_class(view.error is not None, "-error")
        self.set_class(view.status == "interrupted", "-interrupted")
        self.set_class(view.status == "streaming", "-streaming")

    async def show_tools(self, tools: tuple[ToolLineView, ...]) -> None:
        """Show the tools used so far (while the answer is still streaming)."""
        if tools != self.view.tools:
            self.view = replace(self.view, tools=tools)
            await self._render_extras()
            self.refresh_bindings()

    async def append(self, text: str) -> None:
        """Append a chunk of a streaming answer (neutralised, split sequences handled).

        The text counts as shown at once (:attr:`text`); it reaches the screen within
        :data:`FLUSH_INTERVAL`, together with the other chunks that arrived meanwhile.
        """
        safe = self._neutralizer.feed(text)
        if not safe:
            return
        room = MAX_RENDERED_CHARS - len(self._shown)
        if len(safe) > room:
            # Enormous output: keep the screen responsive, render only the first part.
            first_cut = self._hidden_chars == 0
            self._hidden_chars += len(safe) - max(room, 0)
            safe = safe[: max(room, 0)]
            if first_cut:
                await self._render_extras()
            if not safe:
                return
        self._shown += safe
        self._pending.append(safe)
        if not self.is_attached:
            return
        clock = _StreamClock.of(self.app)
        if time.monotonic() - self._flushed_at >= FLUSH_INTERVAL and self not in clock.waiting:
            # The first chunk after a quiet spell shows at once; the rest of a burst waits for the tick.
            await self._flush()
        else:
            clock.schedule(self)

    async def _flush(self) -> None:
        """Write the collected chunks into the Markdown stream."""
        if not self._pending:
            return
        if self.is_attached:
            _StreamClock.of(self.app).forget(self)
        if not self.is_mounted:
            return
        text = "".join(self._pending)
        self._pending.clear()
        self._flushed_at = time.monotonic()
        if self._stream is None:
            self._stream = Markdown.get_stream(self.query_one(".message-body", Markdown))
        await self._stream.write(text)

    async def finish(self, view: MessageView) -> None:
        """Settle the message: final text, status, tools, usage and error card."""
        tail = self._neutralizer.flush()
        if tail:
            await self.append(tail)
        await self._flush()
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        final = self._capped(neutralize(view.content))
        body = self.query_one(".message-body", Markdown)
        if final != self._shown and (final or view.status == "done"):
            self._shown = final
            await body.update(final)
        elif body.source != self._shown:
            # Text that was collected but never written (e.g. the block was not mounted yet).
            await body.update(self._shown)
        self.view = view
        self.query_one(".message-label", Static).update(self._label_content())
        await self._render_extras()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "retry":
            return self.view.error is not None and self.view.error.retryable
        if action == "toggle_tools":
            return bool(self.view.tools)
        return True

    def action_toggle_tools(self) -> None:
        """Expand or collapse the tool lines."""
        for collapsible in self.query(Collapsible):
            collapsible.collapsed = not collapsible.collapsed

    def action_retry(self) -> None:
        """Ask for the failed turn to be run again."""
        if self.view.error is not None and self.view.error.retryable:
            self.post_message(self.RetryRequested(self.view.id))
