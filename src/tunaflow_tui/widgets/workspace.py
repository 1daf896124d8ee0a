"""Workspace: the main chat plus the branch pane, as a drawer over the chat or pinned 50:50 beside it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.events import DescendantFocus, Resize
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from tunaflow_tui.widgets.branch_pane import BranchPane

PaneMode = Literal["hidden", "drawer", "pinned"]
HIDDEN: PaneMode = "hidden"
DRAWER: PaneMode = "drawer"
PINNED: PaneMode = "pinned"

NARROW_WIDTH = 100
"""On terminals narrower than this a pinned pane takes the full width (switch with pane.switch).

It is the terminal's width that counts, not the workspace's: at 120 columns with the sidebar
shown, pinning still gives a 50:50 split."""

_MODE_CLASSES = ("-drawer", "-pinned", "-narrow", "-show-pane", "-show-main")

PANE = Binding.Group("Branch pane")


def _focus_inside(widget: Widget) -> None:
    """Focus `widget` or, if it cannot take focus, its first focusable descendant."""
    if widget.has_focus_within:
        return
    if widget.focusable:
        widget.focus()
        return
    for child in widget.query("*"):
        if child.focusable:
            child.focus()
            return


class Workspace(Container):
    """Holds the main chat (`main`) and the `BranchPane`.

    Modes: hidden; drawer (the pane overlays the right ~45% of the chat); pinned (a fixed 50:50
    split). On narrow workspaces a pinned pane fills the width and `pane.switch` flips between
    the pane and the main chat.
    """

    HELP = """
## Branch pane

- **F6** / **ctrl+o** show or hide the branch pane (drawer).
- **F7** / **ctrl+t** pin the pane as a 50:50 split, or unpin it.
- **F8** / **ctrl+l** switch between the main chat and the pane when the window is narrow.
- **F9** shows the next active branch in the pane.

