"""Snapshot of an empty branch pane pinned at 80×24: it fills the width, has the keys (its accent frame), and the
footer names the pane's keys."""

from __future__ import annotations

import pytest
from app_harness import quiet


@pytest.fixture
def snap_app(steady_app):
    return steady_app("tunaflow-pinned-pane-snapshots")


async def _pinned_empty(pilot) -> None:
    await quiet(pilot)
    await pilot.press("f7")
    await quiet(pilot)


def test_empty_pane_pinned_at_80x24(snap_compare, snap_app) -> None:
    assert snap_compare(snap_app, terminal_size=(80, 24), run_before=_pinned_empty)
