"""Vectors as bytes for storage, and an in-memory index searched by cosine similarity.

A stored vector is 384 little-endian float32 values: 1,536 bytes, the same on every machine.
Callers keep the blobs wherever they like (a SQLite BLOB column, a file) next to
:data:`~tunaflow_tui.core.memory.model_files.MODEL_ID`, and rebuild a :class:`VectorIndex` from
``(id, blob)`` pairs at start-up (0.35–1.5 s for 100,000 rows read from SQLite, depending on the
machine's load: off the event loop).

Search is exact (one single-threaded matrix–vector product and a partial sort) below
:data:`EXACT_BELOW` vectors: about 1 ms at 10,000, where exactness matters most. Above it, search is
two-stage: every vector also keeps its signs as bits (384 bits, 48 bytes), the Hamming distance of
those bits to the query's picks :func:`candidate_count` rows, and only those rows are scored by
exact cosine. At 100,000 vectors a top 50 reads 4.8 MB of bits and 4,000 rows of floats instead of
154 MB of floats: about half the CPU time of exact search, with 0.94 of the exact top 50 found on
the benchmark's vectors (bench/search_hybrid.py, bench/RESULTS.md). Scores returned are always
exact cosines; only a hit may be missing.
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

#: Below this many vectors, every search is exact.
EXACT_BELOW = 20_000
#: The bit stage keeps at least this many candidates for the exact stage …
MIN_CANDIDATES = 200
#: … and at least this many per hit asked for.
CANDIDATES_PER_HIT = 80
#: Rows whose bits are computed at once when an index is loaded (bounds the temporary memory).
_BITS_BLOCK = 8192

K = TypeVar("K", bound=Hashable)
FloatArray = NDArray[np.float32]
WordArray = NDArray[np.uint64]


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


def candidate_count(k: int) -> int:
    """How many rows the bit stage hands to exact scoring for a top ``k`` (ties may add up to as many again)."""
    return max(MIN_CANDIDATES, CANDIDATES_PER_HIT * k)


def sign_words(rows: FloatArray) -> WordArray:
    """The sign bits of each row (1 where a value is positive), packed into ``ceil(dim / 64)`` words.

    Shape ``(len(rows), words)``; padding bits are 0 for every row and query alike, so they never
    count in a distance.
    """
    count, dim = rows.shape
    words = -(-dim // 64)
    packed = np.zeros((count, words * 8), dtype=np.uint8)
    packed[:, : -(-dim // 8)] = np.packbits(rows > 0, axis=1)
    packed_words: WordArray = packed.view(np.uint64)
    return packed_words


def _ranked(rows: NDArray[np.intp], scores: FloatArray, k: int) -> NDArray[np.intp]:
    """Positions into ``rows``/``scores`` of the best ``k``: score descending, then row ascending."""
    if k < len(rows):
        keep = np.argpartition(-scores, k - 1)[:k]
        # Every row scoring as the k-th is kept too, so that ties resolve by row, not by partition.
        keep = np.flatnonzero(scores >= scores[keep].min())
    else:
        keep = np.arange(len(rows))
    order: NDArray[np.intp] = keep[np.lexsort((rows[keep], -scores[keep]))][:k]
    return order


@dataclass(frozen=True, slots=True)
class VectorHit(Generic[K]):
    """One search result: the id given when the vector was added, and its cosine to the query."""

    id: K
    score: float


class VectorIndex(Generic[K]):
    """Ids with unit vectors in one contiguous float32 matrix (and their sign bits); cosine top-k.

    Vectors are normalised on the way in, so any non-zero vector may be added. Adding an id that
    is present replaces its vector. Removal moves the last row into the hole (O(1)). The sign bits
    are kept beside the floats as vectors come and go (never rebuilt for a search). Searches of
    an index with fewer than ``exact_below`` vectors are exact; larger ones are approximate (see
    :meth:`top_k`). All methods are thread-safe: a search holds the lock while it reads the
    matrices, so it never sees half of an update (3–5 ms at 100k rows).
    """

    def __init__(self, dim: int = EMBEDDING_DIM, *, exact_below: int | None = None) -> None:
        self._dim = dim
        self._words = -(-dim // 64)
        self._exact_below = EXACT_BELOW if exact_below is None else exact_below
        self._matrix: FloatArray = np.empty((0, dim), dtype=np.float32)
        # One row per 64-bit word, one column per vector: each word is a contiguous array.
        self._bits: WordArray = np.empty((self._words, 0), dtype=np.uint64)
        self._size = 0
        self._ids: list[K] = []
        self._rows: dict[K, int] = {}
        self._lock = threading.RLock()

    @classmethod
    def from_blobs(cls, rows: Iterable[tuple[K, bytes | bytearray | memoryview]],
                   dim: int = EMBEDDING_DIM, *, exact_below: int | None = None) -> VectorIndex[K]:
        """An index of stored ``(id, blob)`` pairs, built with one copy; later duplicates replace earlier.

        Raises :class:`InvalidVector` naming the first id whose blob is malformed.
        """
        index: VectorIndex[K] = cls(dim, exact_below=exact_below)
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
        return cls._of_normalised(index, ids, positions, matrix)

    @classmethod
    def from_normalised(cls, ids: Sequence[K], matrix: FloatArray, *,
                        exact_below: int | None = None) -> VectorIndex[K]:
        """An index of rows already normalised (as :meth:`snapshot` gives them), e.g. read back from a file.

        ``matrix`` is used as it is (no copy, no check): one row per id, ids distinct.
        """
        index: VectorIndex[K] = cls(int(matrix.shape[1]), exact_below=exact_below)
        if not len(ids):
            return index
        keys = list(ids)
        return cls._of_normalised(index, keys, dict(zip(keys, range(len(keys)), strict=True)), matrix)

    @staticmethod
    def _of_normalised(index: VectorIndex[K], ids: list[K], positions: dict[K, int],
                       matrix: FloatArray) -> VectorIndex[K]:
        bits = np.empty((index._words, len(ids)), dtype=np.uint64)
        for start in range(0, len(ids), _BITS_BLOCK):
            bits[:, start:start + _BITS_BLOCK] = sign_words(matrix[start:start + _BITS_BLOCK]).T
        index._matrix = matrix
        index._bits = bits
        index._size = len(ids)
        index._ids = ids
        index._rows = positions
        return index

    @property
    def dim(self) -> int:
        """Dimensions of every vector in the index."""
        return self._dim

    @property
    def exact_below(self) -> int:
        """Indexes with fewer vectors than this are searched exactly."""
        return self._exact_below

    def __len__(self) -> int:
        return self._size

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def ids(self) -> list[K]:
        """The ids in the index (in row order, which removals change)."""
        with self._lock:
            return list(self._ids)

    def snapshot(self) -> tuple[list[K], FloatArray]:
        """The ids and their normalised rows, in the same order (for saving the index).

        The rows are a view, not a copy (100k rows are 146 MiB): valid until the index next changes.
        """
        with self._lock:
            return list(self._ids), self._matrix[: self._size]

    def vector(self, key: K) -> FloatArray:
        """A copy of the (normalised) vector stored for ``key``; KeyError when absent."""
        with self._lock:
            row: FloatArray = self._matrix[self._rows[key]].copy()
        return row

    def add(self, key: K, vector: Sequence[float] | NDArray[np.floating]) -> None:
        """Add or replace the vector of ``key``; raises :class:`InvalidVector`."""
        self.add_many([(key, vector)])

    def add_many(self, items: Iterable[tuple[K, Sequence[float] | NDArray[np.floating]]]) -> None:
        """Add or replace several vectors; validated all first, so a bad one adds none.

        They are searchable as soon as this returns; a search running meanwhile sees all or none.
        """
        pairs = list(items)
        if not pairs:
            return
        block = _normalised_rows(np.stack([as_vector(vector, self._dim) for _key, vector in pairs]))
        block_bits = sign_words(block)
        with self._lock:
            for (key, _vector), row, row_bits in zip(pairs, block, block_bits, strict=True):
                position = self._rows.get(key)
                if position is None:
                    position = self._append_row()
                    self._rows[key] = position
                    self._ids.append(key)
                self._matrix[position] = row
                self._bits[:, position] = row_bits

    def add_blob(self, key: K, blob: bytes | bytearray | memoryview) -> None:
        """Add or replace the vector of ``key`` from its stored form."""
        self.add(key, blob_to_vector(blob, self._dim))

    def _append_row(self) -> int:
        if self._size == self._matrix.shape[0]:
            capacity = max(64, math.ceil(self._matrix.shape[0] * 1.5))
            grown = np.empty((capacity, self._dim), dtype=np.float32)
            grown[: self._size] = self._matrix[: self._size]
            grown_bits = np.empty((self._words, capacity), dtype=np.uint64)
            grown_bits[:, : self._size] = self._bits[:, : self._size]
            self._matrix = grown
            self._bits = grown_bits
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
                self._bits[:, position] = self._bits[:, last]
                self._ids[position] = moved
                self._rows[moved] = position
            self._ids.pop()
            self._size = last
            return True

    def top_k(self, query: Sequence[float] | NDArray[np.floating], k: int,
              min_score: float | None = None, *, exact: bool = False) -> list[VectorHit[K]]:
        """The ``k`` ids most similar to ``query`` by cosine, best first (equal scores in row order).

        With :attr:`exact_below` vectors or more (and ``exact`` False), the search is approximate:
        the :func:`candidate_count` rows whose sign bits are nearest the query's (Hamming
        distance) are scored exactly, and the best ``k`` of those returned. Every score returned is
        the exact cosine; a hit may only be missing, never misplaced among those found.
        ``min_score`` drops hits below it. Raises :class:`InvalidVector` for a malformed or zero query.
        """
        if k <= 0:
            return []
        q = as_vector(query, self._dim)
        norm = float(np.linalg.norm(q))
        if norm == 0.0:
            raise InvalidVector("a zero query vector has no direction to compare")
        q = (q / norm).astype(np.float32)
        wanted = candidate_count(k)
        query_bits = sign_words(q[np.newaxis, :])[0]
        with self._lock:
            size = self._size
            if size == 0:
                return []
            if exact or size < self._exact_below or wanted >= size:
                rows: NDArray[np.intp] = np.arange(size)
                # einsum runs on this thread only. The BLAS product would split even this small
                # matrix–vector product across threads and then wait for a core the UI or the
                # model is using: on a busy 2-core machine, 18 ms instead of 0.9 ms at 10k rows.
                scores: FloatArray = np.einsum("ij,j->i", self._matrix[:size], q)
            else:
                rows = self._nearest_bits(query_bits, size, wanted)
                scores = np.einsum("ij,j->i", self._matrix[rows], q)
            order = _ranked(rows, scores, k)
            hits = [VectorHit(self._ids[int(rows[i])], float(scores[i])) for i in order]
        if min_score is not None:
            hits = [hit for hit in hits if hit.score >= min_score]
        return hits

    def _nearest_bits(self, query_bits: WordArray, size: int, wanted: int) -> NDArray[np.intp]:
        """Rows of the ``wanted`` smallest Hamming distances to ``query_bits``.

        Rows as far as the last one kept come too, up to ``2 × wanted`` in all (first rows first),
        so that ties do not drop a row at random. Call with the lock held.
        """
        # One pass over all the words: a word's bits are contiguous, so the sum is a row-wise add.
        distance = np.bitwise_count(self._bits[:, :size] ^ query_bits[:, np.newaxis]).sum(axis=0, dtype=np.uint16)
        # Distances are small integers: count them, and find the radius holding ``wanted`` rows.
        within = np.cumsum(np.bincount(distance, minlength=self._words * 64 + 1))
        radius = int(np.searchsorted(within, wanted))
        inside = np.flatnonzero(distance < radius)
        edge = np.flatnonzero(distance == radius)[: 2 * wanted - len(inside)]
        nearest: NDArray[np.intp] = np.concatenate((inside, edge))
        return nearest
