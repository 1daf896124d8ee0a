"""Approximate vector search: sign bits pick candidates, exact cosine ranks them.

Thresholds are lowered through ``exact_below`` so that a few thousand vectors take the
approximate path (the default switches at 20,000).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tunaflow_tui.core.memory.project_search import ProjectSearch
from tunaflow_tui.core.memory.vectors import (
    VectorIndex,
    candidate_count,
    sign_words,
    vector_to_blob,
)
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.chunk_store import ChunkToSave

DIM = 384


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def clustered(rng: np.random.Generator, count: int, clusters: int = 40, spread: float = 0.6) -> np.ndarray:
    """Unit vectors around ``clusters`` random centres (like embeddings of a few topics)."""
    centres = unit(rng.standard_normal((clusters, DIM)))
    noise = rng.standard_normal((count, DIM)).astype(np.float32) * spread / np.sqrt(DIM)
    return unit(centres[rng.integers(clusters, size=count)] + noise)


def exact_ids(rows: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    scores = rows @ unit(query)
    return [int(i) for i in np.lexsort((np.arange(len(rows)), -scores))[:k]]


def test_the_bits_are_the_signs_packed_in_64_bit_words() -> None:
    row = np.zeros((1, 70), dtype=np.float32) - 1
    row[0, [0, 63, 64, 69]] = 0.5
    words = sign_words(row)
    assert words.shape == (1, 2) and words.dtype == np.uint64
    assert [int(np.bitwise_count(w)) for w in words[0]] == [2, 2]  # padding bits are 0
    distance = np.bitwise_count(words ^ sign_words(-row)).sum()
    assert distance == 70  # every sign differs, none of the padding


def test_below_the_threshold_search_is_exact() -> None:
    rng = np.random.default_rng(1)
    rows = clustered(rng, 900)
    index: VectorIndex[int] = VectorIndex(exact_below=1_000)
    index.add_many(enumerate(rows))
    for query in clustered(rng, 25):
        for k in (1, 10, 50):
            hits = index.top_k(query, k)
            assert [h.id for h in hits] == exact_ids(rows, query, k)
            assert hits == index.top_k(query, k, exact=True)


def test_above_the_threshold_the_bits_choose_what_is_scored() -> None:
    # The row nearest by cosine has every sign but one opposite to the query's, the others share
    # most of the query's signs yet point away from it: only exact search finds the first.
    query = np.full(DIM, 1.0, dtype=np.float32)
    far_signs = np.full(DIM, -0.001, dtype=np.float32)
    far_signs[0] = 1.0
    rng = np.random.default_rng(2)
    decoys = np.abs(rng.standard_normal((600, DIM))).astype(np.float32) * 0.1
    decoys[:, : DIM // 3] = -1.0  # large and negative: cosine below zero, 2/3 of the signs agree
    rows = np.vstack([far_signs, decoys])
    small: VectorIndex[int] = VectorIndex(exact_below=10_000)
    large: VectorIndex[int] = VectorIndex(exact_below=100)
    for index in (small, large):
        index.add_many(enumerate(rows))
    assert small.top_k(query, 1)[0].id == 0
    assert large.top_k(query, 1, exact=True)[0].id == 0
    approximate = large.top_k(query, 1)
    assert approximate[0].id != 0 and approximate[0].score < 0 < small.top_k(query, 1)[0].score


def test_approximate_search_recalls_the_exact_top_10_on_clustered_vectors() -> None:
    rng = np.random.default_rng(3)
    rows = clustered(rng, 5_000)
    index: VectorIndex[int] = VectorIndex(exact_below=1_000)
    index.add_many(enumerate(rows))
    assert candidate_count(10) <= len(rows) // 5  # a real first stage, not the whole index
    found = 0
    targets = rng.choice(len(rows), size=40, replace=False)
    for target in targets:
        # A query beside one stored vector: that vector is unambiguously the nearest.
        query = unit(rows[target] + rng.standard_normal(DIM).astype(np.float32) * 0.2 / np.sqrt(DIM))
        expected = exact_ids(rows, query, 10)
        hits = index.top_k(query, 10)
        assert expected[0] == target and hits[0].id == target
        assert all(abs(h.score - float(rows[h.id] @ query)) < 1e-5 for h in hits)  # exact scores
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        found += len({h.id for h in hits} & set(expected))
    assert found / (10 * len(targets)) >= 0.95


def test_adds_replacements_and_removals_are_searchable_at_once() -> None:
    rng = np.random.default_rng(4)
    rows = clustered(rng, 3_000)
    index: VectorIndex[int] = VectorIndex.from_blobs(((i, vector_to_blob(r)) for i, r in enumerate(rows)),
                                                     exact_below=1_000)
    fresh = unit(rng.standard_normal(DIM).astype(np.float32))
    index.add(10_000, fresh)
    assert index.top_k(fresh, 1)[0].id == 10_000
    index.add(5, -fresh)  # replaced: found at its new place, not at its old one
    assert index.top_k(-fresh, 1)[0].id == 5
    assert 5 not in {h.id for h in index.top_k(rows[5], 20)}
    index.remove(10_000)
    assert 10_000 not in {h.id for h in index.top_k(fresh, 50)}
    # Removing a row moves the last row into its hole: its bits must move with it (the hole's
    # own bits are as far from the moved vector as bits can be).
    other = unit(rng.standard_normal(DIM).astype(np.float32))
    index.add(17, -other)
    index.add(30_000, other)  # the last row
    index.remove(17)
    hit = index.top_k(other, 1)[0]
    assert hit.id == 30_000 and hit.score > 0.999
    assert 17 not in {h.id for h in index.top_k(-other, 20)}
    for _ in range(400):  # growth past the loaded capacity keeps the bits beside the floats
        index.add(20_000 + _, unit(rng.standard_normal(DIM).astype(np.float32)))
    assert index.top_k(index.vector(20_399), 1)[0].id == 20_399
    assert all(index.top_k(rows[i], 1)[0].id == i for i in (2_500, 2_900, 2_998))


def test_ties_keep_row_order_and_k_beyond_the_index_returns_everything() -> None:
    rng = np.random.default_rng(5)
    rows = clustered(rng, 1_500)
    same = rows[0]
    rows[::3] = same  # 500 rows with the same vector: equal scores, equal bits
    index: VectorIndex[int] = VectorIndex(exact_below=100)
    index.add_many(enumerate(rows))
    hits = index.top_k(same, 10)
    assert [h.id for h in hits] == list(range(0, 30, 3))
    assert hits == index.top_k(same, 10, exact=True)
    everything = index.top_k(same, 5_000)
    assert len(everything) == 1_500 and everything == index.top_k(same, 5_000, exact=True)
    small: VectorIndex[int] = VectorIndex(exact_below=100)
    small.add_many(enumerate(rows[:150]))
    assert [h.id for h in small.top_k(same, 200)] == [h.id for h in small.top_k(same, 200, exact=True)]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    project = tmp_path / "proj"
    project.mkdir()
    with Store.open(project) as opened:
        yield opened


def test_a_deleted_or_rewritten_message_is_never_found_by_its_old_vector(store: Store) -> None:
    rng = np.random.default_rng(6)
    rows = clustered(rng, 450, clusters=20)
    per_message = 25  # 18 messages of 25 chunks: 450 vectors, above the lowered threshold
    message_ids = []
    for i in range(len(rows) // per_message):
        text = f"note {i} " * per_message
        message = store.add_message("main", "assistant", text)
        chunks = [ChunkToSave(j, j, j + 1, vector_to_blob(rows[i * per_message + j])) for j in range(per_message)]
        store.save_message_chunks(message.id, text, "test-model", chunks)
        message_ids.append(message.id)
    search = ProjectSearch(store, None, model_id="test-model", exact_below=50)
    assert candidate_count(3) < len(rows)  # the approximate path

    def found(vector: np.ndarray) -> list[int]:
        return [message for _chunk, message, _score in search.vector_chunks(vector, 3, exclude=(),
                                                                            conversations=None)]

    deleted, rewritten = message_ids[7], message_ids[9]
    assert found(rows[7 * per_message + 3])[0] == deleted
    store.delete_message(deleted)
    assert deleted not in found(rows[7 * per_message + 3])
    # Rewritten: new chunks (new ids, a new vector) handed over as the indexer does.
    text = "a rewritten note"
    store.update_message(rewritten, content=text)
    fresh = unit(rng.standard_normal(DIM).astype(np.float32))
    ids = store.save_message_chunks(rewritten, text, "test-model", [ChunkToSave(0, 0, len(text), vector_to_blob(fresh))])
    assert ids is not None
    search.add_chunks(ids, [rewritten], fresh[np.newaxis, :])
    assert search.vector_chunks(fresh, 1, exclude=(), conversations=None)[0][:2] == (ids[0], rewritten)
    assert rewritten not in found(rows[9 * per_message + 3])
