"""StatusController: the one line above the composer, and the runtime's notices as toasts.

While agents work the line says what the runtime does now ("⟳ developer (claude) is working…");
otherwise it keeps the project's notes ("demo engine plays every role", "not a git repository").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.runtime.events import NoticeRaised, Progress

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from tunaflow_tui.app import TunaflowApp

SEVERITY: dict[str, SeverityLevel] = {"info": "information", "warning": "warning", "error": "error"}


class StatusController:
    """Keeps the status line current and shows the runtime's notices.

    Args:
        app: The app.
        notes: Lines shown when no agent works.
        agents_running: Whether agent work runs now.
    """

    def __init__(self, app: TunaflowApp, notes: tuple[str, ...], agents_running: Callable[[], bool]) -> None:
        self._app = app
        self.notes = tuple(notes)
        self._agents_running = agents_running
        self._progress = ""

    def drop_note(self, note: str) -> None:
        """Stop showing ``note`` (what it said is no longer true)."""
        self.notes = tuple(n for n in self.notes if n != note)
        self.refresh()

    def progress(self, event: Progress) -> None:
        """The runtime says what it does now."""
        self._progress = neutralize(event.text)
        self.refresh()

    def notice(self, event: NoticeRaised) -> None:
        """A notice from the runtime: a toast, as plain text."""
        self._app.notify(neutralize(event.text), severity=SEVERITY.get(event.level, "information"),
                         timeout=10 if event.level != "info" else 5)

    def refresh(self) -> None:
        """Bring the line in line with what runs now."""
        running = self._agents_running()
        text = f"⟳ {self._progress}" if running and self._progress else "  ·  ".join(self.notes)
        self._app.set_status(text)
