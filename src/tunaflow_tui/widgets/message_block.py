"""One chat message: who spoke, the Markdown body, tools used, usage, and an error card.

Everything shown is agent output and therefore untrusted: every string goes through
:func:`~tunaflow_tui.core.terminal_text.neutralize` and is displayed without markup parsing.

The Markdown is drawn by one :class:`~tunaflow_tui.widgets.markdown_stream.MarkdownBody` and, while
an answer streams, the part still being written by a
:class:`~tunaflow_tui.widgets.markdown_stream.StreamTail` (see that module for why).  A message
therefore holds a small, fixed number of widgets however long it gets.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import ClassVar, cast

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from tunaflow_tui.core.terminal_text import StreamNeutralizer, neutralize
from tunaflow_tui.core.turns import ToolLine
from tunaflow_tui.keyhints import key_for
from tunaflow_tui.viewmodels.chat import MessageView
from tunaflow_tui.widgets.decision.records import RecordCard, record_card
from tunaflow_tui.widgets.markdown_stream import (
    SEAL_INTERVAL,
    TAIL_MAX_CHARS,
    MarkdownBody,
    StreamTail,
    find_seal,
    keep_line_breaks,
)
from tunaflow_tui.widgets.stream_clock import FLUSH_INTERVAL, StreamClock


def _tool_lines(tools: tuple[ToolLine, ...]) -> Content:
    """The tool lines of a reply, one per tool (plain text: no markup, no links)."""
    return _plain("\n".join(f"• {tool.name}  {tool.detail}".rstrip() for tool in tools))


def _plain(text: str) -> Content:
    """Neutralised text as Content, so square brackets are never read as markup."""
    return Content(neutralize(text))


def tools_summary(tools: tuple[ToolLine, ...]) -> str:
    """``1 tool used`` / ``3 tools used``."""
    return f"{len(tools)} tool{'s' if len(tools) != 1 else ''} used"


MAX_RENDERED_CHARS = 40_000
"""Beyond this many characters a message's text is saved but not rendered (a note says so)."""

