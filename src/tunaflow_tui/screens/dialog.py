"""DialogScreen: the base of tunaflow's modal dialogs — toasts never cover a dialog's buttons.

Textual stacks toasts in the bottom-right corner of the screen they appear on.  A dialog centred
on an 80×24 terminal has its buttons in its bottom rows, which reach into that corner, so a toast
or two would hide the very buttons the user has to press.  While a dialog is open its toasts stack
from the top-right corner instead, over the dialog's title and text (which the user has read by
then), and they may only take the rows above the dialog's topmost button: the newest toasts that
fit there stay in view, older ones are hidden rather than reach the buttons.  The main screen keeps the usual
bottom-right corner.
"""

from __future__ import annotations

from typing import Any, TypeVar

from textual.screen import ModalScreen, Screen
from textual.widgets import Button
from textual.widgets._toast import ToastRack

ResultT = TypeVar("ResultT")


class DialogScreen(ModalScreen[ResultT]):
    """A modal dialog whose toasts stay above its buttons."""

    DEFAULT_CSS = """
    DialogScreen > ToastRack { dock: top; align: right top; margin: 0; }
    """

    def on_mount(self) -> None:
        self.screen_layout_refresh_signal.subscribe(self, self._keep_toasts_above_buttons)

    def toast_rows(self) -> int:
        """How many rows at the top of the screen toasts may take: those above the topmost button."""
        tops = [button.region.y for button in self.query(Button) if button.display and button.region]
        return min(tops) if tops else self.size.height

    def _keep_toasts_above_buttons(self, _screen: Screen[Any] | None = None) -> None:
        rows = self.toast_rows()
        for rack in self.query_children(ToastRack):
            if rack.styles.max_height is None or rack.styles.max_height.value != rows:
                rack.styles.max_height = rows  # a single toast taller than the room is cut, not laid over
            room = rows
            for holder in reversed([child for child in rack.children if child.display]):
                # the holder is invisible (and has no size); its toast is what shows, below its margin
                height = sum(toast.outer_size.height + toast.styles.margin.top for toast in holder.children)
                if height > room:
                    holder.display = False
                else:
                    room -= height
