"""Project memory for the runtime: background embedding, project search and retrieval for the pack.

One :class:`ProjectMemory` per runtime. Nothing runs until :meth:`ProjectMemory.start` (the app
and the commands that write messages call it): then the indexer embeds what is missing (the
backfill, with :class:`~tunaflow_tui.runtime.events.MemoryProgress` events) and, from then on,
every message that finishes, on its own thread. The model itself runs in the project's embedding
worker process (:mod:`~tunaflow_tui.core.memory.worker`), never in this one. What is still to
embed when the memory closes is handed to that worker, which finishes it after a short command
has exited. Without the model everything keeps working on full text, and the user is told once.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING

from tunaflow_tui.core.memory.indexer import EmbeddingIndexer, IndexerState
from tunaflow_tui.core.memory.model_files import MODEL_ID, EmbeddingUnavailable
from tunaflow_tui.core.memory.project_search import ProjectHit, ProjectSearch, SearchResult
from tunaflow_tui.core.settings import Settings
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.store import database_path
from tunaflow_tui.runtime.events import MemoryProgress, NoticeRaised, RuntimeEvent

if TYPE_CHECKING:
    from tunaflow_tui.core.memory.embedding_port import TextEmbedder
    from tunaflow_tui.core.memory.worker_client import WorkerEmbedder


def unavailable_notice(reason: str) -> str:
    """What the user is told once when there is no semantic search."""
    return f"Semantic search is off: {reason}. Search and retrieval use full text only."


#: Hits each ranking brings to the fusion for a pack: a few chunks are kept, so fewer suffice.
RETRIEVAL_CANDIDATES = 20


def worker_lost_notice() -> str:
    """What the user is told once when the embedding worker stopped and is being started again."""
    return ("The embedding worker stopped; it is being started again. "
            "Search uses full text until it is back.")


def default_embedder(settings: Settings, state_dir: Path,
                     on_lost: Callable[[str], None] | None = None) -> TextEmbedder | None:
    """The client of the project's embedding worker, or None when ``[memory] embeddings`` is off."""
    if not settings.memory.embeddings:
        return None
    from tunaflow_tui.core.memory.worker_client import WorkerEmbedder

    return WorkerEmbedder(state_dir, idle_seconds=settings.memory.worker_idle_seconds, on_lost=on_lost)


