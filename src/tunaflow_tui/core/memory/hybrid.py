"""One search over full text and vectors: both rankings, fused by reciprocal rank.

The caller supplies the two rankings as functions returning message ids, best first: full text
(e.g. :func:`~tunaflow_tui.core.memory.fts_search.tiered_search` on the message index) and
vectors (e.g. :meth:`~tunaflow_tui.core.memory.vectors.VectorIndex.top_k` over chunks, turned
into messages with :func:`~tunaflow_tui.core.memory.fusion.rank_owners`). Without a vector
ranking (no model) the result is the full-text ranking alone, in the same shape.

With an executor, the vector search runs on it while the full-text query runs on the calling
thread (which owns the SQLite connection): numpy and SQLite both release the GIL, so on two cores
the wall time is the slower of the two rather than their sum.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Executor, wait
from typing import TypeVar

from tunaflow_tui.core.memory.fusion import RRF_K, FusedHit, reciprocal_rank_fusion

M = TypeVar("M", bound=Hashable)

FTS = "fts"
VECTOR = "vector"


def hybrid_search(fts: Callable[[], Sequence[M]], vector: Callable[[], Sequence[M]] | None, *,
                  limit: int = 10, k: int = RRF_K, executor: Executor | None = None) -> list[FusedHit[M]]:
    """The top ``limit`` ids of both rankings fused; each hit says which ranking found it (``sources``).

    ``vector`` is None when semantic search is unavailable: the full-text ranking is returned
    as it is. Exceptions of either ranking propagate, after the other has finished.
    """
    if vector is None:
        return reciprocal_rank_fusion({FTS: fts()}, k=k, limit=limit)
    if executor is None:
        return reciprocal_rank_fusion({FTS: fts(), VECTOR: vector()}, k=k, limit=limit)
    pending = executor.submit(vector)
    try:
        fts_ranked = fts()
    except BaseException:
        wait([pending])  # never leave the vector search running behind an error
        raise
    vector_ranked = pending.result()
    return reciprocal_rank_fusion({FTS: fts_ranked, VECTOR: vector_ranked}, k=k, limit=limit)
