"""Snapshots of the focus ring: the card that has the keys draws a heavy frame in the accent colour, the
footer names its plan before its keys, and the dock line names the plan too — at 80×24 and 120×40, in
the dark and the light theme."""

from __future__ import annotations

import pytest
from app_harness import quiet, send

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
THEMES = [pytest.param("tunaflow-dark", id="dark"), pytest.param("tunaflow-light", id="light")]
REQUEST = "Add a word frequency report"


@pytest.fixture
def snap_app(steady_app):
    return steady_app("tunaflow-focus-snapshots")


def _focused_proposal(theme: str):
    async def run_before(pilot) -> None:
        pilot.app.theme = theme
        await send(pilot, pilot.app, REQUEST)
        await quiet(pilot)
        await pilot.press("i")  # away from the card, then back to it as a user does: f2
        await quiet(pilot)
        await pilot.press("f2")
        await quiet(pilot)

    return run_before


def _focused_done(theme: str):
    async def run_before(pilot) -> None:
        pilot.app.theme = theme
        await send(pilot, pilot.app, REQUEST)
        await quiet(pilot)
        await pilot.press("a")
        await quiet(pilot)
        await pilot.press("f2")  # the verdict
        await quiet(pilot)
        await pilot.press("a")  # accepted: the done card takes the focus
        await quiet(pilot)

    return run_before


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES)
def test_focused_proposal_card(snap_compare, snap_app, size, theme) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_focused_proposal(theme))


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES)
def test_focused_done_card(snap_compare, snap_app, size, theme) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_focused_done(theme))
