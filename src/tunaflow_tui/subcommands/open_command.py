"""`tunaflow [PATH] [--no-mouse]`: open the terminal app on a project.

The window comes first: :func:`open_project_app` builds the app without touching the project, and
the project (settings, workflow runtime, database, the chat's newest messages) opens in a worker
right after the first frame, while the status line says "Opening project…". :func:`build_app`
builds the app on a runtime that is already open (tests and scripts).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tunaflow_tui.controllers.git_offer import NOT_GIT_NOTE
from tunaflow_tui.controllers.trust_offer import untrusted_note
from tunaflow_tui.core.config_paths import project_config_path, user_config_path
from tunaflow_tui.subcommands.arguments import is_directory

if TYPE_CHECKING:
    from textual.theme import Theme

    from tunaflow_tui.app import TunaflowApp
    from tunaflow_tui.core.settings import Settings
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

DEMO_ONLY_NOTE = "No agent CLI found: the demo engine plays every role."

__all__ = ["DEMO_ONLY_NOTE", "NOT_GIT_NOTE", "build_app", "open_project_app", "project_notes", "run_app",
           "untrusted_note"]

SettingsLoader = Callable[[], "Settings"]


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
    untrusted = untrusted_note(runtime.settings)
    if untrusted:
        notes.append(untrusted)
    return tuple(notes)


def apply_ui_settings(app: TunaflowApp, settings: Settings) -> None:
    """The user's theme and keymap on ``app``."""
    if settings.ui.keymap:
        app.set_keymap(dict(settings.ui.keymap))
    if settings.ui.theme in app.available_themes and app.theme != settings.ui.theme:
        app.theme = settings.ui.theme


def _register_themes(app: TunaflowApp, read: tuple[list[Theme], list[str]] | None = None) -> None:
    from tunaflow_tui.themes import register_all

    for warning in register_all(app, read=read):
        app.call_later(app.notify, warning, severity="warning", timeout=10)


def build_app(runtime: WorkflowRuntime, *, mouse: bool = True, notes: tuple[str, ...] | None = None,
              cursor_blink: bool = True) -> TunaflowApp:
    """The app on an open ``runtime``, with the user's theme and keymap applied."""
    from tunaflow_tui.app import TunaflowApp
    from tunaflow_tui.controllers.session import ProjectSession

    controller = ProjectSession(runtime, notes=project_notes(runtime) if notes is None else notes)
    settings = runtime.settings
    app = TunaflowApp(controller, mouse=mouse and settings.ui.mouse, keymap=settings.ui.keymap or None,
                      cursor_blink=cursor_blink)
    app.sub_title = runtime.project_dir.name
    _register_themes(app)
    apply_ui_settings(app, settings)
    return app


def early_ui_preferences(project: Path) -> dict[str, Any]:
    """``[ui]`` theme and mouse as the configuration files say, read without validating anything.

    The window is drawn before the settings are loaded and validated; these two values decide how
    it looks and whether it captures the mouse, so they are read cheaply first (user file, then the
    project file, then ``TUNAFLOW_UI__THEME`` / ``TUNAFLOW_UI__MOUSE``). The validated settings
    apply the theme again once they are loaded; an unreadable file is simply skipped here.
    """
    found: dict[str, Any] = {}
    for path in (user_config_path(), project_config_path(project)):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, ValueError):
            continue
        import tomllib  # only when there is a file to read

        try:
            ui = tomllib.loads(text).get("ui", {})
        except ValueError:
            continue
        if isinstance(ui, dict):
            found.update({k: v for k, v in ui.items() if k in ("theme", "mouse")})
    env = {name.upper(): value for name, value in os.environ.items()}
    if "TUNAFLOW_UI__THEME" in env:
        found["theme"] = env["TUNAFLOW_UI__THEME"]
    if "TUNAFLOW_UI__MOUSE" in env:
        found["mouse"] = env["TUNAFLOW_UI__MOUSE"].strip().lower() not in ("0", "false", "no", "off")
    return found


