"""`tunaflow demo [--no-mouse] [--fail-once]`: the sample project in a throwaway directory, with the demo engine."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

DEMO_NOTE = "Demo engine on a throwaway copy of the sample project. Try: add a word frequency report"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow demo`."""
    parser.add_argument("--no-mouse", action="store_true",
                        help="leave the mouse to the terminal (its own text selection works)")
    parser.add_argument("--fail-once", action="store_true",
                        help="the demo reviewer fails the first review, to show rework")


def run(args: argparse.Namespace) -> int:
    """Copy the sample project, open it with the demo engine, say where the copy is on exit."""
    from tunaflow_tui.agents.demo.sample import copy_demo_project
    from tunaflow_tui.clicmd.open import run_app
    from tunaflow_tui.core.settings import SettingsError, load_settings

    root = Path(tempfile.mkdtemp(prefix="tunaflow-demo-"))
    project = copy_demo_project(root / "textstats")
    try:
        settings = load_settings(project, force_demo=True)
    except SettingsError as exc:
        print(f"tunaflow demo: {exc}", file=sys.stderr)
        return 1
    # the worktrees live beside the copy, so deleting the demo directory removes everything
    workflow = settings.workflow.model_copy(update={"worktree_root": root / "worktrees"})
    settings = settings.model_copy(update={"workflow": workflow})
    if args.fail_once:
        demo = settings.engines["demo"].model_copy(update={"demo_fail_reviews": 1})
        settings = settings.model_copy(update={"engines": {**settings.engines, "demo": demo}})
    code = run_app(project, settings, mouse=not args.no_mouse, notes=(DEMO_NOTE,))
    print(f"The demo project is in {project} (delete {root} when you are done).")
    return code
