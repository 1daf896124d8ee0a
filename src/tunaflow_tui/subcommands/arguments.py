"""The command line's exit codes and the usage errors every subcommand reports the same way.

One table (README, "Exit codes") that every subcommand follows:

======  ===========================================================================================
code    meaning
======  ===========================================================================================
0       done
1       the command line was right but the work could not be done: no tunaflow data in the
        project, no such branch, plan or message, a refusal (adopted already), an agent's turn
        failed, the database or a file could not be read or written
2       usage error: the command line is wrong (unknown command, option or action; a missing,
        extra or malformed argument; a PATH or FILE that does not exist; an id beyond any row).
        One line on stderr names the mistake; nothing is read or written
3       ``tunaflow run``: a decision is waiting for you
4       ``tunaflow roundtable``: a seat failed or gave no ranking (the other answers are kept)
130     interrupted by ctrl+c; 128 + N: stopped by signal N
======  ===========================================================================================

A reader that stops early (``tunaflow export | head``) ends the command quietly with 141 (128 + SIGPIPE).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

EXIT_DONE = 0
EXIT_FAILED = 1
USAGE_ERROR = 2
EXIT_BROKEN_PIPE = 141


def is_directory(word: str) -> bool:
    """Whether ``word`` names an existing directory; a word no path can be (too long, NUL) is not one."""
    from pathlib import Path

    try:
        return Path(word).expanduser().is_dir()
    except (OSError, ValueError, RuntimeError):
        return False


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` — did you mean 'x'?`` for the choice closest to ``word``, or "" when none is close.

    Options are compared without their dashes (``--loud`` is not close to ``--rounds`` for sharing ``--``)."""
    import difflib

    names = {choice.lstrip("-"): choice for choice in choices}
    close = difflib.get_close_matches(word.lstrip("-"), list(names), n=1, cutoff=0.7)
    return f" — did you mean {names[close[0]]!r}?" if close else ""


def usage_error(command: str | None, message: str) -> int:
    """Print ``message`` as one line (``tunaflow COMMAND: message``) on stderr; returns :data:`USAGE_ERROR`."""
    from tunaflow_tui.core.terminal_text import neutralize

    prefix = f"tunaflow {command}" if command else "tunaflow"
    print(f"{prefix}: {' '.join(neutralize(message).split())}", file=sys.stderr, flush=True)
    return USAGE_ERROR


def refuse_huge_ids(command: str, given: Iterable[tuple[str, str | int | None]]) -> int | None:
    """Exit 2 with one line for the first ``(what, value)`` that spells an id beyond any row; None if none does."""
    from tunaflow_tui.core.storage.ids import MAX_ROW_ID, beyond_any_row

    for what, value in given:
        if value is not None and beyond_any_row(value):
            print(f"tunaflow {command}: {what} {str(value)[:40]} is not an id: ids are whole numbers up to "
                  f"{MAX_ROW_ID}", file=sys.stderr, flush=True)
            return USAGE_ERROR
    return None
