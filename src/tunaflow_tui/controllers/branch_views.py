"""Branches as the pane header and the sidebar tree show them: plain views built from branch records.

The tree is built the same way for every kind of branch: a branch forked from another branch of the
same section is nested under it, at any depth; one whose parent is elsewhere (in the Archive, or a
roundtable's) starts a row of its own. A branch an agent is writing in carries the live mark.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.records import BranchRecord
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.viewmodels.plan_rows import BranchView, SidebarItem

CONTEXT_WORDS = {
    "native_fork": "native fork (continues the engine's own session)",
    "inheritance": "inherited (the checkpoint and the turns before it, in the pack)",
}
"""How a branch knows its parent, in the words the pane shows."""


def _line(text: str) -> str:
    return " ".join(neutralize(text).split())


def view_of(branch: BranchRecord, *, live: bool = False, default_engine: str = "") -> BranchView:
    """The pane header's view of ``branch``."""
    return BranchView(
        branch.id, _line(branch.label), branch.kind, branch.mode, branch.status,
        context=CONTEXT_WORDS.get(branch.context_source or "", ""),
        git_branch=_line(branch.git_branch or ""),
        engine=_line(branch.engine or default_engine),
        live=live,
    )


def branch_view(store: Store, branch_id: int, *, live: bool = False, default_engine: str = "") -> BranchView | None:
    """The pane header's view of a branch, or None when it no longer exists."""
    branch = store.get_branch(branch_id)
    return None if branch is None else view_of(branch, live=live, default_engine=default_engine)


def tree_items(branches: Iterable[BranchRecord], badge: Callable[[BranchRecord], str],
               live: Collection[int] = ()) -> tuple[SidebarItem, ...]:
    """``branches`` as sidebar rows, each nested under its parent branch when that is among them."""
    chosen = list(branches)
    ids = {branch.id for branch in chosen}
    children: dict[int | None, list[BranchRecord]] = {}
    for branch in chosen:
        parent = branch.parent_branch_id if branch.parent_branch_id in ids else None
        children.setdefault(parent, []).append(branch)

    def item(branch: BranchRecord) -> SidebarItem:
        detail = _line(branch.git_branch or "") if branch.kind == "general" else ""
        return SidebarItem("branch", branch.id, _line(branch.label), badge(branch), detail=detail,
                           live=branch.id in live,
                           children=tuple(item(child) for child in children.get(branch.id, ())))

    return tuple(item(branch) for branch in children.get(None, ()))


def open_order(store: Store) -> tuple[int, ...]:
    """The active branches in the order the sidebar lists them (the pane's next-branch key follows it)."""
    active = [b for b in store.list_branches(status="active")]
    order: list[int] = []

    def walk(items: tuple[SidebarItem, ...]) -> None:
        for entry in items:
            if isinstance(entry.id, int):
                order.append(entry.id)
            walk(entry.children)

    walk(tree_items(active, lambda _b: ""))
    return tuple(order)
