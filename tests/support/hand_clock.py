"""A clock the test moves by hand, for the time a card or question takes to arm its keys."""

from __future__ import annotations


class HandClock:
    """Stands in for ``tunaflow_tui.widgets.decision.arming.now``: time passes only when the test says so."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.time = start

    def __call__(self) -> float:
        return self.time

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass."""
        self.time += seconds