class MessageBlock(Vertical, can_focus=True):
    """A focusable message in the chat.

    Its children: the label line, a :class:`MarkdownBody`, while streaming a :class:`StreamTail` (the
    blocks still being written, redrawn at most :data:`FLUSH_INTERVAL` apart, growing at most
    :data:`GROW_INTERVAL` apart), and
    when there are any, one container of extras (tools, notes, error card, usage).

    Args:
        view: The message to show.  A view with status ``streaming`` starts an empty stream
            that :meth:`append` writes to; :meth:`finish` settles it.
    """

    HELP = """\
## Message
- **t** shows or hides the tools the agent used.
- **r** retries a failed turn (when the error card offers it).
- **enter** or **space** unfolds a record (a decision, a merge) to its details, and folds it again;
  a click on it does too.
- **b** forks a branch from the message: it is the branch's checkpoint (a right click does the same).
- **o** on an adopted branch's card opens that branch (read-only, under Archive) in the branch pane.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "toggle_tools", "Tools", id="message.tools"),
        Binding("r", "retry", "Retry", id="message.retry"),
        Binding("enter,space", "toggle_record", "Details", id="message.record"),
        Binding("b", "branch", "Branch", id="message.branch",
                tooltip="Fork a branch from this message (it becomes the branch's checkpoint)"),
        Binding("o", "open_record", "Open branch", id="message.open",
                tooltip="Open the branch an adopt record points to"),
    ]

    @dataclass
    class RetryRequested(Message):
        """The user asked to run the failed turn that produced this message again."""

        message_id: int

    @dataclass
    class BranchRequested(Message):
        """The user asked to fork a branch with this message as its checkpoint."""

        block: MessageBlock

        @property
        def message_id(self) -> int:
            """The checkpoint message."""
            return self.block.message_id

    def __init__(self, view: MessageView, *, id: str | None = None) -> None:
        record = record_card(view.meta) if view.status != "streaming" else None
        super().__init__(id=id, classes=" ".join(self._status_classes(view) + (["-record"] if record else [])))
        self.view = view
        self.record: RecordCard | None = record
        """The card of a record tunaflow wrote (a decision, a merge); None for an ordinary message."""
        self._shown = ""
        self._live = ""
        """Streamed text not yet sealed into the body (drawn by the tail)."""
        self._live_fence: str | None = None
        """The marker of a code block cut by the last seal, reopened at the start of the tail."""
        self._cut_code = False
        self._sealed_at = 0.0
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
    def shows_all(self) -> bool:
        """True when every chunk appended so far is on screen (none waits for a tick or a growth beat)."""
        if self._pending:
            return False
        tails = self.query_children(StreamTail) if self.is_mounted else None
        return not (tails and tails.first().out_of_step)

    @property
    def is_streaming(self) -> bool:
        """True until :meth:`finish` is called on a streaming message."""
        return self.view.status == "streaming"

    def on_mount(self) -> None:
        """Chunks that came while the block was being built are drawn on the next tick."""
        if self._pending:
            StreamClock.of(self.app).schedule(self)

    def compose(self) -> ComposeResult:
        if self.record is not None:  # a record is its card: one line until unfolded
            self.record.hint_key = key_for(self.app, type(self), "message.record", "enter", words=True)
            if hasattr(self.record, "open_key"):
                self.record.open_key = key_for(self.app, type(self), "message.open", "o", words=True)
            yield self.record
            return
        yield Static(self._label_content(), classes="message-label", markup=False)
        if self.is_streaming:  # what was appended before it was built is drawn in its tail once mounted
            self._shown = "".join(self._pending)
            body = ""
        else:
            self._shown = self._capped(neutralize(self.view.content))
            body = keep_line_breaks(self._shown) if self.view.role == "user" else self._shown
        yield MarkdownBody(body, classes="message-body")
        if self.is_streaming:
            yield StreamTail(classes="message-tail")
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
            # All tool lines in one widget: a long tool list costs no more than a short one.
            widgets.append(
                Collapsible(Static(_tool_lines(view.tools), classes="tool-line", markup=False),
                            title=tools_summary(view.tools), collapsed=True, classes="message-tools")
            )
        if self._hidden_chars:
            widgets.append(
                Static(f"… {self._hidden_chars:,} more characters not shown (the full text is saved)",
                       classes="message-truncated")
            )
        if view.status == "interrupted":
            widgets.append(Static(f"⚠ {view.stopped or 'interrupted'}: the answer above is partial",
                                  classes="message-interrupted", markup=False))
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

    async def show_tools(self, tools: tuple[ToolLine, ...]) -> None:
        """Show the tools used so far (while the answer is still streaming).

        A list already shown is written over in place: an agent at work uses a tool every few
        seconds, and building the extras again each time mounted a new fold of widgets.
        """
        if tools == self.view.tools:
            return
        shown = self.view.tools
        self.view = replace(self.view, tools=tools)
        folds = list(self.query(".message-tools").results(Collapsible)) if shown and tools else []
        if folds:
            folds[0].title = tools_summary(tools)
            folds[0].query_one(".tool-line", Static).update(_tool_lines(tools))
            return
        await self._render_extras()
        self.refresh_bindings()

    async def append(self, text: str) -> None:
        """Append a chunk of a streaming answer (neutralised, split sequences handled).

        The text counts as shown at once (:attr:`text`); it reaches the screen within
        :data:`FLUSH_INTERVAL` (new lines within :data:`GROW_INTERVAL`), together with the other
        chunks that arrived meanwhile.
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
        clock = StreamClock.of(self.app)
        if time.monotonic() - self._flushed_at >= FLUSH_INTERVAL and self not in clock.waiting:
            # The first chunk after a quiet spell shows at once; the rest of a burst waits for the tick.
            await self.flush_pending(grow=clock.may_grow(FLUSH_INTERVAL))
        else:
            clock.schedule(self)

    async def flush_pending(self, *, grow: bool) -> None:
        """Draw the collected chunks: the tail is redrawn; on a growth beat (``grow``) it may take
        more rows, and finished blocks are sealed into the body."""
        tails = self.query_children(StreamTail) if self.is_mounted else None
        tail = tails.first() if tails else None
        if not self._pending and (tail is None or not tail.out_of_step):
            return
        if self.is_attached:
            StreamClock.of(self.app).forget(self)
        if not self.is_mounted:
            if self.is_attached:  # in the chat but not built yet: its text shows on a later tick
                StreamClock.of(self.app).schedule(self)
            return
        self._live += "".join(self._pending)
        self._pending.clear()
        self._flushed_at = now = time.monotonic()
        too_long = len(self._live) >= TAIL_MAX_CHARS
        if grow and (too_long or now - self._sealed_at >= SEAL_INTERVAL):
            # Sealing moves rows from the tail into the body: a layout, so only on a growth beat.
            self._seal(find_seal(self._live, self._live_fence, in_code=too_long))
            self._sealed_at = now
        if tail is not None:
            opener = f"{self._live_fence}\n" if self._live_fence else ""
            tail.show(opener + self._live, grow=grow)
            if tail.out_of_step:  # lines wait for the next growth beat, even if no more text comes
                StreamClock.of(self.app).schedule(self)

    def _seal(self, cut: tuple[int, str | None]) -> None:
        """Move the tail's text up to ``cut`` into the body."""
        position, fence = cut
        bodies = self.query_children(".message-body")
        if not position or not bodies:  # no body: the block is being taken down (the app quits)
            return
        text = self._live[:position]
        markdown = (f"{self._live_fence}\n" if self._live_fence else "") + text
        if fence is not None:
            markdown += f"{fence}\n"
            self._cut_code = True
        cast("MarkdownBody", bodies.first()).seal(markdown, text)
        self._live = self._live[position:]
        self._live_fence = fence

    async def show_activity(self, text: str) -> None:
        """Say what the streaming answer is writing now (``drafting a plan… (3 subtasks so far)``);
        empty: say nothing. The line goes when the answer finishes."""
        lines = self.query_children(".message-activity") if self.is_mounted else None
        if lines:
            line = lines.first(Static)
            line.update(_plain(text))
            line.display = bool(text)
        elif text and self.is_mounted:
            tails = self.query_children(StreamTail)
            await self.mount(Static(_plain(text), classes="message-activity", markup=False),
                             after=tails.first() if tails else self.query_one(".message-body"))

    async def finish(self, view: MessageView) -> None:
        """Settle the message: final text, status, tools, usage and error card."""
        if self.record is not None:  # a record is written whole: nothing streams into it
            return
        tail = self._neutralizer.flush()
        if tail:
            await self.append(tail)
        await self.flush_pending(grow=True)
        final = self._capped(neutralize(view.content))
        body = self.query_one(".message-body", MarkdownBody)
        if final != self._shown and (final or view.status == "done"):
            self._shown = final
        if self._cut_code or body.source + self._live != self._shown:
            # A different final text, a code block drawn in parts, or text never drawn: draw it anew.
            body.update(self._shown)
        elif self._live:
            body.seal(self._live)  # the rest of the stream: the blocks before it stay as drawn
        self._live, self._live_fence, self._cut_code = "", None, False
        await self.query_children(".message-tail").remove()
        await self.query_children(".message-activity").remove()
        self.view = view
        self.query_one(".message-label", Static).update(self._label_content())
        await self._render_extras()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Retry only a retryable failed turn; toggle tools only when there are tool lines."""
        if action == "retry":
            return self.view.error is not None and self.view.error.retryable
        if action == "toggle_tools":
            return bool(self.view.tools)
        if action == "toggle_record":
            return self.record is not None
        if action == "branch":
            return not self.is_streaming
        if action == "open_record":
            return isinstance(getattr(self.record, "branch_id", None), int)
        return True

    def action_toggle_record(self) -> None:
        """Unfold a record to its details, or fold it again."""
        if self.record is not None:
            self.record.toggle()

    def action_open_record(self) -> None:
        """Open what a record points to (an adopted branch)."""
        opener = getattr(self.record, "open", None)
        if callable(opener):
            opener()

    def action_branch(self) -> None:
        """Ask for a branch forked from this message."""
        if not self.is_streaming:
            self.post_message(self.BranchRequested(self))

    def on_click(self, event: events.Click) -> None:
        """A right click on a message forks a branch from it (the mouse's way to the same key)."""
        if event.button == 3:
            event.stop()
            self.focus()
            self.action_branch()

    def action_toggle_tools(self) -> None:
        """Expand or collapse the tool lines."""
        for collapsible in self.query(Collapsible):
            collapsible.collapsed = not collapsible.collapsed

    def action_retry(self) -> None:
        """Ask for the failed turn to be run again."""
        if self.view.error is not None and self.view.error.retryable:
            self.post_message(self.RetryRequested(self.view.id))
