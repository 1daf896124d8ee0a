"""The embedding worker's saved vector file: used when current, ignored when stale or torn, never wrong."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tunaflow_tui.core.memory.model_files import EMBEDDING_DIM, MODEL_ID
from tunaflow_tui.core.memory.vector_file import FILE_NAME, load_vectors
from tunaflow_tui.core.memory.vectors import vector_to_blob
from tunaflow_tui.core.memory.worker import _ProjectVectors
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.chunk_store import ChunkToSave


def _axis(n: int) -> np.ndarray:
    vector = np.zeros(EMBEDDING_DIM, dtype=np.float32)
    vector[n] = 1.0
    vector[EMBEDDING_DIM - 1] = 0.1  # not a bare axis, so normalising matters
    return vector


def _embed(store: Store, text: str, axis: int) -> int:
    """Store ``text`` as a finished message whose one chunk points along ``axis``; the chunk's id."""
    message = store.add_message("main", "user", text)
    ids = store.save_message_chunks(message.id, text, MODEL_ID,
                                    [ChunkToSave(0, 0, len(text), vector_to_blob(_axis(axis)))])
    assert ids is not None
    return ids[0]


def _nearest(project: Path, axis: int) -> int:
    """The best chunk for a query along ``axis``, as a freshly started worker answers it."""
    vectors = _ProjectVectors(project)
    vectors.warm()
    hits = vectors.nearest(vector_to_blob(_axis(axis)), 1)
    return hits[0][0]


def _saved(store: Store, project: Path) -> list[int] | None:
    saved = load_vectors(project / ".tunaflow" / FILE_NAME, MODEL_ID, EMBEDDING_DIM,
                         lambda top: store.chunk_count(MODEL_ID, up_to_id=top))
    return None if saved is None else sorted(saved.ids)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    return path


def test_a_new_worker_answers_from_the_saved_file_with_the_chunks_stored_since(project: Path) -> None:
    with Store.open(project) as store:
        first = [_embed(store, f"message {n}", n) for n in range(5)]
        assert _nearest(project, 3) == first[3]
        assert _saved(store, project) == first, "the first worker saved what it read"
        later = _embed(store, "stored after the file was written", 40)
        assert _saved(store, project) == first, "the file is still current for the chunks it holds"
        assert _nearest(project, 40) == later, "chunks stored since are read from the database and found"
        assert _saved(store, project) == [*first, later], "and appended to the file"


def test_a_stale_file_is_rebuilt_and_never_answers_with_deleted_chunks(project: Path) -> None:
    with Store.open(project) as store:
        chunk_ids = [_embed(store, f"message {n}", n) for n in range(4)]
        _nearest(project, 0)
        message = store.add_message("main", "user", "edited later")
        ids = store.save_message_chunks(message.id, "edited later", MODEL_ID,
                                        [ChunkToSave(0, 0, 12, vector_to_blob(_axis(9)))])
        assert ids is not None
        _nearest(project, 0)
        # The edit replaces the chunk (a new id along another axis): the file's count no longer matches.
        store.update_message(message.id, content="about something else")
        new = store.save_message_chunks(message.id, "about something else", MODEL_ID,
                                        [ChunkToSave(0, 0, 20, vector_to_blob(_axis(20)))])
        assert new is not None
        assert _saved(store, project) is None, "the file is stale"
        assert _nearest(project, 9) != ids[0], "the replaced chunk is not returned"
        assert _nearest(project, 20) == new[0]
        assert _saved(store, project) == [*chunk_ids, new[0]], "the file was rebuilt"


def test_a_torn_or_foreign_file_is_ignored(project: Path) -> None:
    with Store.open(project) as store:
        chunk_ids = [_embed(store, f"message {n}", n) for n in range(6)]
        _nearest(project, 0)
        path = project / ".tunaflow" / FILE_NAME
        whole = path.read_bytes()
        path.write_bytes(whole[: len(whole) - 700])  # a write cut short
        orphan = path.parent / ".vectors-killed.tmp"  # a worker killed while writing
        orphan.write_bytes(whole[:300])
        assert _saved(store, project) is None
        assert _nearest(project, 5) == chunk_ids[5]
        assert path.read_bytes() == whole, "rewritten whole"
        assert not orphan.exists(), "the killed writer's half-written file is gone"
        path.write_bytes(b"not a vector file at all" * 100)
        assert _nearest(project, 2) == chunk_ids[2]
        (project / ".tunaflow" / FILE_NAME).write_bytes(whole.replace(MODEL_ID.encode(), b"x" * len(MODEL_ID)))
        assert _saved(store, project) is None, "another model's vectors are not used"