The pane shows one branch at a time with its own composer: what you type there goes to the branch,
and main stays usable while the branch answers.
"""

    DEFAULT_CSS = """
    Workspace { layers: base pane; layout: horizontal; overflow: hidden hidden; height: 1fr; }
    Workspace > #main-slot { layer: base; width: 1fr; height: 1fr; }
    Workspace > BranchPane { layer: pane; display: none; height: 1fr; }
    /* docks are arranged per layer, so a docked pane on its own layer overlays the chat */
    Workspace.-drawer > BranchPane { display: block; dock: right; width: 45%; }
    Workspace.-pinned > BranchPane { display: block; layer: base; width: 1fr; }
    Workspace.-pinned.-narrow > BranchPane { width: 1fr; }
    Workspace.-pinned.-narrow.-show-main > BranchPane { display: none; }
    Workspace.-pinned.-narrow.-show-pane > #main-slot { display: none; }
    """

    # priority: the composer's text area binds f6 / f7 (select line / all) for itself
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f6,ctrl+o", "toggle_pane", "Toggle branch pane", id="pane.toggle", group=PANE, priority=True,
                tooltip="Show or hide the branch pane"),
        Binding("f7,ctrl+t", "pin_pane", "Pin branch pane", id="pane.pin", group=PANE, priority=True,
                tooltip="Pin the branch pane as a 50:50 split, or unpin it"),
        Binding("f8,ctrl+l", "switch_pane", "Switch chat/branch", id="pane.switch", group=PANE, priority=True,
                tooltip="With the pane pinned: switch between the main chat and the branch pane"),
        Binding("f9", "next_branch", "Next branch", id="pane.next", group=PANE, priority=True, show=False,
                tooltip="Show the next active branch in the pane"),
    ]

    class NextBranch(Message):
        """The user asked for the next active branch in the pane."""

    @dataclass
    class ModeChanged(Message):
        """The pane mode changed to hidden / drawer / pinned."""

        mode: str

    mode: reactive[PaneMode] = reactive[PaneMode](HIDDEN)
    narrow: reactive[bool] = reactive(False)
    showing_pane: reactive[bool] = reactive(True)
    """On narrow pinned layouts: True shows the pane, False the main chat."""

    def __init__(self, main: Widget, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.main = main

    def compose(self) -> ComposeResult:
        # Settle the classes before the children exist, so styling them once is enough.
        self.set_reactive(Workspace.narrow, self._terminal_is_narrow())
        self._apply_classes()
        with Container(id="main-slot"):
            yield self.main
        yield BranchPane(id="branch-pane")

    @property
    def pane(self) -> BranchPane:
        """The branch pane."""
        return self.query_one(BranchPane)

    def _terminal_is_narrow(self) -> bool:
        return self.app.size.width < NARROW_WIDTH

    def _apply_classes(self) -> None:
        """Set every mode class in one change: each class change restyles the whole subtree."""
        wanted = {
            "-drawer": self.mode == DRAWER,
            "-pinned": self.mode == PINNED,
            "-narrow": self.narrow,
            "-show-pane": self.showing_pane,
            "-show-main": not self.showing_pane,
        }
        if all(self.has_class(name) == on for name, on in wanted.items()):
            return
        keep = [name for name in self.classes if name not in _MODE_CLASSES]
        self.set_classes([*keep, *(name for name, on in wanted.items() if on)])

    def watch_mode(self, old: PaneMode, new: PaneMode) -> None:
        """Lay out the new mode; a pane that closes hands its focus back to the chat column."""
        self.set_reactive(Workspace.showing_pane, True)
        self._apply_classes()
        pane = self.query_children(BranchPane).first() if self.children else None
        if new == HIDDEN and pane is not None and pane.has_focus_within:
            _focus_inside(self.main)
        self._keep_focus_visible()
        if old != new:
            self.post_message(self.ModeChanged(new))
        self.refresh_bindings()

    def watch_narrow(self) -> None:
        self._apply_classes()
        self._keep_focus_visible()
        self.refresh_bindings()

    def watch_showing_pane(self) -> None:
        self._apply_classes()
        self._keep_focus_visible()

    def _keep_focus_visible(self) -> None:
        """In the narrow pinned layout only one side is shown: keep the focus on that side."""
        if self.mode == PINNED and self.narrow and self.is_mounted:
            self.call_after_refresh(_focus_inside, self.pane if self.showing_pane else self.main)

    def on_descendant_focus(self, event: DescendantFocus) -> None:
        """In the narrow pinned layout, show the side the focus went to (i, esc, a search hit, a dialog
        closing): typing into a composer that is not on the screen loses the user's words."""
        if self.mode != PINNED or not self.narrow:
            return
        in_pane = self.pane in event.widget.ancestors_with_self
        if in_pane != self.showing_pane:
            self.showing_pane = in_pane

    def on_resize(self, event: Resize) -> None:
        # The workspace resizes with the terminal (and when the sidebar comes and goes).
        self.narrow = self._terminal_is_narrow()

    def switch_blocked(self) -> str:
        """Why ``pane.switch`` cannot act now (empty when it can): it acts on a pinned pane only."""
        if self.mode == PINNED:
            return ""
        from tunaflow_tui.keyhints import key_for

        switch = key_for(self.app, Workspace, "pane.switch", words=True)
        pin = key_for(self.app, Workspace, "pane.pin", words=True)
        return (f"{switch} switches between the chat and the branch pane once the pane is pinned; "
                f"press {pin} to pin it.")

    def action_next_branch(self) -> None:
        """Ask for the next active branch in the pane (the app's session knows the branches)."""
        self.post_message(self.NextBranch())

    def action_toggle_pane(self) -> None:
        """Open the branch pane as a drawer, or hide it."""
        self.mode = HIDDEN if self.mode != HIDDEN else DRAWER

    def action_pin_pane(self) -> None:
        """Pin the branch pane beside the chat (50:50), or back to a drawer."""
        self.mode = DRAWER if self.mode == PINNED else PINNED

    def action_switch_pane(self) -> None:
        """Flip between the chat and the pane on a narrow pinned layout, move the focus across on a wide
        one; elsewhere say why nothing happens."""
        reason = self.switch_blocked()
        if reason:
            self.app.notify(reason)
            return
        if self.narrow:
            self.showing_pane = not self.showing_pane
            return
        # side by side: both show, so the keys (and the cursor) move to the other side
        pane = self.pane
        pane_side = pane.has_focus_within
        if not pane_side and not any(child.focusable for child in pane.query("*")):
            self.app.notify("The branch pane is empty: pick a branch in the sidebar, or fork one from a message.")
            return
        self.set_reactive(Workspace.showing_pane, not pane_side)
        _focus_inside(self.main if pane_side else pane)
