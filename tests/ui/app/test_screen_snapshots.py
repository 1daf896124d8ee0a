"""Snapshots of the integrated app's other screens at 80×24 and 120×40.

The narrow pinned branch pane switched back to the main chat, the plan document viewer, the engine
and theme pickers and the context pack: each opened the way a user opens it, on the demo project.
The project lives at a fixed path (prompt sizes and token counts derive from it), clocks are frozen,
and the engine CLIs count as not installed whatever this machine has.
"""

from __future__ import annotations

import pytest
from app_harness import quiet, send

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
REQUEST = "Add a word frequency report"


@pytest.fixture
def snap_app(steady_app):
    return steady_app("tunaflow-screen-snapshots", hide_engine_clis=True)


async def _verdict(pilot) -> None:
    await send(pilot, pilot.app, REQUEST)
    await quiet(pilot)
    await pilot.press("a")
    await quiet(pilot)


async def _pinned_then_switched(pilot) -> None:
    await _verdict(pilot)
    await pilot.app.controller.panes.open_branch(1)
    await quiet(pilot)
    await pilot.press("f7")
    await quiet(pilot)
    await pilot.press("f8")
    await quiet(pilot)


async def _plan_document(pilot) -> None:
    await _verdict(pilot)
    await pilot.app.controller.panes.open_workflow(documents=True)
    await quiet(pilot)
    await pilot.press("enter")  # the plan itself comes first
    await quiet(pilot)


async def _engine_picker(pilot) -> None:
    await quiet(pilot)
    pilot.app.controller.tools.switch_engine()
    await quiet(pilot)


async def _theme_picker(pilot) -> None:
    await quiet(pilot)
    pilot.app.controller.tools.change_theme()
    await quiet(pilot)


async def _context_pack(pilot) -> None:
    await send(pilot, pilot.app, REQUEST)
    await quiet(pilot)
    pilot.app.controller.tools.show_context_pack()
    await quiet(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_pinned_pane_switched_to_the_main_chat(snap_compare, snap_app, size) -> None:
    """At 80×24 f8 shows the main chat in place of the pinned pane; at 120×40 it only moves the focus."""
    assert snap_compare(snap_app, terminal_size=size, run_before=_pinned_then_switched)


@pytest.mark.parametrize("size", SIZES)
def test_plan_document_viewer(snap_compare, snap_app, size) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_plan_document)


@pytest.mark.parametrize("size", SIZES)
def test_engine_picker(snap_compare, snap_app, size) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_engine_picker)


@pytest.mark.parametrize("size", SIZES)
def test_theme_picker(snap_compare, snap_app, size) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_theme_picker)


@pytest.mark.parametrize("size", SIZES)
def test_context_pack(snap_compare, snap_app, size) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_context_pack)
