"""Sidebar: conversations, branches, archive and plans in one keyboard-navigable tree.

Roundtables get their section once the project has one (started in the app or with ``tunaflow
roundtable``); picking one shows it in the branch pane. Native CLIs running in a terminal pane are
listed on top, under "Live sessions", while they run (:meth:`Sidebar.show_live_sessions`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from tunaflow_tui.core.workflow.phases import Phase
from tunaflow_tui.viewmodels import glyphs
from tunaflow_tui.viewmodels.plan_rows import SidebarItem, SidebarSections

SECTIONS: tuple[tuple[str, str], ...] = (
    ("conversations", "Conversations"),
    ("branches", "Branches"),
    ("roundtables", "Roundtables"),
    ("archive", "Archive"),
    ("plans", "Plans"),
)

LIVE_SECTION = "live"
"""The section of running native CLI sessions (its items have kind ``native``, id the conversation)."""

OPTIONAL_SECTIONS = frozenset({"roundtables"})
"""Sections shown only when they have items ("Start roundtable" in the palette makes the first one)."""

# Phases that wait for the user are drawn in the warning colour, finished ones dimmed.
PHASE_STYLES: dict[str, str] = {
    Phase.APPROVAL: "bold yellow",
    Phase.REVIEW: "bold cyan",
    Phase.DEV: "bold green",
    Phase.REWORK: "bold magenta",
    Phase.ESCALATED: "bold red",
    Phase.DONE: "dim",
    Phase.ABANDONED: "dim strike",
    Phase.HELD: "yellow",
    "queued": "bold blue",
}

NodeData = SidebarItem | str | None


def _label(item: SidebarItem) -> Text:
    # the badge goes first so a narrow sidebar never cuts it off
    text = Text(no_wrap=True, overflow="ellipsis")
    if item.badge:
        text.append(f"[{item.badge}]", style=PHASE_STYLES.get(item.badge, "bold"))
        text.append(" ")
    if item.live:
        text.append(f"{glyphs.WORKING} ", style="bold green")
    elif item.waiting:
        text.append(f"{glyphs.WAITING} ", style="bold yellow")
    text.append(item.label)
    if item.detail:
        text.append(f"  {item.detail}", style="dim")
    return text


def _key(data: NodeData) -> tuple[str, str] | None:
    if isinstance(data, SidebarItem):
        return (data.kind, str(data.id))
    if isinstance(data, str):
        return ("section", data)
    return None


def _flat(sections: SidebarSections, live: tuple[SidebarItem, ...] = ()) -> list[NodeData]:
    """What each node of the tree holds, in the order the tree lists its nodes (sections open).

    ``live``: the native sessions listed on top (their section only while there is one).
    """
    flat: list[NodeData] = []

    def walk(item: SidebarItem) -> None:
        flat.append(item)
        for child in item.children:
            walk(child)

    if live:
        flat.append(LIVE_SECTION)
        for item in live:
            walk(item)
    for attr, _title in SECTIONS:
        items: tuple[SidebarItem, ...] = getattr(sections, attr)
        if attr in OPTIONAL_SECTIONS and not items:
            continue
        flat.append(attr)
        if not items:
            flat.append(None)
        for item in items:
            walk(item)
    return flat


def _add(parent: TreeNode[NodeData], item: SidebarItem) -> None:
    """``item`` under ``parent``, with the items nested under it (expanded: the tree shows its depth)."""
    if not item.children:
        parent.add_leaf(_label(item), data=item)
        return
    node = parent.add(_label(item), data=item, expand=True)
    for child in item.children:
        _add(node, child)


class SidebarTree(Tree[NodeData]):
    """The tree inside the sidebar: every row is one line, cut with an ellipsis at the sidebar's width."""

    DEFAULT_CSS = """
    SidebarTree { background: $panel; padding: 0 1; overflow-x: hidden; }
    """

    def render_label(self, node: TreeNode[NodeData], base_style: Style, style: Style) -> Text:
        """The node's label, cut with an ellipsis where it would run past the sidebar's edge."""
        label = super().render_label(node, base_style, style)
        room = self.scrollable_content_region.width - self._indent(node)
        if room > 0 and label.cell_len > room:
            label.truncate(room, overflow="ellipsis")
        return label

    def _indent(self, node: TreeNode[NodeData]) -> int:
        """Columns taken by the guides to the left of `node`'s label."""
        depth = 0
        parent = node.parent
        while parent is not None:
            depth += 1
            parent = parent.parent
        if not self.show_root:
            depth -= 1
        return max(depth, 0) * self.guide_depth


