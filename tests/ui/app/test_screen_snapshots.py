"""Snapshots of the integrated app's other screens at 80×24 and 120×40.

The narrow pinned branch pane switched back to the main chat, the plan document viewer, the engine
and theme pickers and the context pack: each opened the way a user opens it, on the demo project.
The project lives at a fixed path (prompt sizes and token counts derive from it), clocks are frozen,
and the engine CLIs count as not installed whatever this machine has.
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
from tunaflow_tui.controller import actions, plan_views
from tunaflow_tui.runtime import review
from tunaflow_tui.runtime.runtime import WorkflowRuntime

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
REQUEST = "Add a word frequency report"
ENGINE_CLIS = {"claude", "codex", "gemini"}


@pytest.fixture
def snap_app(monkeypatch: pytest.MonkeyPatch):
    root = Path(tempfile.gettempdir()) / "tunaflow-screen-snapshots"
    shutil.rmtree(root, ignore_errors=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(root / "data"))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setattr(plan_views, "event_time", lambda _event: "12:00:00")
    real_which = shutil.which
    monkeypatch.setattr(actions.shutil, "which",
                        lambda name, *args, **kwargs: None if name in ENGINE_CLIS else real_which(name, *args, **kwargs))
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


async def _verdict(pilot) -> None:
    await send(pilot, pilot.app, REQUEST)
    await _quiet(pilot)
    await pilot.press("a")
    await _quiet(pilot)


async def _pinned_then_switched(pilot) -> None:
    await _verdict(pilot)
    await pilot.app.controller.open_branch(1)
    await _quiet(pilot)
    await pilot.press("f7")
    await _quiet(pilot)
    await pilot.press("f8")
    await _quiet(pilot)


async def _plan_document(pilot) -> None:
    await _verdict(pilot)
    pilot.app.controller.open_plan_documents()
    await _quiet(pilot)
    await pilot.press("enter")  # the plan itself comes first
    await _quiet(pilot)


async def _engine_picker(pilot) -> None:
    await _quiet(pilot)
    pilot.app.controller.switch_engine()
    await _quiet(pilot)


async def _theme_picker(pilot) -> None:
    await _quiet(pilot)
    pilot.app.controller.change_theme()
    await _quiet(pilot)


async def _context_pack(pilot) -> None:
    await send(pilot, pilot.app, REQUEST)
    await _quiet(pilot)
    pilot.app.controller.show_context_pack()
    await _quiet(pilot)


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
