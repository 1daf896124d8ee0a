"""Background embedding of finished messages: one worker thread, resumable, never on the event loop.

The indexer keeps no list of its own: each pass asks the store which finished messages have no
chunks for the current model yet (:meth:`~tunaflow_tui.core.storage.chunk_store.ChunkStore.messages_to_embed`),
cuts each into chunks, embeds them and stores them with the message, one message per transaction.
A crash loses at most the message being embedded; the next start finds the rest still to do.
A model upgrade (another :data:`~tunaflow_tui.core.memory.model_files.MODEL_ID`) makes every
message "still to do" again, which is the backfill.

:meth:`EmbeddingIndexer.wake` is cheap and safe from the event loop (it sets an event); call it when
a message finishes. Progress and the one "no model" notice are reported through callbacks from the
worker thread, so the caller hands them to its own loop.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tunaflow_tui.core.memory.chunks import split_into_chunks
from tunaflow_tui.core.memory.model_files import MODEL_ID, EmbeddingUnavailable
from tunaflow_tui.core.storage.chunk_store import ChunkToSave
from tunaflow_tui.core.storage.storage_errors import StorageError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from tunaflow_tui.core.memory.embedding_port import TextEmbedder
    from tunaflow_tui.core.storage import Store

#: Messages read per query while a pass runs.
BATCH_MESSAGES = 8
#: Shortest interval between two progress reports of one pass (the last one is always sent).
PROGRESS_INTERVAL_S = 0.5
#: The indexer's thread runs at this nice value (Linux sets it per thread), so the UI comes first.
WORKER_NICENESS = 10
#: Seconds before a pass is tried again after a transient failure (the embedding worker could not be reached).
RETRY_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class IndexerState:
    """Where embedding stands: finished messages embedded out of all, and what the indexer does."""

    embedded: int
    total: int
    running: bool
    unavailable: str | None = None

    @property
    def remaining(self) -> int:
        """Finished messages still to embed."""
        return max(0, self.total - self.embedded)

    def describe(self) -> str:
        """One line for ``doctor``/status: how far embedding is, or why there is none."""
        if self.unavailable is not None:
            return f"full-text search only: {self.unavailable}"
        if self.remaining:
            return f"embedding messages: {self.embedded:,} of {self.total:,} done"
        return f"all {self.total:,} finished messages embedded"


ChunksStored = Callable[[Sequence[int], Sequence[int], "NDArray[np.float32]"], None]
"""Called with (chunk ids, their message ids, their vectors) after a message's chunks are stored."""


