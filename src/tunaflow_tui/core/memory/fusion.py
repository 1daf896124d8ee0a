"""Reciprocal rank fusion: one ranking out of several (full-text, vectors, …) without comparing scores.

bm25 scores and cosines live on different scales; RRF only looks at positions. An id at rank
``r`` (1-based) in a list earns ``weight / (k + r)``; its fused score is the sum over the lists
that have it. ``k = 60`` is the usual constant: it keeps one list's top hit from drowning
what several lists agree on.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
P = TypeVar("P", bound=Hashable)

RRF_K = 60


@dataclass(frozen=True, slots=True)
class FusedHit(Generic[K]):
    """An id with its fused score and its 1-based rank in each list that contributed."""

    id: K
    score: float
    ranks: Mapping[str, int]

    @property
    def sources(self) -> tuple[str, ...]:
        """Names of the lists that have this id, in the order the lists were given."""
        return tuple(self.ranks)


def reciprocal_rank_fusion(rankings: Mapping[str, Sequence[K]] | Sequence[Sequence[K]], *, k: int = RRF_K,
                           weights: Mapping[str, float] | None = None,
                           limit: int | None = None) -> list[FusedHit[K]]:
    """Fuse ranked id lists (best first) into one, best first.

    ``rankings`` maps a name (say ``"fts"``, ``"vector"``) to its list; a plain sequence of lists
    is named ``"0"``, ``"1"``, …. An id repeated within one list counts at its first position.
    Equal scores are ordered by the better single rank, then by first appearance (earlier list,
    earlier position), so the result never depends on hashing. ``weights`` scale a list's
    contribution (default 1). ``limit`` keeps the first ``limit`` hits.
    """
    if k < 0:
        raise ValueError("k must not be negative")
    named: Mapping[str, Sequence[K]] = (rankings if isinstance(rankings, Mapping)
                                        else {str(i): ranked for i, ranked in enumerate(rankings)})
    scores: dict[K, float] = {}
    ranks: dict[K, dict[str, int]] = {}
    first_seen: dict[K, int] = {}
    for name, ranked in named.items():
        weight = 1.0 if weights is None else float(weights.get(name, 1.0))
        for position, item in enumerate(ranked, start=1):
            item_ranks = ranks.setdefault(item, {})
            if name in item_ranks:
                continue
            item_ranks[name] = position
            first_seen.setdefault(item, len(first_seen))
            scores[item] = scores.get(item, 0.0) + weight / (k + position)
    order = sorted(scores, key=lambda item: (-scores[item], min(ranks[item].values()), first_seen[item]))
    if limit is not None:
        order = order[: max(limit, 0)]
    return [FusedHit(item, scores[item], ranks[item]) for item in order]


def rank_owners(ranked: Iterable[K], owner: Callable[[K], P]) -> list[P]:
    """Turn a ranking of parts into a ranking of their owners (each at its best part's position).

    For chunk hits: ``rank_owners(chunk_ids, message_of)`` gives message ids, so that a message
    with several matching chunks takes one place in the fusion rather than crowding it.
    """
    owners: list[P] = []
    seen: set[P] = set()
    for part in ranked:
        parent = owner(part)
        if parent not in seen:
            seen.add(parent)
            owners.append(parent)
    return owners
