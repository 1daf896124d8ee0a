"""Snapshots of the integrated app at 80×24 and 120×40: empty project, proposal, verdict, panes, workflow.

The project lives at a fixed path so that everything derived from it (prompt sizes, token counts)
is the same on every run; timeline clocks are frozen.
"""

from __future__ import annotations

import pytest
from app_harness import quiet, send

SIZES = [(80, 24), (120, 40)]
REQUEST = "Add a word frequency report"


@pytest.fixture
def snap_app(steady_app):
    return steady_app("tunaflow-snapshots")


async def _proposal(pilot) -> None:
    await send(pilot, pilot.app, REQUEST)
    await quiet(pilot)


async def _verdict(pilot) -> None:
    await _proposal(pilot)
    await pilot.press("a")
    await quiet(pilot)


async def _drawer(pilot) -> None:
    await _verdict(pilot)
    await pilot.app.controller.panes.open_branch(1)
    await quiet(pilot)


async def _pinned(pilot) -> None:
    await _drawer(pilot)
    await pilot.press("f7")
    await quiet(pilot)


async def _workflow(pilot) -> None:
    await _verdict(pilot)
    await pilot.press("f3")
    await quiet(pilot)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_empty_project(snap_compare, snap_app, size) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=quiet)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_pending_proposal(snap_compare, snap_app, size) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_proposal)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_verdict_card(snap_compare, snap_app, size) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_verdict)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_branch_pane_drawer(snap_compare, snap_app, size) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_drawer)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_branch_pane_pinned(snap_compare, snap_app, size) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_pinned)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_workflow_view(snap_compare, snap_app, size) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_workflow)


async def _pinned_light(pilot) -> None:
    pilot.app.theme = "tunaflow-light"
    await _pinned(pilot)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_branch_pane_pinned_light_theme(snap_compare, snap_app, size) -> None:
    """The main areas' titled rules and the focused one's accent read on the light theme too."""
    assert snap_compare(snap_app, terminal_size=size, run_before=_pinned_light)
