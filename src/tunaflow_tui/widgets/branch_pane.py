"""BranchPane: the right-hand pane that shows one branch (header + a body widget supplied by the owner)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

if TYPE_CHECKING:
    from tunaflow_tui.viewmodels.plans import BranchView

EMPTY_TEXT = "No branch open. An approved plan's implementation and review branches are listed in the sidebar: pick one."


class BranchHeader(Static):
    """One-line header: label, what the branch is (kind · mode, or a plan's branch), status."""

    DEFAULT_CSS = """
    BranchHeader {
        height: 1; background: $panel; color: $text; padding: 0 1; text-style: bold;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def show(self, view: BranchView | None) -> None:
        """Show `view` (None: no branch)."""
        if view is None:
            self.update("Branch")
            return
        from textual.content import Content

        self.update(
            Content.assemble(
                ("⎇ ", "bold"),
                (view.label, "bold"),
                ("  ", ""),
                (f"{view.description} · {view.status}", "not bold dim"),
            )
        )


class BranchPane(Vertical):
    """The branch pane. `show(view, body)` replaces what it shows; `view` is None when empty."""

    DEFAULT_CSS = """
    BranchPane { background: $surface; border-left: tall $primary; }
    BranchPane:focus-within { border-left: tall $accent; }
    BranchPane > #branch-body { height: 1fr; }
    BranchPane > #branch-empty { height: 1fr; color: $text-muted; padding: 1 2; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.view: BranchView | None = None
        self.body: Widget | None = None

    def compose(self) -> ComposeResult:
        header = BranchHeader(id="branch-header")
        header.show(None)
        yield header
        yield Static(EMPTY_TEXT, id="branch-empty")

    async def show(self, view: BranchView, body: Widget) -> None:
        """Show a branch: its header, and `body` (for example a chat view of its shadow conversation)."""
        self.view = view
        self.query_one(BranchHeader).show(view)
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
            await self.mount(Static(EMPTY_TEXT, id="branch-empty"))
