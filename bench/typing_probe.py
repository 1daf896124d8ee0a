"""Open-loop typing into a terminal app under tmux, shared by the typing benches.

Keys are pressed ``gap`` seconds apart by the clock (not after the previous one showed), and each key's
latency is the time from tmux taking it to the first screen that shows it.
"""

from __future__ import annotations

import string
import time
from collections.abc import Callable, Sequence

from tmux_term import Terminal

RUN = 40  # keys per line before it is cleared

Shown = Callable[[Sequence[str], int, str], int]
"""(screen lines, the composer's row, the keys typed on this line) → how many of them the screen shows."""


def typed_text(count: int) -> str:
    """``count`` letters to type, varied so that a key shown twice cannot pass for the next one."""
    letters = string.ascii_lowercase
    return "".join(letters[(i * 7) % 26] for i in range(count))


def composer_row(lines: Sequence[str]) -> int | None:
    """The row of the composer (its placeholder), if the screen shows it."""
    for index, line in enumerate(lines):
        if "Message…" in line:
            return index
    return None


def shown_in_composer(lines: Sequence[str], row: int, run: str) -> int:
    """How many of the run's characters the composer line shows."""
    text = lines[row].replace("▕", " ").strip()
    count = 0
    while count < len(run) and count < len(text) and text[count] == run[count]:
        count += 1
    return count


def type_keys(term: Terminal, row: int, keys: int, gap: float, shown: Shown,
              clear: Callable[[], None]) -> list[float]:
    """Press ``keys`` keys ``gap`` s apart by the clock; the latency of each, in seconds.

    Every :data:`RUN` keys the line is emptied with ``clear`` (off the clock).
    """
    text = typed_text(keys)
    latencies: list[float] = []
    pending: list[tuple[int, float]] = []  # (position in the line, when tmux took it), not seen yet
    run = ""
    index = 0
    next_at = time.perf_counter()
    last_seen = next_at
    while index < keys or pending:
        now = time.perf_counter()
        if index < keys and now >= next_at and len(run) < RUN:
            pending.append((len(run), term.send(text[index], literal=True)))
            run += text[index]
            index += 1
            next_at += gap
            continue
        if index < keys and len(run) == RUN and not pending:  # a full line: clear it, off the clock
            clear()
            run, next_at = "", time.perf_counter()
            continue
        if not term._output_seen.wait(max(0.0, min(0.05, next_at - now)) if index < keys else 0.05):
            if now - last_seen > 10:
                raise TimeoutError(f"keys typed but not shown: {pending}")
            continue
        term._output_seen.clear()
        stamp, lines = term.screen()
        count = shown(lines, row, run)
        while pending and pending[0][0] < count:
            latencies.append(stamp - pending.pop(0)[1])
            last_seen = stamp
    return latencies


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct`` percentile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1))))
    return ordered[rank]
