"""Checks on the arguments several subcommands share, reported as usage errors (one line, exit 2)."""

from __future__ import annotations

import sys
from collections.abc import Iterable

USAGE_ERROR = 2


def refuse_huge_ids(command: str, given: Iterable[tuple[str, str | int | None]]) -> int | None:
    """Exit 2 with one line for the first ``(what, value)`` that spells an id beyond any row; None if none does."""
    from tunaflow_tui.core.storage.ids import MAX_ROW_ID, beyond_any_row

    for what, value in given:
        if value is not None and beyond_any_row(value):
            print(f"tunaflow {command}: {what} {str(value)[:40]} is not an id: ids are whole numbers up to "
                  f"{MAX_ROW_ID}", file=sys.stderr, flush=True)
            return USAGE_ERROR
    return None
