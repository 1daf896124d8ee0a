"""DoomLoopScreen: after repeated failed reviews, ask whether to redesign or let the Developer continue."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from tunaflow_tui.screens.decision_screen import DecisionScreen
from tunaflow_tui.viewmodels.plan_rows import FailureView

REDESIGN = "redesign"
CONTINUE = "continue"
DOOM_LOOP_CHOICES: tuple[tuple[str, str, str], ...] = (
    ("r", "Architect redesigns", REDESIGN),
    ("c", "Developer continues", CONTINUE),
)


class DoomLoopScreen(DecisionScreen):
    """Modal with the failure history; dismisses with "redesign", "continue", or None (decide later).

    ``arming`` as for :class:`DecisionScreen` (the question appears on its own after a failed review).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", f"choose('{REDESIGN}')", "Architect redesigns", id="doom.redesign"),
        Binding("c", f"choose('{CONTINUE}')", "Developer continues", id="doom.continue"),
    ]

    DEFAULT_CSS = """
    DoomLoopScreen #history { height: auto; max-height: 12; border: round $panel-lighten-2; padding: 0 1; }
    DoomLoopScreen.-short #history { max-height: 7; }
    DoomLoopScreen .round { text-style: bold; color: $text-error; }
    """

    def __init__(self, failures: tuple[FailureView, ...], threshold: int, *, arming: float = 0.0) -> None:
        super().__init__(
            "Review keeps failing",
            f"{len(failures)} reviews in a row have failed (the limit is {threshold}). "
            "Should the Architect redesign the plan, or should the Developer keep going?",
            DOOM_LOOP_CHOICES,
            arming=arming,
            failure=True,
        )
        self.failures = failures
        self.threshold = threshold

    def compose_details(self) -> ComposeResult:
        """The failed review rounds, each with its findings."""
        with VerticalScroll(id="history"):
            for failure in self.failures:
                yield Static(f"Round {failure.round_no} · {failure.verdict.upper()}", classes="round", markup=False)
                if failure.findings:
                    yield Static("\n".join(f"• {f}" for f in failure.findings), markup=False)
