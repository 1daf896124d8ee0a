"""`tunaflow trust [PATH] [--never | --show]`: let a project's own configuration run its commands.

A project's ``.tunaflow/config.toml`` may name commands (an engine's binary and arguments, a
worktree set-up, a test command …). They apply only after its user trusted them, here, in the app's
trust prompt, or with ``--trust`` on ``run``, ``ask`` and ``roundtable``; until then those refuse
with a line naming this command, and ``doctor`` and the app run none of them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tunaflow_tui.core.settings import Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow trust`."""
    parser.add_argument("path", nargs="?", default=".", metavar="PATH", help="the project (default: .)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--never", action="store_true",
                      help="never run these commands (not asked again until they change)")
    what.add_argument("--show", action="store_true", help="only show the commands and the decision")


def add_trust_flag(parser: argparse.ArgumentParser) -> None:
    """``--trust`` on a subcommand that runs agents."""
    parser.add_argument("--trust", action="store_true",
                        help="trust the commands the project's .tunaflow/config.toml names (see `tunaflow trust`)")


def untrusted_refusal(project: Path, settings: Settings) -> str | None:
    """Why a subcommand that runs agents refuses while the project's commands are not trusted, or None."""
    from tunaflow_tui.core.settings.trust import TrustState

    decided = settings.project_trust
    if decided is None or decided.state in (TrustState.TRUSTED, TrustState.NOTHING_TO_TRUST):
        return None
    why = "you chose never to run" if decided.state is TrustState.DENIED else "you have not trusted"
    return (f"{project}/.tunaflow/config.toml names commands {why} "
            f"({'; '.join(decided.lines)}); read them, then run `tunaflow trust {project}` "
            "or add --trust")


def run(args: argparse.Namespace) -> int:
    """Record (or show) the user's decision about the project's commands; exit 2 for a bad project."""
    from tunaflow_tui.core.settings import SettingsError
    from tunaflow_tui.core.settings.loader import project_trust
    from tunaflow_tui.core.settings.trust import TrustState, TrustStore
    from tunaflow_tui.core.terminal_text import neutralize
    from tunaflow_tui.subcommands.arguments import is_directory, usage_error

    if not is_directory(args.path):
        return usage_error("trust", f"{args.path} is not a directory")
    project = Path(args.path).expanduser().resolve()
    try:
        decided = project_trust(project)
    except SettingsError as exc:
        print(f"tunaflow trust: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    if decided.state is TrustState.NOTHING_TO_TRUST:
        print(f"{project}: its configuration names no commands; nothing to trust.")
        return 0
    print(f"{project}/.tunaflow/config.toml names these commands:")
    for line in decided.lines:
        print(f"  {neutralize(line)}")
    if args.show:
        print(f"Decision: {decided.state.value}.")
        return 0
    store = TrustStore()
    if args.never:
        store.deny(project, decided.commands)
        print("Never: tunaflow will not run them (it asks again if they change).")
    else:
        store.trust(project, decided.commands)
        print("Trusted: tunaflow runs them from now on (it asks again if they change).")
    return 0
