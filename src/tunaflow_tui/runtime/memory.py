"""Project memory for the runtime: background embedding, project search and retrieval for the pack.

One :class:`ProjectMemory` per runtime. Nothing runs until :meth:`ProjectMemory.start` (the app
calls it when it opens a project): then the indexer embeds what is missing (the backfill, with
:class:`~tunaflow_tui.runtime.events.MemoryProgress` events) and, from then on, every message
that finishes, on its own thread. Without the model everything keeps working on full text, and
the user is told once.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from tunaflow_tui.core.memory.indexer import EmbeddingIndexer, IndexerState
from tunaflow_tui.core.memory.model_files import MODEL_ID
from tunaflow_tui.core.memory.project_search import ProjectHit, ProjectSearch, SearchResult
from tunaflow_tui.core.settings import Settings
from tunaflow_tui.core.storage import Store
from tunaflow_tui.runtime.events import MemoryProgress, NoticeRaised, RuntimeEvent

if TYPE_CHECKING:
    from tunaflow_tui.core.memory.embedder import Embedder


def unavailable_notice(reason: str) -> str:
    """What the user is told once when there is no semantic search."""
    return f"Semantic search is off: {reason}. Search and retrieval use full text only."


#: Hits each ranking brings to the fusion for a pack: a few chunks are kept, so fewer suffice.
RETRIEVAL_CANDIDATES = 20


def default_embedder(settings: Settings) -> Embedder | None:
    """The process-wide embedder, or None when ``[memory] embeddings`` is off."""
    if not settings.memory.embeddings:
        return None
    from tunaflow_tui.core.memory.embedder import shared_embedder

    return shared_embedder()


class ProjectMemory:
    """The memory of one open project: indexer, search, retrieval (thread-safe)."""

    def __init__(self, store: Store, settings: Settings, emit: Callable[[RuntimeEvent], None], *,
                 embedder: Embedder | None = None, use_default_embedder: bool = True) -> None:
        self._store = store
        self._settings = settings
        self._emit = emit
        if embedder is None and use_default_embedder:
            embedder = default_embedder(settings)
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
    def embedder(self) -> Embedder | None:
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
        if self._indexer is not None:
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
                                         snippets=False, candidates=RETRIEVAL_CANDIDATES).hits

    def prepare_retrieval(self, query: str) -> None:
        """Start embedding ``query`` for a :meth:`retrieve` soon (only once the model is loaded).

        The pack builder calls it first, so the embedding runs on a worker thread while the
        pack's other sections are read and the full-text query runs.
        """
        if query.strip():
            self.search_engine.prepare(query)

    def close(self) -> None:
        """Stop the indexer after the message it is embedding, and the query-embedding thread."""
        if self._indexer is not None:
            self._indexer.stop()
        self.search_engine.close()

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

    def _unavailable(self, reason: str) -> None:
        self._post(NoticeRaised(unavailable_notice(reason), "warning"))
