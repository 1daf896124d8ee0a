"""Search over every finished message of a project: FTS5 bm25 and vector similarity, fused by rank.

:class:`ProjectSearch` answers in three modes: ``fts`` (natural-language FTS5 tiers), ``vector``
(cosine over the stored chunk vectors, each message at its best chunk's rank) and ``hybrid`` (the
vectors and the messages holding every word of the query, fused by reciprocal rank). Without the
embedding model, ``hybrid`` is full-text search (all tiers) and says so (:attr:`SearchResult.note`);
``vector`` raises :class:`SearchUnavailable`.

The vector index is built from the database on first use (0.35–1.5 s per 100,000 chunks, on the
searching worker thread) and
kept current by the background indexer through :meth:`ProjectSearch.add_chunks`. Chunks that no
longer exist (an edited or deleted message) are dropped from it when a search meets them.
Embedding the query loads the model: call :meth:`ProjectSearch.search` from a worker thread.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from tunaflow_tui.core.memory.chunks import split_into_chunks
from tunaflow_tui.core.memory.embedding_port import RemoteVectors
from tunaflow_tui.core.memory.fts_query import MAX_QUERY_CHARS, query_terms
from tunaflow_tui.core.memory.fts_search import every_word_search, tiered_search
from tunaflow_tui.core.memory.fusion import FusedHit, reciprocal_rank_fusion
from tunaflow_tui.core.memory.model_files import MODEL_ID, EmbeddingUnavailable
from tunaflow_tui.core.memory.query_vectors import QueryVectors
from tunaflow_tui.core.storage.records import MessageRecord
from tunaflow_tui.core.storage.search_query import SNIPPET_END, SNIPPET_START

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from tunaflow_tui.core.memory.embedding_port import TextEmbedder
    from tunaflow_tui.core.memory.vectors import VectorHit, VectorIndex
    from tunaflow_tui.core.storage import Store

MODES = ("hybrid", "fts", "vector")
#: Candidates each ranking contributes before fusion.
CANDIDATES = 50
#: Characters of context shown around a match in a snippet built without FTS.
SNIPPET_CHARS = 160
MAX_LIMIT = 200


class SearchUnavailable(RuntimeError):
    """The search asked for cannot run (vector mode without a model); the message says why."""


@dataclass(frozen=True, slots=True)
class ProjectHit:
    """One message found: where it lives, who wrote it, when, how well it matched and the matching text.

    ``snippet`` marks matched words between ``«`` and ``»``; ``chunk_start``/``chunk_end`` locate the
    best matching chunk in the message's content; ``sources`` says which rankings found it.
    """

    message: MessageRecord
    score: float
    snippet: str
    sources: tuple[str, ...]
    chunk_start: int
    chunk_end: int

    @property
    def conversation_id(self) -> str:
        """``main`` or ``branch:{id}``."""
        return self.message.conversation_id

    @property
    def branch_id(self) -> int | None:
        """The branch the message belongs to, None for the main conversation."""
        prefix, _, number = self.message.conversation_id.partition(":")
        return int(number) if prefix == "branch" and number.isdigit() else None

    @property
    def created_at(self) -> datetime:
        """When the message was written."""
        return self.message.created_at

    @property
    def chunk_text(self) -> str:
        """The best matching chunk of the message."""
        return self.message.content[self.chunk_start:self.chunk_end]


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Hits best first, the mode that actually ran, and a note when it differs from the one asked."""

    hits: tuple[ProjectHit, ...]
    mode: str
    note: str = ""


@lru_cache(maxsize=64)
def _term_pattern(query: str) -> re.Pattern[str] | None:
    terms = [re.escape(term) + (r"\w*" if prefix else r"\b") for term, prefix in query_terms(query)]
    if not terms:
        return None
    return re.compile(r"\b(?:" + "|".join(terms) + ")", re.IGNORECASE)


