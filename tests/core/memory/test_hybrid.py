"""Hybrid search: both rankings fused, FTS alone without a model, the vector search beside the FTS query."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from tunaflow_tui.core.memory.hybrid import hybrid_search


@pytest.fixture
def executor() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool


def test_both_rankings_are_fused_and_say_where_each_hit_came_from() -> None:
    hits = hybrid_search(lambda: [3, 1, 2], lambda: [1, 4])
    assert [hit.id for hit in hits] == [1, 3, 4, 2]
    assert hits[0].sources == ("fts", "vector") and hits[1].sources == ("fts",) and hits[2].sources == ("vector",)


def test_without_a_model_the_full_text_ranking_comes_back_as_is() -> None:
    hits = hybrid_search(lambda: [7, 5, 9], None, limit=2)
    assert [hit.id for hit in hits] == [7, 5] and all(hit.sources == ("fts",) for hit in hits)


def test_the_vector_search_runs_beside_the_full_text_query(executor: ThreadPoolExecutor) -> None:
    both_running = threading.Barrier(2, timeout=10)

    def fts() -> list[int]:
        both_running.wait()  # would time out if the vector search waited for this to finish
        return [1, 2]

    def vector() -> list[int]:
        both_running.wait()
        return [2, 3]

    hits = hybrid_search(fts, vector, executor=executor)
    assert [hit.id for hit in hits] == [2, 1, 3]
    assert hits == hybrid_search(lambda: [1, 2], lambda: [2, 3])


def test_an_error_waits_for_the_other_search_then_propagates(executor: ThreadPoolExecutor) -> None:
    fts_failed, release_vector = threading.Event(), threading.Event()
    outcome: list[BaseException] = []

    def vector() -> list[int]:
        release_vector.wait(timeout=30)
        return [1]

    def fts() -> list[int]:
        fts_failed.set()
        raise RuntimeError("database is locked")

    def search() -> None:
        try:
            hybrid_search(fts, vector, executor=executor)
        except BaseException as exc:  # checked below
            outcome.append(exc)

    caller = threading.Thread(target=search)
    caller.start()
    assert fts_failed.wait(timeout=30)
    caller.join(timeout=0.2)
    assert caller.is_alive(), "returned while the vector search was still running"
    release_vector.set()
    caller.join(timeout=30)
    assert len(outcome) == 1 and isinstance(outcome[0], RuntimeError)
    with pytest.raises(ValueError):
        hybrid_search(lambda: [1], lambda: (_ for _ in ()).throw(ValueError("bad vector")), executor=executor)


@pytest.mark.parametrize("way", ["fts only", "in turn", "beside"])
def test_k_and_limit_reach_the_fusion_whichever_way_it_runs(way: str, executor: ThreadPoolExecutor) -> None:
    vector = None if way == "fts only" else (lambda: [1, 4])
    pool = executor if way == "beside" else None
    hits = hybrid_search(lambda: [3, 1, 2], vector, k=0, limit=2, executor=pool)
    expected = [(3, 1.0), (1, 1 / 2)] if way == "fts only" else [(1, 1 / 2 + 1.0), (3, 1.0)]
    assert [(hit.id, hit.score) for hit in hits] == [(i, pytest.approx(s)) for i, s in expected]
    assert len(hybrid_search(lambda: list(range(30)), vector, executor=pool)) == 10, "ten hits unless told"
