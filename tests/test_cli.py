"""The command line skeleton: every subcommand exists and --help works."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

from tunaflow_tui.cli import SUBCOMMANDS, build_parser


def test_help_lists_every_subcommand() -> None:
    out = subprocess.run([sys.executable, "-m", "tunaflow_tui", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for name in ("demo", "run", "status", "doctor", "parse", "export", "serve"):
        assert name in out.stdout
    assert set(SUBCOMMANDS) >= {"open", "demo", "run", "status", "doctor", "parse", "export", "serve"}


def test_version() -> None:
    out = subprocess.run([sys.executable, "-m", "tunaflow_tui", "--version"], capture_output=True, text=True)
    assert out.returncode == 0
    assert out.stdout.startswith("tunaflow ")


def _help(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "tunaflow_tui", *args, "--help"], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "100"})
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_top_level_help_describes_every_subcommand() -> None:
    shown = " ".join(_help().split())
    for name, help_text in SUBCOMMANDS.items():
        assert f"{name} {help_text}" in shown


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_each_subcommands_help_lists_all_its_arguments(name: str) -> None:
    shown = _help(name)
    sub = next(action for action in build_parser()._actions if isinstance(action, argparse._SubParsersAction))
    expected = sub.choices[name]
    for action in expected._actions:
        for flag in action.option_strings or [action.metavar or action.dest]:
            assert flag in shown, (name, flag)
    assert len(expected._actions) > 1  # every subcommand has arguments of its own besides --help


PROBE = """
import sys
from tunaflow_tui.cli import build_parser
build_parser(sys.argv[1])
print("\\n".join(sorted(m for m in sys.modules if m.startswith("tunaflow_tui"))))
"""


@pytest.mark.parametrize("command", ["open", ""])
def test_building_the_parser_for_the_window_loads_no_other_subcommand(command: str) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE, command], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    other_commands = {f"tunaflow_tui.subcommands.{name}_command" for name in SUBCOMMANDS if name != command}
    assert not loaded & other_commands
    heavy = ("tunaflow_tui.core.storage", "tunaflow_tui.core.markers", "tunaflow_tui.core.workflow",
             "tunaflow_tui.core.settings", "tunaflow_tui.agents", "tunaflow_tui.runtime")
    assert not [name for name in loaded if name.startswith(heavy)]


WINDOW_PROBE = """
import sys
from pathlib import Path
from tunaflow_tui.subcommands.open_command import open_project_app
open_project_app(Path(sys.argv[1]))
print("\\n".join(sorted(m for m in sys.modules if m.startswith(("tunaflow_tui", "tomllib")))))
"""


def test_the_window_is_built_before_any_project_module_loads(tmp_path) -> None:
    # `tunaflow PATH` draws its window first and opens the project in a worker: nothing of the
    # workflow machine, the markers, storage, settings, engines or runtime is loaded to build it
    out = subprocess.run([sys.executable, "-c", WINDOW_PROBE, str(tmp_path)], capture_output=True, text=True,
                         check=True)
    loaded = set(out.stdout.split())
    assert "tunaflow_tui.app" in loaded
    heavy = ("tunaflow_tui.core.storage", "tunaflow_tui.core.markers", "tunaflow_tui.core.workflow.commands",
             "tunaflow_tui.core.workflow.machine", "tunaflow_tui.core.settings", "tunaflow_tui.agents",
             "tunaflow_tui.runtime")
    assert not [name for name in loaded if name.startswith(heavy)]
    assert "tomllib" not in loaded  # no configuration or theme file to read: the TOML parser waits too


FIRST_FRAME_PROBE = """
import sys
from textual.app import App
from tunaflow_tui.app import TunaflowApp
from tunaflow_tui.cli import main
from tunaflow_tui.controllers.opener import ProjectOpener


def loaded_at_first_frame(self):
    # the window is drawn and the project is about to open: what was loaded is what the frame waited for
    print("\\n".join(sorted(m for m in sys.modules if m.startswith(("tunaflow_tui", "peewee", "sqlite3")))))
    self.app.exit()


ProjectOpener._start_opening = loaded_at_first_frame
TunaflowApp.run = lambda self, **_: App.run(self, headless=True, size=(120, 40))
sys.exit(main([sys.argv[1]]))
"""


def test_tunaflow_path_loads_no_storage_before_its_first_frame(git_repo, tmp_path) -> None:
    # the whole way a user takes, `tunaflow PATH` from the command line to the first frame of the
    # window: the database layer (the store, peewee, the marker parser it stores messages with)
    # is loaded in the worker that opens the project afterwards, never before the window shows
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data"),
           "XDG_STATE_HOME": str(tmp_path / "state")}
    out = subprocess.run([sys.executable, "-c", FIRST_FRAME_PROBE, str(git_repo)], capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    loaded = set(out.stdout.split())
    assert "tunaflow_tui.widgets.decision.decision_dock" in loaded  # the window was drawn
    heavy = ("peewee", "sqlite3", "tunaflow_tui.core.storage.store", "tunaflow_tui.core.storage.models",
             "tunaflow_tui.core.markers", "tunaflow_tui.core.gitops", "tunaflow_tui.core.settings",
             "tunaflow_tui.agents", "tunaflow_tui.runtime")
    assert not [name for name in loaded if name.startswith(heavy)]


def test_the_window_sets_up_the_arguments_of_no_other_subcommand() -> None:
    parser = build_parser("open")
    sub = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    assert set(sub.choices) == {"open"}
    everything = build_parser("")
    sub = next(action for action in everything._actions if isinstance(action, argparse._SubParsersAction))
    assert set(sub.choices) == set(SUBCOMMANDS)  # `tunaflow --help` still lists them all