class Sidebar(Vertical):
    """Sections of items; Enter on an item posts `Sidebar.Selected(kind, id)`."""

    DEFAULT_CSS = """
    Sidebar { width: 32; height: 1fr; background: $panel; border-right: tall $panel-lighten-2; }
    Sidebar > SidebarTree { height: 1fr; }
    """

    @dataclass
    class Selected(Message):
        """An item was chosen: kind is conversation / branch / roundtable / archive / plan / native (from the item)."""

        kind: str
        id: int | str

    def __init__(self, sections: SidebarSections, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "Project"
        self.sections = sections
        self.live_sessions: tuple[SidebarItem, ...] = ()

    def compose(self) -> ComposeResult:
        tree = SidebarTree("tunaflow", id="sidebar-tree")
        tree.show_root = False
        tree.auto_expand = False
        yield tree

    @property
    def sidebar_tree(self) -> SidebarTree:
        """The tree widget."""
        return self.query_one(SidebarTree)

    def on_mount(self) -> None:
        if not self.query(SidebarTree):  # the app quit while its window was being built: nothing to fill
            return
        self._build(self.sections)

    def _build(self, sections: SidebarSections) -> None:
        tree = self.sidebar_tree
        tree.clear()
        if self.live_sessions:
            heading = Text("Live sessions", style="bold")
            heading.append(f" {len(self.live_sessions)}", style="dim")
            live: TreeNode[NodeData] = tree.root.add(heading, data=LIVE_SECTION, expand=True)
            for item in self.live_sessions:
                _add(live, item)
        for attr, title in SECTIONS:
            items: tuple[SidebarItem, ...] = getattr(sections, attr)
            if attr in OPTIONAL_SECTIONS and not items:
                continue
            heading = Text(title, style="bold")
            if items:
                heading.append(f" {len(items)}", style="dim")
            section: TreeNode[NodeData] = tree.root.add(heading, data=attr, expand=True)
            if not items:
                section.add_leaf(Text("none yet", style="dim italic"), data=None)
            for item in items:
                _add(section, item)
        if tree.cursor_line < 0:
            tree.cursor_line = 0

    def show_live_sessions(self, items: tuple[SidebarItem, ...]) -> None:
        """List the native CLIs running now on top (none: the section goes), the cursor kept on its item."""
        if items != self.live_sessions:
            self.live_sessions = items
            if self.query(SidebarTree):  # else the tree is built with them when mounted
                self.update(self.sections, force=True)

    def update(self, sections: SidebarSections, *, force: bool = False) -> None:
        """Replace the content, keeping the cursor on the same item when it still exists.

        The same content leaves the tree as it is (sections the user folded stay folded): a rebuild
        lays out the whole screen, and the sidebar is refreshed on every change of a plan or branch.
        """
        if sections == self.sections and self.sidebar_tree.root.children and not force:
            return
        if self._relabel(sections):
            return
        tree = self.sidebar_tree
        current = tree.cursor_node
        wanted = _key(current.data) if current is not None else None
        line = tree.cursor_line
        self.sections = sections
        self._build(sections)
        target = None
        if wanted is not None:
            target = next((node for node in self._all_nodes() if _key(node.data) == wanted), None)
        # reading last_line lays out the rebuilt tree so that node line numbers are known
        last_line = tree.last_line
        if target is not None:
            tree.move_cursor(target)
        else:
            tree.cursor_line = min(max(line, 0), max(last_line, 0))

    def _relabel(self, sections: SidebarSections) -> bool:
        """Only labels changed (a plan's live mark or phase, a branch's name): change those rows in place.

        The tree is not rebuilt, so nothing else is drawn again and folded sections stay folded; False
        when items came, went or moved (the tree must be built anew).
        """
        nodes = self._all_nodes()
        wanted = _flat(sections, self.live_sessions)
        if not nodes or [_key(node.data) for node in nodes] != [_key(data) for data in wanted]:
            return False
        for node, data in zip(nodes, wanted, strict=True):
            if isinstance(data, SidebarItem) and node.data != data:
                node.data = data
                node.set_label(_label(data))
        self.sections = sections
        return True

    def _all_nodes(self) -> list[TreeNode[NodeData]]:
        nodes: list[TreeNode[NodeData]] = []
        stack = list(self.sidebar_tree.root.children)
        while stack:
            node = stack.pop(0)
            nodes.append(node)
            stack[:0] = list(node.children)
        return nodes

    def on_tree_node_selected(self, event: Tree.NodeSelected[NodeData]) -> None:
        event.stop()
        data = event.node.data
        if isinstance(data, SidebarItem):
            self.post_message(self.Selected(data.kind, data.id))
        elif isinstance(data, str):
            event.node.toggle()
