"""Vectors as bytes for storage, and an in-memory index searched by cosine similarity.

A stored vector is 384 little-endian float32 values: 1,536 bytes, the same on every machine.
Callers keep the blobs wherever they like (a SQLite BLOB column, a file) next to
:data:`~tunaflow_tui.core.memory.model_files.MODEL_ID`, and rebuild a :class:`VectorIndex` from
``(id, blob)`` pairs at start-up (about 0.35 s for 100,000 rows read from SQLite).

Search is brute force: one single-threaded matrix–vector product and a partial sort, about 8 ms
for 100,000 vectors, which is below the cost of embedding the query itself.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from tunaflow_tui.core.memory.model_files import EMBEDDING_DIM

VECTOR_DTYPE = np.dtype("<f4")
VECTOR_BYTES = EMBEDDING_DIM * VECTOR_DTYPE.itemsize

K = TypeVar("K", bound=Hashable)
FloatArray = NDArray[np.float32]


class InvalidVector(ValueError):
    """A vector or blob of the wrong size, with non-finite values, or of zero length."""


def as_vector(values: Sequence[float] | NDArray[np.floating], dim: int = EMBEDDING_DIM) -> FloatArray:
    """``values`` as a finite float32 array of shape ``(dim,)``; raises :class:`InvalidVector`."""
    array = np.asarray(values, dtype=np.float32)
    if array.shape != (dim,):
        raise InvalidVector(f"expected a vector of shape ({dim},), got {array.shape}")
    if not np.isfinite(array).all():
        raise InvalidVector("the vector has NaN or infinite values")
    return array


def vector_to_blob(values: Sequence[float] | NDArray[np.floating], dim: int = EMBEDDING_DIM) -> bytes:
    """The storage form: ``dim`` little-endian float32 values (1,536 bytes for 384 dimensions)."""
    return as_vector(values, dim).astype(VECTOR_DTYPE, copy=False).tobytes()


def blob_to_vector(blob: bytes | bytearray | memoryview, dim: int = EMBEDDING_DIM) -> FloatArray:
    """A stored blob back as a float32 array of shape ``(dim,)``; raises :class:`InvalidVector`."""
    expected = dim * VECTOR_DTYPE.itemsize
    if len(blob) != expected:
        raise InvalidVector(f"a stored vector must be {expected} bytes, got {len(blob)}")
    array = np.frombuffer(blob, dtype=VECTOR_DTYPE).astype(np.float32)
    if not np.isfinite(array).all():
        raise InvalidVector("the stored vector has NaN or infinite values")
    return array


def _normalised_rows(matrix: FloatArray) -> FloatArray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        raise InvalidVector("a zero vector has no direction to compare")
    normalised: FloatArray = (matrix / norms).astype(np.float32, copy=False)
    return normalised


@dataclass(frozen=True, slots=True)
class VectorHit(Generic[K]):
    """One search result: the id given when the vector was added, and its cosine to the query."""

    id: K
    score: float


class VectorIndex(Generic[K]):
    """Ids with unit vectors in one contiguous float32 matrix; cosine top-k by brute force.

    Vectors are normalised on the way in, so any non-zero vector may be added. Adding an id that
    is present replaces its vector. Removal moves the last row into the hole (O(1)). All methods
    are thread-safe; a search holds the lock for its matrix product (about 8 ms at 100k rows).
    """

    def __init__(self, dim: int = EMBEDDING_DIM) -> None:
        self._dim = dim
        self._matrix: FloatArray = np.empty((0, dim), dtype=np.float32)
        self._size = 0
        self._ids: list[K] = []
        self._rows: dict[K, int] = {}
        self._lock = threading.RLock()

    @classmethod
    def from_blobs(cls, rows: Iterable[tuple[K, bytes | bytearray | memoryview]],
                   dim: int = EMBEDDING_DIM) -> VectorIndex[K]:
        """An index of stored ``(id, blob)`` pairs, built with one copy; later duplicates replace earlier.

        Raises :class:`InvalidVector` naming the first id whose blob is malformed.
        """
        index: VectorIndex[K] = cls(dim)
        expected = dim * VECTOR_DTYPE.itemsize
        ids: list[K] = []
        blobs: list[bytes] = []
        positions: dict[K, int] = {}
        for key, blob in rows:
            if len(blob) != expected:
                raise InvalidVector(f"the stored vector of {key!r} is {len(blob)} bytes, not {expected}")
            data = blob if isinstance(blob, bytes) else bytes(blob)
            if key in positions:
                blobs[positions[key]] = data
                continue
            positions[key] = len(ids)
            ids.append(key)
            blobs.append(data)
        if not ids:
            return index
        joined = b"".join(blobs)
        del blobs
        # One writable copy, normalised in place: 100k rows are 146 MiB, so no second copy.
        matrix = np.frombuffer(joined, dtype=VECTOR_DTYPE).reshape(len(ids), dim).astype(np.float32, copy=True)
        del joined
        finite = np.isfinite(matrix).all(axis=1)
        if not finite.all():
            raise InvalidVector(f"the stored vector of {ids[int(np.argmin(finite))]!r} has NaN or infinite values")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        zero = norms[:, 0] == 0
        if zero.any():
            raise InvalidVector(f"the stored vector of {ids[int(np.argmax(zero))]!r} is all zeros")
        matrix /= norms
        index._matrix = matrix
        index._size = len(ids)
        index._ids = ids
        index._rows = positions
        return index

    @property
    def dim(self) -> int:
        """Dimensions of every vector in the index."""
        return self._dim

    def __len__(self) -> int:
        return self._size

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def ids(self) -> list[K]:
        """The ids in the index (in row order, which removals change)."""
        with self._lock:
            return list(self._ids)

    def vector(self, key: K) -> FloatArray:
        """A copy of the (normalised) vector stored for ``key``; KeyError when absent."""
        with self._lock:
            row: FloatArray = self._matrix[self._rows[key]].copy()
        return row

    def add(self, key: K, vector: Sequence[float] | NDArray[np.floating]) -> None:
        """Add or replace the vector of ``key``; raises :class:`InvalidVector`."""
        self.add_many([(key, vector)])

    def add_many(self, items: Iterable[tuple[K, Sequence[float] | NDArray[np.floating]]]) -> None:
        """Add or replace several vectors; validated all first, so a bad one adds none."""
        pairs = list(items)
        if not pairs:
            return
        block = _normalised_rows(np.stack([as_vector(vector, self._dim) for _key, vector in pairs]))
        with self._lock:
            for (key, _vector), row in zip(pairs, block, strict=True):
                position = self._rows.get(key)
                if position is None:
                    position = self._append_row()
                    self._rows[key] = position
                    self._ids.append(key)
                self._matrix[position] = row

    def add_blob(self, key: K, blob: bytes | bytearray | memoryview) -> None:
        """Add or replace the vector of ``key`` from its stored form."""
        self.add(key, blob_to_vector(blob, self._dim))

    def _append_row(self) -> int:
        if self._size == self._matrix.shape[0]:
            capacity = max(64, math.ceil(self._matrix.shape[0] * 1.5))
            grown = np.empty((capacity, self._dim), dtype=np.float32)
            grown[: self._size] = self._matrix[: self._size]
            self._matrix = grown
        self._size += 1
        return self._size - 1

    def remove(self, key: K) -> bool:
        """Drop ``key``; False when it was not there."""
        with self._lock:
            position = self._rows.pop(key, None)
            if position is None:
                return False
            last = self._size - 1
            if position != last:
                moved = self._ids[last]
                self._matrix[position] = self._matrix[last]
                self._ids[position] = moved
                self._rows[moved] = position
            self._ids.pop()
            self._size = last
            return True

    def top_k(self, query: Sequence[float] | NDArray[np.floating], k: int,
              min_score: float | None = None) -> list[VectorHit[K]]:
        """The ``k`` ids most similar to ``query`` by cosine, best first (equal scores in row order).

        ``min_score`` drops hits below it. Raises :class:`InvalidVector` for a malformed or zero query.
        """
        if k <= 0:
            return []
        q = as_vector(query, self._dim)
        norm = float(np.linalg.norm(q))
        if norm == 0.0:
            raise InvalidVector("a zero query vector has no direction to compare")
        q = (q / norm).astype(np.float32)
        with self._lock:
            size = self._size
            if size == 0:
                return []
            # einsum runs on this thread only. The BLAS product would split even this small
            # matrix–vector product across threads and then wait for a core the UI or the model
            # is using: on a busy 2-core machine, 18 ms instead of 0.9 ms at 10k rows.
            scores = np.einsum("ij,j->i", self._matrix[:size], q)
            candidates = np.argpartition(-scores, k - 1)[:k] if k < size else np.arange(size)
            # Sort by score descending, then by row, so equal scores come out in a stable order.
            order = candidates[np.lexsort((candidates, -scores[candidates]))]
            hits = [VectorHit(self._ids[int(row)], float(scores[row])) for row in order]
        if min_score is not None:
            hits = [hit for hit in hits if hit.score >= min_score]
        return hits
