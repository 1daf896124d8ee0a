"""`tunaflow parse FILE [--role ROLE]`: print the markers found in an agent reply as JSON."""

from __future__ import annotations

import argparse
import json
import sys

from tunaflow_tui.core.markers import ROLES, parse_markers


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow parse`."""
    parser.add_argument("file", metavar="FILE", help="the agent reply to parse (`-` reads stdin)")
    parser.add_argument(
        "--role",
        choices=ROLES,
        default=None,
        help="the role that wrote the reply; markers it may not emit are reported as accepted=false "
        "(without --role every marker is accepted)",
    )


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors="replace")
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", errors="replace")


def run(args: argparse.Namespace) -> int:
    """Parse the file and print the result as JSON; exit 2 if there is no such file, 1 if it can't be read."""
    try:
        text = _read(args.file)
    except FileNotFoundError:
        from tunaflow_tui.subcommands.arguments import usage_error

        return usage_error("parse", f"there is no file {args.file}")
    except OSError as exc:
        print(f"tunaflow parse: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    result = parse_markers(text, args.role)
    output = json.dumps(result.to_json(), ensure_ascii=False, indent=2) + "\n"
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:  # UTF-8 whatever the locale says, so Korean text never fails to print
        sys.stdout.flush()
        buffer.write(output.encode("utf-8"))
        buffer.flush()
    else:
        sys.stdout.write(output)
    return 0
