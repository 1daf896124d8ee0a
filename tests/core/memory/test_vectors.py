"""Vector blobs and the cosine index: exact storage format, validation, and top-k against brute force."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tunaflow_tui.core.memory.vectors import (
    VECTOR_BYTES,
    InvalidVector,
    VectorIndex,
    blob_to_vector,
    vector_to_blob,
)

DIM = 384


def unit_rows(rng: np.random.Generator, count: int, dim: int = DIM) -> np.ndarray:
    rows = rng.standard_normal((count, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_blob_is_384_little_endian_float32_values() -> None:
    values = [i / 7 - 20 for i in range(DIM)]
    blob = vector_to_blob(values)
    assert len(blob) == VECTOR_BYTES == 1536
    assert blob == struct.pack("<384f", *values)
    assert np.array_equal(blob_to_vector(blob), np.array(values, dtype=np.float32))
    big_endian = np.array(values, dtype=">f4")
    assert vector_to_blob(big_endian) == blob  # the byte order of the input does not leak into storage


@pytest.mark.parametrize("blob", [b"", b"\x00" * 1535, b"\x00" * 1537, b"\x00" * 768])
def test_blobs_of_the_wrong_size_are_rejected(blob: bytes) -> None:
    with pytest.raises(InvalidVector, match="1536 bytes"):
        blob_to_vector(blob)


def test_non_finite_and_misshapen_vectors_are_rejected() -> None:
    with pytest.raises(InvalidVector, match="NaN"):
        vector_to_blob([float("nan")] + [0.0] * (DIM - 1))
    with pytest.raises(InvalidVector, match="shape"):
        vector_to_blob([1.0] * 383)
    with pytest.raises(InvalidVector, match="NaN"):
        blob_to_vector(struct.pack("<384f", float("inf"), *([0.0] * 383)))


def test_top_k_finds_the_nearest_by_cosine_best_first() -> None:
    rng = np.random.default_rng(7)
    rows = unit_rows(rng, 50)
    index: VectorIndex[str] = VectorIndex()
    index.add_many((f"chunk-{i}", row * (i + 1)) for i, row in enumerate(rows))  # lengths do not matter
    hits = index.top_k(rows[13] + 0.01 * rows[2], 3)
    assert hits[0].id == "chunk-13" and hits[0].score > 0.99
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(index.top_k(rows[0], 500)) == 50
    assert index.top_k(rows[0], 0) == []


def test_min_score_drops_weak_hits() -> None:
    index: VectorIndex[int] = VectorIndex(dim=3)
    index.add_many([(1, [1, 0, 0]), (2, [0.8, 0.6, 0]), (3, [0, 1, 0]), (4, [-1, 0, 0])])
    hits = index.top_k([1, 0, 0], 4, min_score=0.5)
    assert [(h.id, round(h.score, 3)) for h in hits] == [(1, 1.0), (2, 0.8)]


def test_add_replaces_and_remove_keeps_the_rest_searchable() -> None:
    index: VectorIndex[int] = VectorIndex(dim=3)
    index.add_many([(1, [1, 0, 0]), (2, [0, 1, 0]), (3, [0, 0, 1])])
    index.add(1, [0, 0, -1])  # replaced, not duplicated
    assert len(index) == 3 and index.top_k([0, 0, -1], 1)[0].id == 1
    assert index.remove(1) and not index.remove(1) and 1 not in index
    assert len(index) == 2 and sorted(index.ids()) == [2, 3]
    assert index.top_k([0, 0, 1], 1)[0].id == 3  # the row moved into the hole is found under its id
    assert np.allclose(index.vector(3), [0, 0, 1])


def test_an_invalid_vector_in_a_batch_adds_nothing() -> None:
    index: VectorIndex[int] = VectorIndex(dim=3)
    with pytest.raises(InvalidVector):
        index.add_many([(1, [1, 0, 0]), (2, [0, 0, 0])])
    assert len(index) == 0
    with pytest.raises(InvalidVector):
        index.top_k([0, 0, 0], 1)


def test_an_index_loads_from_stored_blobs() -> None:
    rng = np.random.default_rng(3)
    rows = unit_rows(rng, 20)
    stored = [(i, vector_to_blob(row)) for i, row in enumerate(rows)] + [(5, vector_to_blob(rows[0]))]
    index = VectorIndex.from_blobs(iter(stored))
    assert len(index) == 20
    assert {h.id for h in index.top_k(rows[0], 2)} == {0, 5}  # the later blob of id 5 replaced the first
    index.add(99, rows[9])  # still growable after a bulk load
    assert len(index) == 21
    assert len(VectorIndex.from_blobs([])) == 0


def test_a_malformed_stored_blob_names_its_id() -> None:
    good = vector_to_blob([1.0] * DIM)
    with pytest.raises(InvalidVector, match="'message-7'"):
        VectorIndex.from_blobs([("message-6", good), ("message-7", good[:-4])])
    with pytest.raises(InvalidVector, match="'zero'"):
        VectorIndex.from_blobs([("ok", good), ("zero", b"\x00" * VECTOR_BYTES)])


# Coarse non-zero values: repeated rows and equal scores (ties) are common.
_COMPONENT = st.integers(0, 20).map(lambda i: (i - 10.5) / 10)


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(np.float32, st.tuples(st.integers(1, 60), st.just(8)), elements=_COMPONENT),
    hnp.arrays(np.float32, (8,), elements=_COMPONENT),
    st.integers(1, 70),
)
def test_top_k_agrees_with_a_full_sort(rows: np.ndarray, query: np.ndarray, k: int) -> None:
    index: VectorIndex[int] = VectorIndex(dim=8)
    index.add_many(enumerate(rows))
    hits = index.top_k(query, k)
    normalised = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    expected = np.sort(normalised @ (query / np.linalg.norm(query)))[::-1][:k]
    assert np.allclose([h.score for h in hits], expected, atol=1e-5)
    for hit in hits:  # each id carries its own score, whatever ties did to the order
        assert abs(float(normalised[hit.id] @ (query / np.linalg.norm(query))) - hit.score) < 1e-5


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "remove"]), st.integers(0, 15)), max_size=80))
def test_adds_and_removes_in_any_order_match_a_plain_dict(operations: list[tuple[str, int]]) -> None:
    rng = np.random.default_rng(11)
    vectors = unit_rows(rng, 16, dim=4)
    index: VectorIndex[int] = VectorIndex(dim=4)
    model: dict[int, np.ndarray] = {}
    for op, key in operations:
        if op == "add":
            index.add(key, vectors[key])
            model[key] = vectors[key]
        else:
            assert index.remove(key) == (model.pop(key, None) is not None)
    assert sorted(index.ids()) == sorted(model)
    for key, vector in model.items():
        assert index.top_k(vector, 1)[0].id == key
