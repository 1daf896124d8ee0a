"""`tunaflow export [PATH] (--conversation ID | --plan N) [-o FILE]`: Markdown of a conversation or a plan.

Read-only: a project without ``.tunaflow/`` has nothing to export, and export never creates it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tunaflow_tui.core.exporting import ExportError, export_conversation, export_plan
from tunaflow_tui.core.storage import StorageError, Store
from tunaflow_tui.core.storage.store import database_path
from tunaflow_tui.subcommands.arguments import is_directory


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow export`."""
    parser.add_argument("path", nargs="?", default=".", metavar="PATH", help="the project (default: .)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--conversation", metavar="ID", default=None,
        help="main (the default), branch:N, or N for the conversation of branch N",
    )
    what.add_argument("--plan", metavar="N", default=None, help="a plan's number or slug")
    parser.add_argument("-o", "--output", metavar="FILE", default=None,
                        help="write the Markdown to FILE instead of standard output")


def _fail(message: str) -> int:
    print(f"tunaflow export: {message}", file=sys.stderr)
    return 1


def _write_stdout(text: str) -> None:
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:  # UTF-8 whatever the locale says, so Korean text never fails to print
        sys.stdout.flush()
        buffer.write(text.encode("utf-8"))
        buffer.flush()
    else:
        sys.stdout.write(text)


def run(args: argparse.Namespace) -> int:
    """Print (or write) the export; exit 1 with a reason when there is nothing to export, 2 for a usage error."""
    from tunaflow_tui.subcommands.arguments import refuse_huge_ids

    refused = refuse_huge_ids("export", [("--plan", args.plan), ("--conversation", args.conversation)])
    if refused is not None:
        return refused
    project = Path(args.path).expanduser().resolve()
    if not is_directory(str(project)):
        from tunaflow_tui.subcommands.arguments import usage_error

        return usage_error("export", f"{args.path} is not a directory")
    if not database_path(project).is_file():
        return _fail(f"{project} has no tunaflow data yet (no .tunaflow/state.db); open it with tunaflow first")
    try:
        with Store.open(project) as store:
            from tunaflow_tui.subcommands.read_only import say_read_only

            say_read_only("export", store.read_only)
            if args.plan is not None:
                text = export_plan(store, str(args.plan).strip())
            else:
                text = export_conversation(store, (args.conversation or "main").strip())
    except (ExportError, StorageError) as exc:
        return _fail(str(exc))
    if args.output is None:
        _write_stdout(text)
        return 0
    target = Path(args.output).expanduser()
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        return _fail(f"could not write {target}: {exc.strerror or exc}")
    print(f"tunaflow export: wrote {target}", file=sys.stderr)
    return 0
