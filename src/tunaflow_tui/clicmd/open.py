"""`tunaflow [PATH] [--no-mouse]`: open the terminal app on a project."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tunaflow_tui.app import TunaflowApp
    from tunaflow_tui.core.settings import Settings
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

NOT_GIT_NOTE = ("Not a git repository: the Developer works in place — no isolation and no merge step "
                "(run `git init` and commit to get both).")
DEMO_ONLY_NOTE = "No agent CLI found: the built-in demo engine plays every role."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow open`."""
    parser.add_argument("path", nargs="?", default=".", help="the project (default: the current directory)")
    parser.add_argument("--no-mouse", action="store_true",
                        help="leave the mouse to the terminal (its own text selection works)")


def project_notes(runtime: WorkflowRuntime, *, demo_note: str = DEMO_ONLY_NOTE) -> tuple[str, ...]:
    """What the app should say about the project from the start."""
    notes = []
    if runtime.settings.using_demo_only:
        notes.append(demo_note)
    if not runtime.is_git:
        notes.append(NOT_GIT_NOTE)
    return tuple(notes)


def build_app(runtime: WorkflowRuntime, *, mouse: bool = True, notes: tuple[str, ...] | None = None,
              cursor_blink: bool = True) -> TunaflowApp:
    """The app on ``runtime``, with the user's theme and keymap applied."""
    from tunaflow_tui.app import TunaflowApp
    from tunaflow_tui.controller import RuntimeController
    from tunaflow_tui.themes import register_all

    controller = RuntimeController(runtime, notes=project_notes(runtime) if notes is None else notes)
    settings = runtime.settings
    app = TunaflowApp(controller, mouse=mouse and settings.ui.mouse, keymap=settings.ui.keymap or None,
                      cursor_blink=cursor_blink)
    app.sub_title = runtime.project_dir.name
    warnings = register_all(app)
    if settings.ui.theme in app.available_themes:
        app.theme = settings.ui.theme
    for warning in warnings:
        app.call_later(app.notify, warning, severity="warning", timeout=10)
    return app


def run_app(project: Path, settings: Settings, *, mouse: bool, notes: tuple[str, ...] | None = None) -> int:
    """Open the app on ``project`` until the user quits; returns the exit code."""
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

    try:
        runtime = WorkflowRuntime(project, settings)
    except Exception as exc:
        print(f"tunaflow: cannot open {project}: {exc}", file=sys.stderr)
        return 1
    try:
        app = build_app(runtime, mouse=mouse, notes=notes)
        app.run()
    finally:
        runtime.close()
    return 0


def run(args: argparse.Namespace) -> int:
    """Open the app on the project."""
    from tunaflow_tui.core.settings import SettingsError, load_settings

    project = Path(args.path).expanduser().resolve()
    if not project.is_dir():
        print(f"tunaflow: {project} is not a directory", file=sys.stderr)
        return 1
    try:
        settings = load_settings(project)
    except SettingsError as exc:
        print(f"tunaflow: {exc}", file=sys.stderr)
        return 1
    return run_app(project, settings, mouse=not args.no_mouse)
