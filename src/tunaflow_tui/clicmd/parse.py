"""`tunaflow parse`: parse (not available in this version yet)."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow parse`."""
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    """Explain that this command is not part of this version yet."""
    print("tunaflow parse: not available in this version yet.", file=sys.stderr)
    return 2
