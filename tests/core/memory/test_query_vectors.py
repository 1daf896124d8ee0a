"""Query vectors: each text embedded once, started early on a worker thread, never before the model loads."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.query_vectors import QueryVectors

QUESTION = "why did the nightly build break after the dependency upgrade?"


def test_a_text_asked_for_by_many_threads_at_once_is_embedded_once(embedder: Embedder) -> None:
    vectors = QueryVectors(embedder)
    results: list[np.ndarray] = []
    barrier = threading.Barrier(6)

    def ask() -> None:
        barrier.wait()
        found = vectors.get(QUESTION)
        assert found is not None
        results.append(found)

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(results) == 6 and vectors.computed == 1
    assert all(np.array_equal(result, results[0]) for result in results)
    assert np.allclose(results[0], embedder.embed_one(QUESTION), atol=1e-6)


def test_a_started_text_is_waited_for_not_embedded_again(embedder: Embedder) -> None:
    vectors = QueryVectors(embedder, remembered=2)
    vectors.start(QUESTION)
    vectors.start(QUESTION)
    assert vectors.get(QUESTION) is not None and vectors.computed == 1
    vectors.get("second text")
    vectors.get("third text")  # only the two latest are remembered
    assert vectors.get(QUESTION) is not None and vectors.computed == 4
    vectors.close()
    vectors.start("after close")  # nothing starts once closed; asking still answers, on this thread
    assert vectors.get("after close") is not None and vectors.computed == 5


def test_without_a_model_or_before_it_loads_nothing_is_embedded(tmp_path: Path) -> None:
    assert QueryVectors(None).get(QUESTION) is None
    missing = Embedder(env={"TUNAFLOW_EMBEDDING_MODEL": str(tmp_path / "none.onnx")})
    vectors = QueryVectors(missing)
    vectors.start(QUESTION)
    assert vectors.get(QUESTION) is None and vectors.computed == 0
    unloaded = QueryVectors(Embedder(env={}))
    unloaded.start(QUESTION)  # the model is not loaded: a turn never waits for it to load
    assert unloaded.get(QUESTION, load=False) is None and unloaded.computed == 0
