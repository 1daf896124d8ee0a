"""DialogScreen: the base of tunaflow's modal dialogs — one frame, their own footer, toasts above their buttons.

Every dialog looks the same: a rounded frame with a bold title (red for an act that cannot be
undone, yellow for a question that waits on the user), text that wraps inside the frame, a muted
label over every field, a problem line that stays empty until the user has typed or pressed
something, buttons on the right. A dialog fits an 80×24 terminal whatever its content (the frame
is at most the screen's height, minus the footer), and the footer at the bottom is the dialog's
own: its keys and quit, never the keys of the card under it.

Textual stacks toasts in the bottom-right corner of the screen they appear on.  A dialog centred
on an 80×24 terminal has its buttons in its bottom rows, which reach into that corner, so a toast
or two would hide the very buttons the user has to press.  While a dialog is open its toasts stack
from the top-right corner instead, over the dialog's title and text (which the user has read by
then), and they may only take the rows above the dialog's topmost button: the newest toasts that
fit there stay in view, older ones are hidden rather than reach the buttons.  The main screen keeps the usual
bottom-right corner.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen
from textual.widgets import Button

from tunaflow_tui.textual_compat import toast_racks
from tunaflow_tui.widgets.key_footer import KeyFooter

ResultT = TypeVar("ResultT")

DIALOG_FRAME = "dialog"
"""The id of a dialog's frame: the one container a dialog composes, styled here for every dialog."""


class DialogScreen(ModalScreen[ResultT]):
    """A modal dialog in the one dialog style, with its own footer and its toasts above its buttons.

    A subclass composes one container with ``id="dialog"`` (see :data:`DIALOG_FRAME`), gives it a
    ``border_title``, and uses the classes ``dialog-text`` (wrapped text), ``field-label`` (the
    label over a field), ``dialog-problem`` (what is wrong, once the user acted) and
    ``dialog-buttons`` (the row of buttons).  The classes ``-danger`` and ``-question`` on the
    screen colour the frame.
    """

    DEFAULT_CSS = """
    DialogScreen { align: center middle; }
    DialogScreen > #dialog {
        width: 80%; max-width: 90; height: auto; max-height: 100%;
        border: round $primary; border-title-style: bold; border-title-color: $text;
        border-subtitle-color: $text-muted; background: $surface; padding: 0 1;
    }
    DialogScreen.-danger > #dialog { border: round $error; }
    DialogScreen.-question > #dialog { border: round $warning; }
    DialogScreen .dialog-text { width: 1fr; height: auto; }
    DialogScreen .field-label { width: 1fr; height: auto; color: $text-muted; }
    DialogScreen .dialog-problem { width: 1fr; height: auto; color: $text-error; }
    DialogScreen .dialog-buttons { width: 1fr; height: auto; margin-top: 1; align-horizontal: right; }
    DialogScreen .dialog-buttons Button { margin-left: 1; }
    DialogScreen > ToastRack { dock: top; align: right top; margin: 0; }
    """

    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]  # noqa: RUF012 - Textual declares it so
    """``-short`` up to 31 rows (80×24): lists and text areas take fewer rows there."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # the app's own quit, shown in the dialog's footer (a dialog's footer lists only its own keys)
        Binding("ctrl+q", "app.quit", "Quit", id="app.quit", priority=True),
    ]

    def on_mount(self) -> None:
        self.screen_layout_refresh_signal.subscribe(self, self._keep_toasts_above_buttons)
        if not self.query_children(KeyFooter):
            self.mount(KeyFooter(keep=("quit", "app.quit")))

    def toast_rows(self) -> int:
        """How many rows at the top of the screen toasts may take: those above the topmost button."""
        tops = [button.region.y for button in self.query(Button) if button.display and button.region]
        return min(tops) if tops else self.size.height

    def _keep_toasts_above_buttons(self, _screen: Screen[Any] | None = None) -> None:
        rows = self.toast_rows()
        for rack in toast_racks(self):
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
