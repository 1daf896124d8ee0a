"""A small app holding one terminal pane (running the stand-in TUI tests/fakes/tty_app.py) and an input."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input

from tunaflow_tui.agents.terminal.pty_session import PtySession, PtySpec
from tunaflow_tui.widgets.terminal_pane import TerminalPane

TTY_APP = Path(__file__).resolve().parents[1] / "fakes" / "tty_app.py"


class TerminalApp(App[None]):
    """The pane on top, an input below; app-level priority bindings like tunaflow's own (ctrl+p, ctrl+g)."""

    CSS = "TerminalPane { height: 1fr; } Input { height: 3; }"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+g", "app_key('ctrl+g')", priority=True),
        Binding("ctrl+p", "app_key('ctrl+p')", priority=True),
    ]

    def __init__(self, *args: str, env: dict[str, str] | None = None, cwd: Path = Path("/"),
                 lines: int = 10, columns: int = 40) -> None:
        super().__init__()
        self.session = PtySession(PtySpec([sys.executable, str(TTY_APP), *args], cwd, env or {}, lines, columns,
                                          scrollback=200))
        self.app_keys: list[str] = []
        self.messages: list[Any] = []

    def compose(self) -> ComposeResult:
        """The pane, then the input."""
        yield TerminalPane(self.session)
        yield Input(id="other")

    def on_mount(self) -> None:
        """Start the program and focus its pane."""
        self.session.start()
        self.query_one(TerminalPane).focus()

    def action_app_key(self, key: str) -> None:
        """An app binding ran (it must not while the pane has the focus)."""
        self.app_keys.append(key)

    def on_terminal_pane_left(self, message: TerminalPane.Left) -> None:
        """Keep what the pane said."""
        self.messages.append(message)

    def on_terminal_pane_ended(self, message: TerminalPane.Ended) -> None:
        """Keep what the pane said."""
        self.messages.append(message)

    async def on_unmount(self) -> None:
        """End the program with the app."""
        await self.session.close()


def screen_text(app: TerminalApp) -> str:
    """The pane's screen as text."""
    return "\n".join(app.session.emulator.display)


def echoed(app: TerminalApp) -> bytes:
    """Every byte the stand-in said it read, in order (it reads what is there: keys may come together)."""
    got = b""
    for line in [*app.session.emulator.history_text(), *app.session.emulator.display]:
        line = line.strip()
        if line.startswith("key: b") and line.endswith("'"):
            got += ast.literal_eval(line[len("key: "):])
    return got
