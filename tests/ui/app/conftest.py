"""Fixtures for the integrated app: the real runtime with the demo engine on a copy of the sample project."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from app_harness import demo_settings

from tunaflow_tui.agents.demo.sample import copy_demo_project
from tunaflow_tui.app import TunaflowApp
from tunaflow_tui.clicmd.open import build_app
from tunaflow_tui.controller import RuntimeController
from tunaflow_tui.core.settings import Settings
from tunaflow_tui.runtime.runtime import WorkflowRuntime

AppFactory = Callable[..., tuple[TunaflowApp, RuntimeController, WorkflowRuntime]]


@pytest.fixture
def demo_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the sample project (a git repo with a pytest suite); user dirs point into tmp."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in list(os.environ):
        if name.upper().startswith("TUNAFLOW_"):
            monkeypatch.delenv(name)
    return copy_demo_project(tmp_path / "textstats")


@pytest.fixture
def open_app(demo_project: Path) -> Iterator[AppFactory]:
    """Build the integrated app on the demo project: (app, controller, runtime)."""
    runtimes: list[WorkflowRuntime] = []

    def factory(*, fail_reviews: int = 0, settings: Settings | None = None, project: Path | None = None,
                notes: tuple[str, ...] | None = (), **workflow: object
                ) -> tuple[TunaflowApp, RuntimeController, WorkflowRuntime]:
        where = project or demo_project
        runtime = WorkflowRuntime(where, settings or demo_settings(where, fail_reviews=fail_reviews, **workflow))
        runtimes.append(runtime)
        app = build_app(runtime, notes=notes, cursor_blink=False)
        assert isinstance(app.controller, RuntimeController)
        return app, app.controller, runtime

    yield factory
    for runtime in runtimes:
        runtime.close()
