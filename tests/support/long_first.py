"""Long tests start first, dealt out to the parallel workers in turn, so none runs alone at the end.

pytest-xdist's ``worksteal`` cuts the collected tests into one contiguous share per worker and lets a
worker that ran out steal from the end of another's share. A long test late in a share keeps its
worker busy while the other has nothing left, and the run lasts as long as that tail. So the tests
that took longest in the earlier runs of this checkout (kept in pytest's cache, ``.pytest_cache``)
and the untimed ones in the folders of whole app sessions and real terminals go to the start
of the shares, one share after the other, longest first. Every other test keeps pytest-randomly's
order (so the run is still in random order, replayable with its seed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

CACHE_KEY = "tunaflow/durations"
"""Where the durations of the last run are kept in pytest's cache: ``{node id: seconds}``."""

LONG_S = 1.0
"""A test that took at least this long (set-up, call and tear-down, in seconds) counts as long."""

LONG_FOLDERS = ("tests/e2e/", "tests/ui/app/")
"""Where the long tests are, for the tests no earlier run timed."""

UNTIMED_S = 5.0
"""How long a test in :data:`LONG_FOLDERS` that no earlier run timed is taken to be."""

T = TypeVar("T")


def share_starts(count: int, workers: int) -> list[int]:
    """Where each worker's first share begins, as worksteal cuts it (``pending // workers left``)."""
    starts, given = [], 0
    for left in range(workers, 0, -1):
        starts.append(given)
        given += (count - given) // left
    return starts


def long_first(ids: Sequence[str], durations: Mapping[str, float], workers: int) -> list[int]:
    """The order of ``ids`` (as indices) with the long ones at the starts of the workers' shares."""
    def took(nodeid: str) -> float:  # a test not timed yet: by its folder
        return durations.get(nodeid, UNTIMED_S if nodeid.startswith(LONG_FOLDERS) else 0.0)

    long = sorted((i for i, nodeid in enumerate(ids) if took(nodeid) >= LONG_S), key=lambda i: -took(ids[i]))
    if not long or workers < 2:  # one process: the order does not change how long the run takes
        return list(range(len(ids)))
    chosen = set(long)
    rest = [i for i in range(len(ids)) if i not in chosen]
    dealt = [long[w::workers] for w in range(workers)]
    starts = [*share_starts(len(ids), workers), len(ids)]
    order: list[int] = []
    for w in range(workers):
        size = starts[w + 1] - starts[w]
        mine = dealt[w][:size]
        if w + 1 < workers:
            dealt[w + 1].extend(dealt[w][size:])  # more long tests than the share holds: the next takes them
        else:
            mine = dealt[w]
        order.extend(mine)
        take = max(0, size - len(mine))
        order.extend(rest[:take])
        rest = rest[take:]
    order.extend(rest)
    return order


def reorder(items: Sequence[T], ids: Sequence[str], durations: Mapping[str, float], workers: int) -> list[T]:
    """``items`` (named by ``ids``) in :func:`long_first` order."""
    return [items[i] for i in long_first(ids, durations, workers)]
