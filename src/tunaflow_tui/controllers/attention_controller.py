"""AttentionController: the bell (and a desktop notification) when the user is looking elsewhere.

The rules of when to call the user back live in :mod:`tunaflow_tui.core.attention`; this
controller only tells where the user is looking and gives the signal.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from tunaflow_tui.core.attention import AttentionGate, Whereabouts, desktop_notification, is_elsewhere

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.panes import PaneController
    from tunaflow_tui.core.settings.setting_models import UiConfig


class AttentionController:
    """Rings the bell for decisions and finished agents the user is not watching.

    Args:
        app: The app.
        panes: Which branch the pane shows (the user may be watching it).
        ui_settings: The ``[ui]`` settings as they are now (bell, desktop notifications).
    """

    def __init__(self, app: AppPort, panes: PaneController, ui_settings: Callable[[], UiConfig]) -> None:
        self._app = app
        self._panes = panes
        self._ui = ui_settings
        self._gate = AttentionGate()

    def whereabouts(self) -> Whereabouts:
        """Where the user is looking: the window, the screen, and the conversation in focus."""
        app = self._app
        on_main = app.screen is app.screen_stack[0]
        watching = None
        focused = app.screen.focused if on_main else None
        if focused is not None:
            pane = app.workspace.pane
            branch = self._panes.branch_conversation
            if branch is not None and (focused is pane or pane in focused.ancestors):
                watching = branch
            elif any(node.id == "chat-column" for node in focused.ancestors_with_self):
                watching = app.conversation_id
        return Whereabouts(app_focused=bool(app.app_focus), on_main_screen=on_main, watching=watching)

    def call(self, text: str, *, decision: bool, conversation_id: str | None = None) -> bool:
        """Ring the bell (and send a desktop notification if enabled) when the user is elsewhere.

        Returns whether a signal was given.
        """
        if not is_elsewhere(self.whereabouts(), conversation_id):
            return False
        if not self._gate.allow(time.monotonic(), decision=decision):
            return False
        ui = self._ui()
        if ui.bell:
            self._app.bell()
        if ui.notify_desktop:
            self._app.write_terminal_sequence(desktop_notification(text))
        return True
