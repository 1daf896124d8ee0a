"""Every UI test runs on a hand-moved arming clock: a card's keys arm when the test lets time pass."""

from __future__ import annotations

import pytest
from hand_clock import HandClock

from tunaflow_tui.widgets import arming


@pytest.fixture(autouse=True)
def arming_clock(monkeypatch: pytest.MonkeyPatch) -> HandClock:
    """The clock cards and questions arm on; it stands still until the test advances it."""
    clock = HandClock()
    monkeypatch.setattr(arming, "now", clock)
    return clock