class ProjectMemory:
    """The memory of one open project: indexer, search, retrieval (thread-safe)."""

    def __init__(self, store: Store, settings: Settings, emit: Callable[[RuntimeEvent], None], *,
                 embedder: TextEmbedder | None = None, use_default_embedder: bool = True) -> None:
        self._store = store
        self._settings = settings
        self._emit = emit
        if embedder is None and use_default_embedder:
            state_dir = database_path(Path(store.project.path)).parent
            embedder = default_embedder(settings, state_dir, on_lost=self._worker_lost)
        self._embedder = embedder
        self.search_engine = ProjectSearch(store, embedder)
        self._indexer: EmbeddingIndexer | None = None
        if embedder is not None:
            self._indexer = EmbeddingIndexer(store, embedder, on_progress=self._progress,
                                             on_unavailable=self._unavailable, on_chunks=self.search_engine.add_chunks)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._started = False

    @property
    def started(self) -> bool:
        """Whether background embedding was started."""
        return self._started

    @property
    def embedder(self) -> TextEmbedder | None:
        """The embedder this project's memory uses (None when embeddings are turned off)."""
        return self._embedder

    @property
    def indexer(self) -> EmbeddingIndexer | None:
        """The background indexer (None when embeddings are turned off)."""
        return self._indexer

    def start(self) -> None:
        """Start background embedding: the backfill first, then each message as it finishes."""
        try:
            self._loop = asyncio.get_running_loop()
            self._loop_thread = threading.get_ident()
        except RuntimeError:
            self._loop = None
        self._started = True
        if self._indexer is not None and self._store.read_only is None:  # a read-only project stores no vectors
            self._indexer.start()
        else:
            self._emit(MemoryProgress(0, 0, running=False, unavailable="semantic search is turned off"))

    def message_settled(self, conversation_id: str, message_id: int) -> None:
        """A message was stored finished (any conversation): embed it soon, off the event loop."""
        if self._started and self._indexer is not None:
            self._indexer.wake()

    def state(self) -> IndexerState:
        """How far embedding is: read from the database when the indexer has not reported yet."""
        if self._indexer is not None and self._started and self._indexer.state.total:
            return self._indexer.state
        counts = self._store.embedding_counts(MODEL_ID)
        reason = None
        if self._embedder is None:
            reason = "semantic search is turned off"
        elif not self._embedder.available():
            reason = self.search_engine.unavailable_reason()
        return IndexerState(counts.embedded, counts.total, running=False, unavailable=reason)

    def wake(self) -> None:
        """The user is about to search (the search view opened): start the embedding worker now, on a
        thread, so that the first query finds the model and the vectors loaded. No-op without a worker."""
        worker = self._worker()
        if worker is not None:
            threading.Thread(target=worker.wake, name="tunaflow-memory-wake", daemon=True).start()

    def search(self, query: str, *, limit: int = 10, mode: str = "hybrid") -> SearchResult:
        """Project search (a worker thread: it may load the model to embed the query)."""
        return self.search_engine.search(query, limit=limit, mode=mode)

    def retrieve(self, query: str, *, exclude_message_ids: Collection[int], limit: int) -> tuple[ProjectHit, ...]:
        """The best chunks for ``query`` outside ``exclude_message_ids``, for a ContextPack.

        Vectors take part only once the model is loaded (the indexer loads it in the background):
        a turn never waits for the model; before that, retrieval is full text.
        """
        if limit <= 0 or not query.strip():
            return ()
        loaded = self._embedder is not None and self._embedder.loaded
        mode = "hybrid" if loaded else "fts"
        return self.search_engine.search(query, limit=limit, mode=mode, exclude_message_ids=exclude_message_ids,
                                         candidates=RETRIEVAL_CANDIDATES).hits

    def prepare_retrieval(self, query: str) -> None:
        """Start embedding ``query`` for a :meth:`retrieve` soon (only once the model is loaded).

        The pack builder calls it first, so the embedding runs on a worker thread while the
        pack's other sections are read and the full-text query runs.
        """
        if query.strip():
            self.search_engine.prepare(query)

    def hand_over(self) -> bool:
        """Ask the embedding worker to embed what is still to do, so it is done after this process exits.

        False when there is nothing to hand over, no worker (embeddings off, an in-process
        embedder) or no model; the worker is started if needed. A worker thread or a command's exit.
        """
        worker = self._worker()
        if worker is None or not worker.available():
            return False
        if not self._store.embedding_counts(MODEL_ID).remaining:
            return False
        try:
            worker.backfill(Path(self._store.project.path))
        except EmbeddingUnavailable:
            return False
        return True

    def embed_pending(self, report: Callable[[int, int], None] | None = None, *,
                      timeout: float = 3600.0) -> IndexerState:
        """Embed every finished message still without vectors before returning (a search from the shell).

        The embedding worker does it (and keeps it if this process stops waiting); ``report`` is
        called with (embedded, total) about every 0.2 s while it runs. A worker thread only.
        """
        worker = self._worker()
        if worker is None or not worker.available():
            return self.state()
        project = Path(self._store.project.path)
        deadline = time.monotonic() + timeout
        try:
            progress = worker.backfill(project)
            while progress.get("running") and time.monotonic() < deadline:
                if report is not None:
                    report(int(progress.get("embedded", 0)), int(progress.get("total", 0)))
                time.sleep(0.2)
                progress = worker.progress(project)
        except EmbeddingUnavailable:
            pass
        return self.state()

    def _worker(self) -> WorkerEmbedder | None:
        from tunaflow_tui.core.memory.worker_client import WorkerEmbedder

        return self._embedder if isinstance(self._embedder, WorkerEmbedder) else None

    def close(self) -> None:
        """Stop the indexer after the message it is embedding, hand the rest to the worker, close.

        Once started, whatever is still to embed goes to the embedding worker, which outlives this
        process (a shell command's exit, the app's quit) and finishes it.
        """
        if self._indexer is not None:
            self._indexer.stop()
        if self._started:
            with contextlib.suppress(Exception):  # a store closing under us: nothing lost, only postponed
                self.hand_over()
        self.search_engine.close()
        worker = self._worker()
        if worker is not None:
            worker.close()

    # ------------------------------------------------------------------ from the indexer's thread
    def _post(self, event: RuntimeEvent) -> None:
        loop = self._loop
        if loop is not None and threading.get_ident() != self._loop_thread and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._emit, event)
                return
            except RuntimeError:  # the loop closed meanwhile
                pass
        self._emit(event)

    def _progress(self, state: IndexerState) -> None:
        self._post(MemoryProgress(state.embedded, state.total, state.running, state.unavailable))

    def _worker_lost(self, _reason: str) -> None:
        self._post(NoticeRaised(worker_lost_notice(), "warning"))

    def _unavailable(self, reason: str) -> None:
        self._post(NoticeRaised(unavailable_notice(reason), "warning"))
