"""Every UI test runs on a hand-moved arming clock: a card's keys arm when the test lets time pass."""

from __future__ import annotations

import pytest
from hand_clock import HandClock
from textual.notifications import Notification, Notifications

from tunaflow_tui.widgets.decision import arming


@pytest.fixture(autouse=True)
def arming_clock(monkeypatch: pytest.MonkeyPatch) -> HandClock:
    """The clock cards and questions arm on; it stands still until the test advances it."""
    clock = HandClock()
    monkeypatch.setattr(arming, "now", clock)
    return clock


@pytest.fixture(autouse=True)
def notification_history(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every notification the app posts is kept in order (``app_harness.posted``).

    A toast leaves the screen after its timeout in wall-clock seconds; a test reads what was said
    from this history, so a slow machine (a toast gone before the test looked) cannot change it.
    """
    real_add = Notifications.add

    def add(self: Notifications, notification: Notification) -> Notifications:
        self.__dict__.setdefault("history", []).append(notification)
        return real_add(self, notification)

    monkeypatch.setattr(Notifications, "add", add)