class EmbeddingIndexer:
    """Embeds the project's finished messages on one daemon thread, as they finish and after an upgrade."""

    def __init__(
        self,
        store: Store,
        embedder: TextEmbedder,
        *,
        on_progress: Callable[[IndexerState], None] | None = None,
        on_unavailable: Callable[[str], None] | None = None,
        on_chunks: ChunksStored | None = None,
        model_id: str = MODEL_ID,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._on_progress = on_progress
        self._on_unavailable = on_unavailable
        self._on_chunks = on_chunks
        self._model_id = model_id
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._state = IndexerState(0, 0, running=False)
        self._told_unavailable = False
        self._retry: threading.Timer | None = None

    @property
    def state(self) -> IndexerState:
        """The latest known progress (updated by the worker thread)."""
        return self._state

    def start(self) -> None:
        """Start the worker thread (once) and look for work at once."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="tunaflow-embedding", daemon=True)
                self._thread.start()
        self.wake()

    def wake(self) -> None:
        """Ask for a pass: a message finished or changed (cheap; any thread)."""
        self._idle.clear()
        self._wake.set()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop after the message being embedded, and wait for the thread (at most ``timeout``)."""
        self._stopping.set()
        self._wake.set()
        retry = self._retry
        if retry is not None:
            retry.cancel()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no pass is running or pending; False on timeout (tests, ``tunaflow run`` exit)."""
        return self._idle.wait(timeout)

    def run_pass(self) -> IndexerState:
        """Embed everything still to do on the calling thread (a worker thread only); the final state."""
        self._pass()
        return self._state

    def _run(self) -> None:
        with suppress(OSError, AttributeError):  # lower this thread only; ORT's threads inherit it
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICENESS)
        while not self._stopping.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stopping.is_set():
                break
            try:
                self._pass()
            except StorageError:
                break  # the store was closed under us: the project is going away
            finally:
                if not self._wake.is_set():
                    self._idle.set()
        self._idle.set()

    def _report(self, state: IndexerState) -> None:
        self._state = state
        if self._on_progress is not None:
            self._on_progress(state)

    def _pass(self) -> None:
        counts = self._store.embedding_counts(self._model_id)
        if self._embedder.error is not None or not counts.remaining:
            reason = None if self._embedder.error is None else self._embedder.error.reason
            self._report(IndexerState(counts.embedded, counts.total, running=False, unavailable=reason))
            return
        embedded, total = counts.embedded, counts.total
        try:
            self._embedder.load()
            self._report(IndexerState(embedded, total, running=True))
            if not self._embed_missing(embedded, total):
                return
        except EmbeddingUnavailable as error:
            self._unavailable(error, IndexerState(embedded, total, running=False, unavailable=error.reason))
            return
        counts = self._store.embedding_counts(self._model_id)
        self._report(IndexerState(counts.embedded, counts.total, running=False))

    def _embed_missing(self, embedded: int, total: int) -> bool:
        """Embed every message still without chunks; False when stopped midway."""
        last_report = time.monotonic()
        after_id = 0
        while not self._stopping.is_set():
            batch = self._store.messages_to_embed(self._model_id, limit=BATCH_MESSAGES, after_id=after_id)
            if not batch:
                break
            for message in batch:
                if self._stopping.is_set():
                    return False
                after_id = message.id
                if self._embed_message(message.id, message.content):
                    embedded += 1
            if time.monotonic() - last_report >= PROGRESS_INTERVAL_S:
                last_report = time.monotonic()
                self._report(IndexerState(embedded, max(total, embedded), running=True))
        return True

    def _unavailable(self, error: EmbeddingUnavailable, state: IndexerState) -> None:
        """Report why nothing more is embedded now; a transient failure is tried again later.

        A lasting one (no model) is told once. A transient one (the embedding worker could not be
        reached) was told by the worker's client, and the pass runs again after :data:`RETRY_SECONDS`.
        """
        self._report(state)
        if getattr(error, "transient", False):
            if not self._stopping.is_set():
                self._retry = threading.Timer(RETRY_SECONDS, self.wake)
                self._retry.daemon = True
                self._retry.start()
            return
        if not self._told_unavailable and self._on_unavailable is not None:
            self._told_unavailable = True
            self._on_unavailable(error.reason)

    def _embed_message(self, message_id: int, content: str) -> bool:
        """Embed and store one message's chunks; False when the message changed meanwhile."""
        import numpy as np

        from tunaflow_tui.core.memory.vectors import vector_to_blob

        chunks = split_into_chunks(content)
        try:
            vectors = self._embedder.embed([chunk.text for chunk in chunks])
        except EmbeddingUnavailable:
            raise
        except Exception:  # one text the model cannot take must not stop the rest: stored without vectors
            vectors = None
        if vectors is None:
            rows = [ChunkToSave(chunk.index, chunk.start, chunk.end, None) for chunk in chunks]
        else:
            rows = [ChunkToSave(chunk.index, chunk.start, chunk.end, vector_to_blob(vector))
                    for chunk, vector in zip(chunks, vectors, strict=True)]
        ids = self._store.save_message_chunks(message_id, content, self._model_id, rows)
        if ids is None:
            return False
        if self._on_chunks is not None and vectors is not None and len(vectors):
            self._on_chunks(ids, [message_id] * len(ids), np.asarray(vectors, dtype=np.float32))
        return True
