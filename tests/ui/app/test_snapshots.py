"""Snapshots of the integrated app at 80×24 and 120×40: empty project, proposal, verdict, panes, workflow.

The project lives at a fixed path so that everything derived from it (prompt sizes, token counts)
is the same on every run; timeline clocks are frozen.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from app_harness import demo_settings, send, settle

from tunaflow_tui.agents.demo.sample import copy_demo_project
from tunaflow_tui.clicmd.open import build_app
from tunaflow_tui.controller import plan_views
from tunaflow_tui.runtime import review
from tunaflow_tui.runtime.runtime import WorkflowRuntime

SIZES = [(80, 24), (120, 40)]
REQUEST = "Add a word frequency report"


@pytest.fixture
def snap_app(monkeypatch: pytest.MonkeyPatch):
    root = Path(tempfile.gettempdir()) / "tunaflow-snapshots"
    shutil.rmtree(root, ignore_errors=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(root / "data"))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setattr(plan_views, "event_time", lambda _event: "12:00:00")
    real_run_tests = review.run_tests

    def steady_run_tests(*args, **kwargs):  # the test run's duration is the one thing that varies
        result = real_run_tests(*args, **kwargs)
        return dataclasses.replace(result, summary=re.sub(r" in [\d.]+s", " in 0.01s", result.summary))

    monkeypatch.setattr(review, "run_tests", steady_run_tests)
    project = copy_demo_project(root / "textstats")
    runtime = WorkflowRuntime(project, demo_settings(project))
    app = build_app(runtime, notes=(), cursor_blink=False)
    app.theme = "tunaflow-dark"
    yield app
    runtime.close()
    shutil.rmtree(root, ignore_errors=True)


async def _quiet(pilot) -> None:
    await settle(pilot, pilot.app)
    pilot.app.clear_notifications()
    await pilot.pause()


async def _proposal(pilot) -> None:
    await send(pilot, pilot.app, REQUEST)
    await _quiet(pilot)


async def _verdict(pilot) -> None:
    await _proposal(pilot)
    await pilot.press("a")
    await _quiet(pilot)


async def _drawer(pilot) -> None:
    await _verdict(pilot)
    await pilot.app.controller.open_branch(1)
    await _quiet(pilot)


async def _pinned(pilot) -> None:
    await _drawer(pilot)
    await pilot.press("f7")
    await _quiet(pilot)


async def _workflow(pilot) -> None:
    await _verdict(pilot)
    await pilot.press("f3")
    await _quiet(pilot)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_empty_project(snap_compare, snap_app, size) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_quiet)


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