def marked_excerpt(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` around the first word of ``query`` found in it, matches between «»."""
    pattern = _term_pattern(query[:MAX_QUERY_CHARS])
    first = pattern.search(text) if pattern is not None else None
    start = 0 if first is None else max(0, first.start() - width // 3)
    window = text[start:start + width]
    flat = " ".join(window.split())
    if pattern is not None:
        flat = pattern.sub(lambda m: f"{SNIPPET_START}{m.group(0)}{SNIPPET_END}", flat)
    return ("…" if start else "") + flat + ("…" if start + width < len(text) else "")


def _best_chunk(content: str, query: str) -> tuple[int, int]:
    """The chunk of ``content`` with the most query-word matches (the first chunk when none match)."""
    chunks = split_into_chunks(content)
    if not chunks:
        return 0, len(content)
    pattern = _term_pattern(query[:MAX_QUERY_CHARS])
    if pattern is None or len(chunks) == 1:
        return chunks[0].start, chunks[0].end
    best = max(chunks, key=lambda chunk: (len(pattern.findall(chunk.text)), -chunk.index))
    return best.start, best.end


class ProjectSearch:
    """Hybrid search over a project's finished messages (thread-safe; call from a worker thread).

    ``exact_below`` sets the vector index's exact-search threshold (default
    :data:`~tunaflow_tui.core.memory.vectors.EXACT_BELOW`).
    """

    def __init__(self, store: Store, embedder: TextEmbedder | None, *, model_id: str = MODEL_ID,
                 exact_below: int | None = None) -> None:
        self._store = store
        self._exact_below = exact_below
        self._embedder = embedder
        self._model_id = model_id
        self._lock = threading.Lock()
        self._index: VectorIndex[int] | None = None
        self._owner: dict[int, int] = {}
        self.query_vectors = QueryVectors(embedder)
        """Query embeddings, each text embedded once (see :mod:`.query_vectors`)."""
        self._all_embedded = False

    def vectors_available(self) -> bool:
        """Whether semantic search can be expected to work (cheap: no load, no hashing)."""
        return self._embedder is not None and self._embedder.available()

    def unavailable_reason(self) -> str:
        """Why there is no semantic search, in words ("" when there is)."""
        if self._embedder is None:
            return "semantic search is turned off"
        error = self._embedder.error
        if error is not None:
            return error.reason
        return "" if self._embedder.available() else self._embedder.status().detail

    def add_chunks(self, chunk_ids: Sequence[int], message_ids: Sequence[int],
                   vectors: NDArray[np.float32]) -> None:
        """Add freshly stored chunk vectors to the index, if it is loaded (the indexer's callback)."""
        with self._lock:
            if self._index is None:
                return
            self._index.add_many(zip(chunk_ids, vectors, strict=True))
            self._owner.update(zip(chunk_ids, message_ids, strict=True))

    def _loaded_index(self) -> VectorIndex[int]:
        from tunaflow_tui.core.memory.vectors import VectorIndex

        with self._lock:
            if self._index is None:
                index: VectorIndex[int] = VectorIndex.from_blobs(self._store.chunk_vectors(self._model_id),
                                                                   exact_below=self._exact_below)
                locations = self._store.chunk_locations(index.ids())
                self._owner = {chunk_id: where.message_id for chunk_id, where in locations.items()}
                self._index = index
            return self._index

    def query_vector(self, query: str, *, load: bool = True) -> NDArray[np.float32] | None:
        """The query's vector, or None without a model (or, with ``load`` False, before it is loaded).

        Only the first 2,000 characters count (as for the full-text query). A text embedded a
        moment ago, or being embedded since :meth:`prepare`, is not embedded again.
        """
        return self.query_vectors.get(query[:MAX_QUERY_CHARS], load=load)

    def all_embedded(self) -> bool:
        """Whether every finished message has its chunks stored (asked of the database until it is so).

        Until then (the backfill), hybrid search keeps the any-word full-text tier: the messages
        not embedded yet have no other way to be found.
        """
        if not self._all_embedded:
            self._all_embedded = self._store.embedding_counts(self._model_id).remaining == 0
        return self._all_embedded

    def prepare(self, query: str) -> None:
        """Start embedding ``query`` on a worker thread (when the model is loaded), for a search soon.

        The caller goes on with other work (database reads, the full-text query) meanwhile; the
        search then waits for this embedding rather than computing it again.
        """
        self.query_vectors.start(query[:MAX_QUERY_CHARS])

    def close(self) -> None:
        """Stop the query-embedding worker thread."""
        self.query_vectors.close()

    def _nearest(self, vector: NDArray[np.float32], k: int) -> list[VectorHit[int]]:
        """The ``k`` nearest chunks: from the embedding worker's index when it keeps one, else from this one's."""
        from tunaflow_tui.core.memory.vectors import VectorHit

        if isinstance(self._embedder, RemoteVectors):
            try:
                pairs = self._embedder.nearest_chunks(Path(self._store.project.path), vector, k)
            except EmbeddingUnavailable:  # the worker is gone for now: full text answers alone
                return []
            return [VectorHit(chunk_id, score) for chunk_id, score in pairs]
        index = self._loaded_index()
        hits = index.top_k(vector, k)
        locations = self._store.chunk_locations([hit.id for hit in hits])
        stale = [hit.id for hit in hits if hit.id not in locations]
        if stale:
            with self._lock:
                for chunk_id in stale:
                    index.remove(chunk_id)
                    self._owner.pop(chunk_id, None)
        return hits

    def vector_chunks(self, vector: NDArray[np.float32], limit: int, *,
                      exclude: Collection[int], conversations: Collection[str] | None) -> list[tuple[int, int, float]]:
        """(chunk id, message id, cosine) of the best chunks, best first, skipping excluded messages."""
        hits = self._nearest(vector, limit + len(exclude))
        locations = self._store.chunk_locations([hit.id for hit in hits])
        found = []
        allowed: dict[int, MessageRecord] = {}
        if conversations is not None:
            allowed = self._store.messages_by_id([where.message_id for where in locations.values()])
        for hit in hits:
            where = locations.get(hit.id)
            if where is None or where.message_id in exclude:
                continue
            if conversations is not None:
                message = allowed.get(where.message_id)
                if message is None or message.conversation_id not in conversations:
                    continue
            found.append((hit.id, where.message_id, hit.score))
        return found

    def search(self, query: str, *, limit: int = 10, mode: str = "hybrid",
               exclude_message_ids: Collection[int] = (),
               conversation_ids: Collection[str] | None = None, candidates: int = CANDIDATES) -> SearchResult:
        """The ``limit`` best messages for ``query``, best first.

        ``exclude_message_ids`` are never returned (the turns already in a prompt);
        ``conversation_ids`` limits the search to those conversations; each hit's snippet is cut from
        its best chunk, matched words between «»; ``candidates`` is how many
        hits each ranking brings to the fusion. Any text is a valid query:
        FTS5 syntax is searched for as words, and only the first 2,000 characters count. Raises
        ValueError for an unknown mode, :class:`SearchUnavailable` for ``vector`` without a model.
        """
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
        query = query[:MAX_QUERY_CHARS]
        limit = max(0, min(limit, MAX_LIMIT))
        if not query.strip() or limit == 0:
            return SearchResult((), mode)
        exclude = frozenset(exclude_message_ids)
        note = ""
        vector = None
        if mode in ("hybrid", "vector"):
            vector = self.query_vector(query)
            if vector is None:
                reason = self.unavailable_reason() or "the embedding model is not available"
                if mode == "vector":
                    raise SearchUnavailable(f"vector search needs the embedding model: {reason}")
                note = f"full-text search only ({reason})"
        wanted = limit + len(exclude)
        rankings: dict[str, list[int]] = {}
        best_chunk: dict[int, tuple[int, int]] = {}
        if mode in ("hybrid", "fts"):
            conversations = None if conversation_ids is None else list(conversation_ids)

            def run(expression: str, n: int) -> list[int]:
                return self._store.fts_message_ids(expression, n, conversation_ids=conversations)

            if vector is not None and self.all_embedded():
                # Beside the vectors, only messages with every word: the any-word tier found
                # less, fused, than the vectors alone (bench/retrieval_quality.py), and it is
                # the costly query.
                fts_ids = every_word_search(run, query, max(candidates, wanted))
            else:
                fts_ids = tiered_search(run, query, max(candidates, wanted), doc_frequency=self._store.term_frequency)
            rankings["fts"] = [message_id for message_id in fts_ids if message_id not in exclude]
        if vector is not None:
            ordered: list[int] = []
            for chunk_id, message_id, _score in self.vector_chunks(vector, max(candidates, wanted), exclude=exclude,
                                                                 conversations=conversation_ids):
                if message_id not in best_chunk:
                    best_chunk[message_id] = (chunk_id, 0)
                    ordered.append(message_id)
            rankings["vector"] = ordered
        fused = reciprocal_rank_fusion(rankings, limit=limit)
        ran = mode if vector is not None or mode == "fts" else "fts"
        return SearchResult(self._hits(query, fused, best_chunk), ran, note)

    def _hits(self, query: str, items: Sequence[FusedHit[int]],
              best_chunk: dict[int, tuple[int, int]]) -> tuple[ProjectHit, ...]:
        # Snippets are cut from each final hit's best chunk in Python: asking FTS5 for them ran the
        # MATCH again (prefix terms over the whole index, ~0.5 s at 100k messages) for ten rows.
        ids = [hit.id for hit in items]
        messages = self._store.messages_by_id(ids)
        chunk_places = self._store.chunk_locations([chunk for chunk, _ in best_chunk.values()])
        hits = []
        for item in items:
            message = messages.get(item.id)
            if message is None:
                continue
            place = chunk_places.get(best_chunk.get(message.id, (-1, 0))[0])
            start, end = (place.start, place.end) if place is not None else _best_chunk(message.content, query)
            snippet = marked_excerpt(message.content[start:end], query)
            hits.append(ProjectHit(message, item.score, snippet, item.sources, start, end))
        return tuple(hits)
