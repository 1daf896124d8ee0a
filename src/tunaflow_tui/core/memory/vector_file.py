"""A project's chunk vectors saved as one flat file, so a worker starting cold reads them in milliseconds.

Reading 100,000 vector blobs back from SQLite costs over a second of CPU; the same rows saved as
raw float32 (already normalised) load with one read. The file lives in the project's state folder
(``.tunaflow/vectors.bin``) and is only ever a copy: the database stays the truth.

Layout (little-endian): a 128-byte header (magic, dimensions, row count, highest chunk id, model
id), then ``count`` int64 chunk ids, then ``count × dim`` float32 rows. It is written to a temporary
file and renamed over the old one, so a crash mid-write leaves the old file or none. On load it
must match the model, have exactly the size its header announces, and the database must still
hold as many chunk rows with ids up to the file's highest one as when it was written (an edit or
deletion changes that: the file is then ignored and rebuilt). Chunks stored after it was written have higher ids (the
table's ids are never reused): the caller reads only those from the database.
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

FILE_NAME = "vectors.bin"
_MAGIC = b"TFVECS01"
_HEADER = struct.Struct("<8sIQqQ88s")  # magic, dim, count, highest id, chunk rows, model id (utf-8)
HEADER_BYTES = 128
_TEMP_PREFIX = ".vectors-"
_TEMP_SUFFIX = ".tmp"
assert _HEADER.size <= HEADER_BYTES


class SavedVectors:
    """Chunk ids and their normalised float32 rows, as read back from a vector file."""

    __slots__ = ("ids", "matrix", "max_id")

    def __init__(self, ids: list[int], matrix: NDArray[np.float32], max_id: int) -> None:
        self.ids = ids
        self.matrix = matrix
        self.max_id = max_id


def save_vectors(path: Path, model_id: str, ids: Sequence[int], matrix: NDArray[np.float32],
                 count_up_to: Callable[[int], int]) -> None:
    """Write ``ids`` and their rows to ``path`` atomically (a temporary file renamed over it).

    One writer at a time (the worker holding the project's lock): temporary files left by a
    killed one are removed first.

    ``count_up_to(max_id)`` is the database's count of chunk rows of the model with ids up to the
    highest of ``ids`` (with a vector or not), which :func:`load_vectors` checks again.
    """
    count, dim = (len(ids), int(matrix.shape[1]))
    if matrix.shape[0] != count:
        raise ValueError("one row per id is needed")
    max_id = max(ids) if count else 0
    rows = count_up_to(max_id)
    header = _HEADER.pack(_MAGIC, dim, count, max_id, rows, model_id.encode()[:88]).ljust(HEADER_BYTES, b"\0")
    for orphan in path.parent.glob(_TEMP_PREFIX + "*" + _TEMP_SUFFIX):  # left by a writer that was killed
        orphan.unlink(missing_ok=True)
    fd, temp = tempfile.mkstemp(prefix=_TEMP_PREFIX, suffix=_TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(header)
            out.write(np.asarray(ids, dtype="<i8").tobytes())
            out.write(np.ascontiguousarray(matrix, dtype="<f4").tobytes())
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def load_vectors(path: Path, model_id: str, dim: int, count_up_to: Callable[[int], int]) -> SavedVectors | None:
    """The saved vectors at ``path`` if they are whole and still current, else None.

    ``count_up_to(max_id)`` asks the database how many chunk rows of the model it holds with ids up
    to ``max_id`` (as for :func:`save_vectors`); a different count than when the file was written
    means chunks were edited or deleted since.
    """
    try:
        with path.open("rb") as src:
            head = src.read(HEADER_BYTES)
            if len(head) != HEADER_BYTES:
                return None
            magic, file_dim, count, max_id, rows, model = _HEADER.unpack_from(head)
            if (magic != _MAGIC or file_dim != dim or model.rstrip(b"\0") != model_id.encode()[:88]
                    or os.fstat(src.fileno()).st_size != HEADER_BYTES + count * (8 + 4 * dim)):
                return None
            if count_up_to(max_id) != rows:
                return None
            ids = np.fromfile(src, dtype="<i8", count=count)
            matrix = np.fromfile(src, dtype="<f4", count=count * dim).reshape(count, dim)
    except (OSError, ValueError, struct.error):
        return None
    if len(ids) != count or matrix.shape[0] != count:
        return None
    return SavedVectors(ids.tolist(), matrix.astype(np.float32, copy=False), max_id)
