"""The one line a reading subcommand prints when the project it reads cannot be written."""

from __future__ import annotations

import sys


def say_read_only(command: str, reason: str | None) -> None:
    """Tell the user once, on stderr, that the project is shown as it is and nothing can be changed."""
    if reason is not None:
        print(f"tunaflow {command}: the project is read-only ({reason}); it is shown as it is and nothing can be "
              "changed", file=sys.stderr, flush=True)
