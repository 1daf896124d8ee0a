"""The embedding worker: shared by the processes of one project, survives being killed, leaves when idle."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from runtime_harness import Harness
from waiting import until_sync

from tunaflow_tui.core.memory.chunks import split_into_chunks
from tunaflow_tui.core.memory.model_files import MODEL_ID, MODEL_PACKAGE
from tunaflow_tui.core.memory.worker_client import WorkerEmbedder
from tunaflow_tui.core.memory.worker_protocol import LOG_NAME, socket_path
from tunaflow_tui.core.settings import Settings
from tunaflow_tui.core.storage import Store
from tunaflow_tui.runtime.events import NoticeRaised, RuntimeEvent
from tunaflow_tui.runtime.memory import ProjectMemory, worker_lost_notice

pytestmark = pytest.mark.embeddings

needs_model = pytest.mark.skipif(__import__("importlib").util.find_spec(MODEL_PACKAGE) is None,
                                 reason="model not installed")

PARAGRAPH = ("The uploader keeps a queue of pending files and retries each one with a growing delay "
             "when the network fails; after the fifth failure it gives up and tells the user which "
             "files are left, so that nothing is lost silently. ")


def _gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie waiting to be reaped counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def _settings(idle: float = 30.0) -> Settings:
    settings = Settings()
    return settings.model_copy(update={"memory": settings.memory.model_copy(update={"worker_idle_seconds": idle})})


def _duplicates(store: Store) -> list[tuple[int, int, int]]:
    with store._db.reading() as db:
        cursor = db.execute_sql("SELECT message_id, chunk_index, COUNT(*) FROM message_chunks "
                                "GROUP BY message_id, chunk_index HAVING COUNT(*) > 1")
        return [tuple(row) for row in cursor.fetchall()]


@needs_model
def test_a_worker_killed_mid_backfill_loses_nothing_and_the_user_is_told_once(harness: Harness) -> None:
    events: list[RuntimeEvent] = []
    with Store.open(harness.project) as store:
        for i in range(24):
            store.add_message("main", "assistant", f"Note {i}. " + PARAGRAPH * 2)
        memory = ProjectMemory(store, _settings(), events.append)
        worker = memory.embedder
        assert isinstance(worker, WorkerEmbedder)
        try:
            memory.start()
            until_sync(lambda: store.embedding_counts(MODEL_ID).embedded >= 3, "the backfill embeds its first messages", 60)
            first = worker.worker_pid()
            os.kill(first, signal.SIGKILL)
            assert memory.indexer is not None
            until_sync(lambda: store.embedding_counts(MODEL_ID).remaining == 0, "the backfill goes on in a new worker", 120)
            assert worker.worker_pid() != first
            counts = store.embedding_counts(MODEL_ID)
            assert (counts.embedded, counts.total) == (24, 24)
            assert not _duplicates(store), "no message has a chunk twice"
            expected = sum(len(split_into_chunks(m.content)) for m in store.list_messages("main", limit=100))
            assert len(list(store.chunk_vectors(MODEL_ID))) == expected, "every chunk has its vector"
            told = [e for e in events if isinstance(e, NoticeRaised) and e.text == worker_lost_notice()]
            assert len(told) == 1
            assert memory.search("uploader retries after network failures", mode="vector").hits
        finally:
            memory.close()


@needs_model
def test_the_worker_leaves_when_idle_and_comes_back_on_the_next_request(tmp_path: Path) -> None:
    state = tmp_path / ".tunaflow"
    state.mkdir()
    client = WorkerEmbedder(state, idle_seconds=0.5)
    try:
        assert client.embed_one("hello").shape == (384,)
        pid = client.worker_pid()
        until_sync(lambda: _gone(pid) and not socket_path(state).exists(), "the idle worker exits and removes its socket", 30)
        assert not client.loaded, "a turn's retrieval does not wait for a new worker"
        with Store.open(tmp_path) as store:
            store.add_message("main", "user", "hello from the main conversation")
            memory = ProjectMemory(store, _settings(), lambda _event: None, embedder=client)
            assert [hit.message.content for hit in memory.retrieve("hello", exclude_message_ids=(), limit=3)] \
                == ["hello from the main conversation"]
            assert client.starts == 1, "retrieval used full text and started no worker"
            memory.close()
        assert client.embed(["hello again"]).shape == (1, 384), "a new worker answers"
        assert client.worker_pid() != pid and client.starts == 2 and client.loaded
    finally:
        client.close()


_OTHER_PROCESS = """
import sys
from pathlib import Path
from tunaflow_tui.core.memory.worker_client import WorkerEmbedder
client = WorkerEmbedder(Path(sys.argv[1]), idle_seconds=20)
client.embed_one("from another process")
print(client.worker_pid(), client.starts)
print("onnxruntime" in sys.modules, "tokenizers" in sys.modules)
"""


@needs_model
def test_processes_of_one_project_share_one_worker_even_when_they_start_it_together(tmp_path: Path) -> None:
    state = tmp_path / ".tunaflow"
    state.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    racers = [subprocess.Popen([sys.executable, "-c", _OTHER_PROCESS, str(state)], stdout=subprocess.PIPE,
                               text=True, env=env) for _ in range(3)]
    outputs = [racer.communicate(timeout=120)[0].split("\n") for racer in racers]
    assert all(racer.returncode == 0 for racer in racers)
    pids = {line[0].split()[0] for line in outputs}
    assert len(pids) == 1, f"one worker for the project, not {pids}"
    assert {line[1] for line in outputs} == {"False False"}, "the model stays in the worker"
    client = WorkerEmbedder(state, idle_seconds=20)
    try:
        assert str(client.worker_pid()) in pids and client.starts == 0, "a later process joins the same worker"
    finally:
        client.close()
        os.kill(int(pids.pop()), signal.SIGTERM)


def test_without_a_model_no_worker_is_started_and_search_is_full_text(harness: Harness,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TUNAFLOW_EMBEDDING_MODEL", str(harness.root / "no-such-model.onnx"))
    events: list[RuntimeEvent] = []
    with Store.open(harness.project) as store:
        store.add_message("main", "user", "the uploader retries three times")
        memory = ProjectMemory(store, _settings(), events.append)
        try:
            memory.start()
            assert memory.indexer is not None and memory.indexer.wait_idle(30)
            result = memory.search("uploader retries")
            assert result.mode == "fts" and "full-text search only" in result.note
            assert not memory.hand_over()
        finally:
            memory.close()
    assert [e.text for e in events if isinstance(e, NoticeRaised)] == [
        e.text for e in events if isinstance(e, NoticeRaised) and "no-such-model.onnx" in e.text][:1]
    assert not (harness.project / ".tunaflow" / LOG_NAME).exists(), "no worker was started"


@needs_model
def test_the_workers_vector_index_follows_new_and_edited_messages(harness: Harness) -> None:
    with Store.open(harness.project) as store:
        store.add_message("main", "user", "How should we store the passwords of our users safely?")
        memory = ProjectMemory(store, _settings(), lambda _event: None)
        try:
            memory.embed_pending()
            first = memory.search("hashing credentials securely", mode="vector", limit=1).hits
            assert [hit.message.content[:10] for hit in first] == ["How should"]
            invoices = store.add_message("main", "user", "Which database ought to hold the invoices?")
            memory.embed_pending()
            found = memory.search("where to persist billing records", mode="vector", limit=1).hits
            assert [hit.message.id for hit in found] == [invoices.id], "chunks stored since are searched"
            store.update_message(invoices.id, content="Tabs or spaces for indentation?")
            memory.embed_pending()
            found = memory.search("where to persist billing records", mode="vector", limit=2).hits
            assert all("invoices" not in hit.message.content for hit in found)
            assert any(hit.message.id == invoices.id for hit in
                       memory.search("whitespace style for code", mode="vector", limit=1).hits)
            assert memory.search_engine._index is None, "the app's process holds no vector index"
        finally:
            memory.close()


@needs_model
def test_the_apps_indexer_and_a_backfill_handed_over_by_a_command_share_the_work(harness: Harness) -> None:
    with Store.open(harness.project) as store:
        for i in range(16):
            store.add_message("main", "assistant", f"Note {i}. " + PARAGRAPH)
        command = WorkerEmbedder(harness.project / ".tunaflow", idle_seconds=20)
        memory = ProjectMemory(store, _settings(idle=20), lambda _event: None)
        try:
            command.backfill(harness.project)  # what `tunaflow ask` leaves to the worker as it exits
            memory.start()  # the app opening the same project meanwhile
            until_sync(lambda: store.embedding_counts(MODEL_ID).remaining == 0
                       and not command.progress(harness.project)["running"], "both finished", 120)
            assert memory.indexer is not None and memory.indexer.wait_idle(60)
            assert not _duplicates(store), "a message embedded by both is stored once"
            expected = sum(len(split_into_chunks(m.content)) for m in store.list_messages("main", limit=100))
            assert len(list(store.chunk_vectors(MODEL_ID))) == expected
            assert command.worker_pid() == memory.embedder.worker_pid()  # type: ignore[union-attr]
        finally:
            memory.close()
            command.close()


@needs_model
def test_waking_memory_starts_the_worker_before_the_first_query(tmp_path: Path) -> None:
    state = tmp_path / ".tunaflow"
    state.mkdir()
    client = WorkerEmbedder(state, idle_seconds=30)
    try:
        with Store.open(tmp_path) as store:
            store.add_message("main", "user", "Which database ought to hold the invoices?")
            memory = ProjectMemory(store, _settings(), lambda _event: None, embedder=client)
            try:
                assert not socket_path(state).exists()
                memory.wake()  # the search view opening
                until_sync(lambda: socket_path(state).exists(), "the worker started with no query asked", 60)
                assert client.starts == 1
                memory.wake()
                memory.embed_pending()
                found = memory.search("where to persist billing records", mode="hybrid", limit=1)
                assert found.mode == "hybrid" and found.hits[0].message.content.startswith("Which database")
                assert client.starts == 1, "the query used the worker started ahead, and waking again started none"
            finally:
                memory.close()
    finally:
        client.close()
