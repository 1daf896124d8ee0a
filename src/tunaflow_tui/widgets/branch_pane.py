"""BranchPane: the right-hand pane that shows one branch (header + a body widget supplied by the owner)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from tunaflow_tui.viewmodels.glyphs import BRANCH

if TYPE_CHECKING:
    from tunaflow_tui.viewmodels.plan_rows import BranchView

EMPTY_TEXT = ("No branch open. Select a message in the chat (escape, then up/down) and press {branch} to fork "
              "a branch from it; branches are listed in the sidebar: pick one.")


def empty_text(app: App[Any]) -> str:
    """What the empty pane says, with the branch key as the keymap has it."""
    from tunaflow_tui.keyhints import key_for
    from tunaflow_tui.widgets.message_block import MessageBlock

    return EMPTY_TEXT.format(branch=key_for(app, MessageBlock, "message.branch", "b", words=True))


class EmptyPaneNote(Static):
    """What the empty pane says. Where the pane is all there is on screen (pinned on a narrow terminal) it takes
    the focus, so the footer names the pane's keys (unpin, back to the chat) as it does beside the chat."""

    def allow_focus(self) -> bool:
        pane = self.parent
        layout = pane.parent if pane is not None else None
        return layout is not None and all(layout.has_class(name) for name in ("-pinned", "-narrow", "-show-pane"))


class BranchHeader(Static):
    """One-line header: label, what the branch is (kind · mode, or a plan's branch), status."""

    DEFAULT_CSS = """
    BranchHeader {
        height: auto; max-height: 3; background: $panel; color: $text; padding: 0 1; text-style: bold;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    _rows = 0

    def show(self, view: BranchView | None) -> None:
        """Show `view` (None: no branch).

        The header's lines never wrap, so a new text with as many lines as the last one is redrawn
        in place: the header follows every change of the branch (an agent starting or ending in it),
        and a layout redoes the whole screen.
        """
        from textual.content import Content

        if view is None:
            content = Content("Branch")
        elif view.kind != "general" or view.mode != "chat":  # a plan's branch: one line, the workflow's words
            content = Content.assemble((f"{BRANCH} ", "bold"), (view.label, "bold"), ("  ", ""),
                                       (view.details, "not bold dim"))
        else:  # a user's branch: the label, then how it knows its parent, its engine and git branch
            content = Content.assemble(
                (f"{BRANCH} ", "bold"),
                ("● " if view.live else "", "bold green"),
                (view.label, "bold"),
                ("\n", ""),
                (view.details, "not bold dim"),
            )
        rows = content.plain.count("\n") + 1
        self.update(content, layout=rows != self._rows)
        self._rows = rows

    def show_title(self, title: str) -> None:
        """One line of its own (a live terminal's)."""
        from textual.content import Content

        self.update(Content.assemble(("⌨ ", "bold"), (title, "bold")), layout=self._rows != 1)
        self._rows = 1


class BranchPane(Vertical):
    """The branch pane. `show(view, body)` replaces what it shows; `view` is None when empty."""

    DEFAULT_CSS = """
    BranchPane {
        background: $surface; border-left: tall $primary;
        border-top: solid $panel-lighten-2; border-title-color: $text-muted; border-title-align: left;
    }
    BranchPane:focus-within {
        border-left: tall $accent; border-top: heavy $accent; border-title-color: $accent; border-title-style: bold;
    }
    BranchPane > #branch-body { height: 1fr; }
    BranchPane > #branch-empty { height: 1fr; color: $text-muted; padding: 1 2; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "Branch"
        self.view: BranchView | None = None
        self.body: Widget | None = None

    def compose(self) -> ComposeResult:
        header = BranchHeader(id="branch-header")
        header.show(None)
        yield header
        yield EmptyPaneNote("", id="branch-empty", markup=False)

    def on_mount(self) -> None:
        # after the first frame: naming the key loads the message widgets, which the first frame does without
        self.call_after_refresh(self._name_keys)

    def _name_keys(self) -> None:
        for empty in self.query("#branch-empty").results(EmptyPaneNote):
            empty.update(empty_text(self.app))

    async def show(self, view: BranchView, body: Widget) -> None:
        """Show a branch: its header, and `body` (for example a chat view of its shadow conversation)."""
        self.view = view
        self.query_one(BranchHeader).show(view)
        await self._put_body(body)

    async def show_live(self, title: str, body: Widget) -> None:
        """Show a live terminal (a native CLI) under a one-line ``title``, instead of a branch."""
        self.view = None
        self.query_one(BranchHeader).show_title(title)
        await self._put_body(body)

    async def _put_body(self, body: Widget) -> None:
        for old in self.query("#branch-empty, #branch-body"):
            await old.remove()
        body.id = "branch-body"
        self.body = body
        await self.mount(body)

    def update_view(self, view: BranchView) -> None:
        """Refresh the header (for example after a status change) without replacing the body."""
        if self.view is not None and view.id == self.view.id:
            self.view = view
            self.query_one(BranchHeader).show(view)

    async def clear(self) -> None:
        """Show nothing."""
        self.view = None
        self.body = None
        self.query_one(BranchHeader).show(None)
        for old in self.query("#branch-body"):
            await old.remove()
        if not self.query("#branch-empty"):
            await self.mount(EmptyPaneNote(empty_text(self.app), id="branch-empty", markup=False))
