"""Chunks and vectors stored with their messages, embedded in the background, resumable after a crash."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.indexer import EmbeddingIndexer, IndexerState
from tunaflow_tui.core.memory.model_files import MODEL_ID
from tunaflow_tui.core.memory.vectors import VECTOR_BYTES
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.chunk_store import ChunkToSave

ROOT = Path(__file__).resolve().parents[3]


def _missing_model(tmp_path: Path) -> Embedder:
    return Embedder(env={"TUNAFLOW_EMBEDDING_MODEL": str(tmp_path / "no-such-model.onnx")})


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    project = tmp_path / "proj"
    project.mkdir()
    opened = Store.open(project)
    yield opened
    opened.close()


def _pending(store: Store) -> list[int]:
    return [m.id for m in store.messages_to_embed(MODEL_ID, limit=100)]


def test_finished_messages_wait_for_embedding_and_streaming_ones_do_not(store: Store) -> None:
    done = store.add_message("main", "user", "the nightly build broke")
    streaming = store.add_message("main", "assistant", "still typ", status="streaming")
    assert _pending(store) == [done.id]
    store.update_message(streaming.id, content="still typing, now done", status="done")
    assert _pending(store) == [done.id, streaming.id]
    assert store.embedding_counts(MODEL_ID).remaining == 2


def test_saved_chunks_take_a_message_off_the_list_until_its_text_changes(store: Store) -> None:
    message = store.add_message("main", "assistant", "first text")
    ids = store.save_message_chunks(message.id, "first text", MODEL_ID, [ChunkToSave(0, 0, 10, b"\0" * VECTOR_BYTES)])
    assert ids is not None and len(ids) == 1
    assert _pending(store) == []
    assert store.embedding_counts(MODEL_ID).embedded == 1
    store.update_message(message.id, usage=None, error_kind="x")  # not a text change: chunks stay
    assert _pending(store) == []
    store.update_message(message.id, content="edited text")
    assert _pending(store) == [message.id], "an edited message is embedded again"
    assert list(store.chunk_vectors(MODEL_ID)) == []


def test_chunks_go_with_their_message_and_with_a_deleted_branch(store: Store) -> None:
    branch = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                                 kind="general", label="try")
    message = store.add_message(branch.shadow_conversation_id, "assistant", "branch text")
    store.save_message_chunks(message.id, "branch text", MODEL_ID, [ChunkToSave(0, 0, 11, b"\0" * VECTOR_BYTES)])
    assert len(list(store.chunk_vectors(MODEL_ID))) == 1
    store.delete_branch(branch.id)
    assert list(store.chunk_vectors(MODEL_ID)) == []
    assert store.embedding_counts(MODEL_ID).total == 0


def test_chunks_of_a_message_that_changed_meanwhile_are_not_stored(store: Store) -> None:
    message = store.add_message("main", "assistant", "old")
    store.update_message(message.id, content="new")
    assert store.save_message_chunks(message.id, "old", MODEL_ID, [ChunkToSave(0, 0, 3, None)]) is None
    assert _pending(store) == [message.id]


def test_a_message_from_another_model_is_embedded_again(store: Store) -> None:
    message = store.add_message("main", "assistant", "text")
    store.save_message_chunks(message.id, "text", "older-model@1234", [ChunkToSave(0, 0, 4, None)])
    assert _pending(store) == [message.id]


def test_the_indexer_embeds_every_finished_message_with_the_real_model(store: Store, embedder: Embedder) -> None:
    long_text = "\n\n".join(f"Paragraph {i} explains the retry policy of the uploader in some detail. " * 6
                            for i in range(4))
    store.add_message("main", "user", "Why did the nightly build fail?")
    big = store.add_message("main", "assistant", long_text)
    store.add_message("main", "assistant", "   ")
    seen: list[tuple[int, ...]] = []
    indexer = EmbeddingIndexer(store, embedder, on_chunks=lambda ids, owners, vectors: seen.append(tuple(owners)))
    state = indexer.run_pass()
    assert (state.embedded, state.total, state.running) == (3, 3, False)
    vectors = list(store.chunk_vectors(MODEL_ID))
    assert len(vectors) >= 3 and all(len(blob) == VECTOR_BYTES for _id, blob in vectors)
    big_chunks = next(owners for owners in seen if owners and owners[0] == big.id)
    assert len(big_chunks) >= 2, "a long message is cut into several chunks"
    assert indexer.run_pass().embedded == 3, "a second pass finds nothing left"


def test_the_indexer_runs_on_its_own_thread_and_follows_new_messages(store: Store, embedder: Embedder) -> None:
    states: list[IndexerState] = []
    indexer = EmbeddingIndexer(store, embedder, on_progress=states.append)
    store.add_message("main", "user", "first message")
    indexer.start()
    try:
        assert indexer.wait_idle(60)
        store.add_message("main", "assistant", "a reply that finished later")
        indexer.wake()
        assert indexer.wait_idle(60)
    finally:
        indexer.stop()
    assert store.embedding_counts(MODEL_ID).remaining == 0
    assert states[-1] == IndexerState(2, 2, running=False)


def test_without_the_model_nothing_is_stored_and_the_user_is_told_once(store: Store, tmp_path: Path) -> None:
    told: list[str] = []
    indexer = EmbeddingIndexer(store, _missing_model(tmp_path), on_unavailable=told.append)
    store.add_message("main", "user", "hello")
    first = indexer.run_pass()
    store.add_message("main", "user", "again")
    second = indexer.run_pass()
    assert len(told) == 1 and "no-such-model.onnx" in told[0]
    assert first.unavailable and second.unavailable and second.total == 2 and second.embedded == 0
    assert "full-text search only" in second.describe()
    assert list(store.chunk_vectors(MODEL_ID)) == []


CRASHING_INDEXER = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from tunaflow_tui.core.memory.embedder import Embedder
    from tunaflow_tui.core.memory.indexer import EmbeddingIndexer
    from tunaflow_tui.core.storage import Store

    store = Store.open(Path(sys.argv[1]))
    stored = []

    def crash_after_two(ids, owners, vectors):
        stored.append(owners[0])
        if len(stored) == 2:
            os._exit(9)  # as abrupt as kill -9: no cleanup, no commit of anything later

    EmbeddingIndexer(store, Embedder(env={}), on_chunks=crash_after_two).run_pass()
    os._exit(0)
""")


def test_a_backfill_killed_midway_resumes_where_it_stopped(tmp_path: Path, embedder: Embedder) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    with Store.open(project) as store:
        ids = [store.add_message("main", "user", f"message number {i} about topic {i}").id for i in range(5)]
    crashed = subprocess.run([sys.executable, "-c", CRASHING_INDEXER, str(project)], cwd=ROOT, capture_output=True,
                             text=True, timeout=120)
    assert crashed.returncode == 9, crashed.stderr
    with Store.open(project) as store:
        counts = store.embedding_counts(MODEL_ID)
        assert (counts.embedded, counts.total) == (2, 5)
        kept = dict(store.chunk_vectors(MODEL_ID))
        embedded_now: list[int] = []
        state = EmbeddingIndexer(store, embedder,
                                 on_chunks=lambda c, owners, v: embedded_now.extend(owners)).run_pass()
        assert (state.embedded, state.total) == (5, 5)
        assert embedded_now == ids[2:], "only what the crash left undone is embedded again"
        after = dict(store.chunk_vectors(MODEL_ID))
        assert all(after[chunk_id] == blob for chunk_id, blob in kept.items())
