"""WorktreeSetupScreen: the worktree setup failed before the Developer started — retry, skip, or open a shell.

"Open a shell" is the app's own action: the terminal goes to the user's ``$SHELL`` in the worktree
(``App.suspend``) and, when the shell exits, the question comes back so the user can retry or skip.
"""

from __future__ import annotations

import os
import subprocess
from contextlib import AbstractContextManager
from pathlib import Path
from typing import ClassVar, Protocol

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from tunaflow_tui.screens.decision_screen import DecisionScreen

RETRY_SETUP = "retry_setup"
SKIP_SETUP = "skip_setup"
OPEN_SHELL = "shell"
SETUP_CHOICES: tuple[tuple[str, str, str], ...] = (
    ("r", "Retry", RETRY_SETUP),
    ("s", "Skip setup", SKIP_SETUP),
    ("o", "Open a shell", OPEN_SHELL),
)


class WorktreeSetupScreen(DecisionScreen):
    """The setup's failure, the worktree it ran in; dismisses with retry_setup, skip_setup, shell or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", f"choose('{RETRY_SETUP}')", "Retry the setup", id="setup.retry"),
        Binding("s", f"choose('{SKIP_SETUP}')", "Skip the setup, start the Developer", id="setup.skip"),
        Binding("o", f"choose('{OPEN_SHELL}')", "Open a shell in the worktree", id="setup.shell"),
    ]

    DEFAULT_CSS = """
    WorktreeSetupScreen #setup-reason { color: $text-error; width: 1fr; height: auto; }
    WorktreeSetupScreen #setup-where { color: $text-muted; width: 1fr; height: auto; }
    """

    def __init__(self, plan_title: str, reason: str, command: str, worktree: str, *,
                 arming: float = 0.0) -> None:
        super().__init__(
            "Worktree setup failed",
            f"The worktree setup for “{plan_title}” failed, so the Developer has not started.\n"
            "Retry runs it again; skip starts the Developer without it; a shell lets you fix it by hand "
            "(this question comes back when you exit the shell).",
            SETUP_CHOICES,
            arming=arming,
            failure=True,
        )
        self.reason = reason
        self.command = command
        self.worktree = worktree

    def compose_details(self) -> ComposeResult:
        """Why the setup failed, the command that ran and the worktree it ran in."""
        yield Static(self.reason, id="setup-reason", markup=False)
        yield Static(f"command: {self.command}\nworktree: {self.worktree}", id="setup-where", markup=False)


class Suspends(Protocol):
    """What handing the terminal to a shell needs of the app."""

    def suspend(self) -> AbstractContextManager[None]:
        """Give the terminal away for the duration of a ``with`` block."""
        ...


def open_shell(app: Suspends, worktree: Path, *, project: Path, branch: str) -> str | None:
    """Hand the terminal to the user's shell in ``worktree`` until it exits; an error text when it cannot."""
    if not worktree.is_dir():
        return f"The worktree {worktree} does not exist any more."
    shell = os.environ.get("SHELL") or "/bin/sh"
    env = {**os.environ, "TUNAFLOW_WORKTREE": str(worktree), "TUNAFLOW_PROJECT": str(project),
           "TUNAFLOW_BRANCH": branch}
    try:
        with app.suspend():
            print(f"tunaflow: a shell in {worktree} — exit it to return to the question.", flush=True)
            subprocess.run([shell], cwd=worktree, env=env, check=False)
    except Exception as exc:  # e.g. no terminal to hand over (served in a browser)
        return f"Cannot open a shell here ({type(exc).__name__}); open one yourself: cd {worktree}"
    return None