def open_project_app(project: Path, load: SettingsLoader | None = None, *, force_demo: bool = False,
                     mouse: bool = True, notes: tuple[str, ...] | None = None, cursor_blink: bool = True,
                     exit_on_failure: bool = False) -> TunaflowApp:
    """The app on ``project``, drawn at once; the project opens in a worker after the first frame.

    ``load`` loads the settings (default: ``load_settings(project, force_demo=force_demo)``); it runs
    in a thread, as do the runtime's import and the database's opening. ``app.controller`` is a
    :class:`~tunaflow_tui.controllers.opener.ProjectOpener`: ``await app.controller.wait_opened()``
    waits for the project, ``app.controller.close()`` closes it. With ``exit_on_failure`` the app
    exits with code 1 when the project cannot be opened (the error is in ``controller.error``).
    """
    from tunaflow_tui.app import TunaflowApp
    from tunaflow_tui.controllers.opener import ProjectOpener

    # What is loaded by now (Textual, the app's modules) lives as long as the process: keep it out
    # of the cycle collector, whose full passes over it would otherwise delay the first frame.
    gc.freeze()
    project = Path(project).resolve()

    def load_settings() -> Settings:
        from tunaflow_tui.core.settings import load_settings as load_files

        return load_files(project, force_demo=force_demo)

    def open_runtime() -> WorkflowRuntime:
        from tunaflow_tui.runtime.runtime import WorkflowRuntime

        runtime = WorkflowRuntime(project, (load or load_settings)())
        if runtime.store.read_only is not None:  # the app writes as soon as it shows a conversation
            from tunaflow_tui.core.storage import StorageError

            reason = runtime.store.read_only
            runtime.close()
            raise StorageError(f"the project is read-only ({reason}); tunaflow status, search, export and "
                               "branch list can still read it")
        runtime.start_memory()  # embeds what is missing in the background; the window does not wait
        runtime.is_git  # noqa: B018  asked (and kept) here, in the thread: the notes ask it on the loop
        if not themes_registered:  # the theme files are read here too; configure registers them
            from tunaflow_tui.themes import read_all

            themes_read.append(read_all())
        return runtime

    themes_registered = False
    themes_read: list[tuple[list[Theme], list[str]]] = []

    def configure(runtime: WorkflowRuntime) -> tuple[str, ...]:
        assert app is not None, "the app is built before the project opens"
        if not themes_registered:
            _register_themes(app, themes_read[-1] if themes_read else None)
        apply_ui_settings(app, runtime.settings)
        return project_notes(runtime) if notes is None else notes

    app: TunaflowApp | None = None

    def failed(_error: str) -> None:
        if app is not None:
            app.exit(return_code=1)

    opener = ProjectOpener(project.name, open_runtime, configure, failed if exit_on_failure else None)
    early = early_ui_preferences(project)
    app = TunaflowApp(opener, mouse=mouse and early.get("mouse", True) is not False, cursor_blink=cursor_blink)
    app.sub_title = project.name
    theme = early.get("theme")
    if isinstance(theme, str) and theme not in app.available_themes:
        # one of tunaflow's themes or the user's own: read the theme files before the first frame
        _register_themes(app)
        themes_registered = True
    # otherwise they are read once the project is open (the theme picker lists them from then on)
    if isinstance(theme, str) and theme in app.available_themes:
        app.theme = theme
    return app


def run_app(project: Path, load: SettingsLoader | None = None, *, mouse: bool,
            notes: tuple[str, ...] | None = None, force_demo: bool = False) -> int:
    """Open the app on ``project`` until the user quits; returns the exit code."""
    from tunaflow_tui.controllers.opener import ProjectOpener
    from tunaflow_tui.heap import pause_until_first_frame, resume_collections

    pause_until_first_frame()  # on again once the first frame is up (``heap.freeze_loaded``)
    try:
        app = open_project_app(project, load, force_demo=force_demo, mouse=mouse, notes=notes,
                               exit_on_failure=True)
        opener = app.controller
        assert isinstance(opener, ProjectOpener)
        try:
            app.run()
        finally:
            opener.close()
    finally:
        resume_collections()  # the app ended before its first frame
    if opener.error is not None:
        print(f"tunaflow: {opener.error}", file=sys.stderr)
        return 1
    return app.return_code or 0


def run(args: argparse.Namespace) -> int:
    """Open the app on the project."""
    project = Path(args.path).expanduser().resolve()
    if not is_directory(str(project)):
        from tunaflow_tui.subcommands import SUBCOMMANDS
        from tunaflow_tui.subcommands.arguments import did_you_mean, usage_error

        word = str(args.path)
        suggestion = did_you_mean(word, SUBCOMMANDS) if "/" not in word else ""
        if suggestion:  # `tunaflow stauts`: a mistyped command, not a project
            return usage_error(None, f"unknown command {word!r}{suggestion}")
        return usage_error(None, f"{project} is not a directory; tunaflow --help lists the commands")
    return run_app(project, mouse=not args.no_mouse)
