"""`tunaflow demo [--no-mouse] [--fail-once]`: the sample project in a throwaway directory, with the demo engine."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tunaflow_tui.core.settings import Settings

DEMO_NOTE = "Demo engine, throwaway sample project · try: add a word frequency report"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow demo`."""
    parser.add_argument("--no-mouse", action="store_true",
                        help="leave the mouse to the terminal (its own text selection works)")
    parser.add_argument("--fail-once", action="store_true",
                        help="the demo reviewer fails the first review, to show rework")


def run(args: argparse.Namespace) -> int:
    """Copy the sample project, open it with the demo engine, say where the copy is on exit."""
    from tunaflow_tui.agents.demo.sample import copy_demo_project
    from tunaflow_tui.subcommands.open_command import run_app

    root = Path(tempfile.mkdtemp(prefix="tunaflow-demo-"))
    project = copy_demo_project(root / "textstats")
    fail_once = bool(args.fail_once)

    def load() -> Settings:
        # runs after the first frame, like every project's settings
        from tunaflow_tui.core.settings import load_settings

        settings = load_settings(project, force_demo=True)
        # the worktrees live beside the copy, so deleting the demo directory removes everything
        workflow = settings.workflow.model_copy(update={"worktree_root": root / "worktrees"})
        settings = settings.model_copy(update={"workflow": workflow})
        if fail_once:
            demo = settings.engines["demo"].model_copy(update={"demo_fail_reviews": 1})
            settings = settings.model_copy(update={"engines": {**settings.engines, "demo": demo}})
        return settings

    code = run_app(project, load, mouse=not args.no_mouse, notes=(DEMO_NOTE,))
    print(f"The demo project is in {project} (delete {root} when you are done).")
    return code
