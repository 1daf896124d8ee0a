"""What a roundtable seat knows besides the topic: the minimal project context and the earlier rounds.

**Minimal context** (spec §5): the project's name and path and the active plan's summary, cut to
:data:`MINIMAL_CONTEXT_TOKENS` — not the full ContextPack.

**Earlier rounds** from round 2 on: each earlier answer is cut into chunks of at most 800
characters and embedded with the local ONNX model once; the vectors are stored with the message
(the ``message_chunks`` table the project search uses) and read back, never recomputed. The chunks
most similar to the topic and the latest user turn (top 5, cosine ≥ 0.2) replace the transcript,
labelled with speaker and round; they are picked for relevance *and* novelty (:func:`diverse_best`),
so five restatements of the topic do not crowd out the passage that adds a fact. Loading the model and embedding run on a worker thread. With no
model, the seats get the full transcript, and the user is told once.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tunaflow_tui.core.markers import scrub_markers
from tunaflow_tui.core.memory.chunks import Chunk, split_into_chunks
from tunaflow_tui.core.memory.model_files import MODEL_ID, EmbeddingUnavailable
from tunaflow_tui.core.memory.selection import TOP_CHUNKS, SelectedChunk
from tunaflow_tui.core.roundtable.seat_prompts import EarlierRounds, SpokenAnswer, full_transcript
from tunaflow_tui.core.storage.chunk_store import ChunkToSave
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.runtime.tokens import default_counter

if TYPE_CHECKING:
    from tunaflow_tui.core.memory.embedding_port import TextEmbedder
    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.runtime.ports import ProjectData

MINIMAL_CONTEXT_TOKENS = 200
DUPLICATE_COSINE = 0.92
"""Cosine above which a chunk only repeats one already kept for the next round."""
RELEVANCE_WEIGHT = 0.7
"""Weight of relevance against novelty when excerpts are picked (maximal marginal relevance)."""
_PARAGRAPH = re.compile(r"\S(?:.*?\S)?(?=\n[ \t]*\n|\s*\Z)", re.DOTALL)
NOTHING_RELEVANT = "(No passage of the earlier rounds is close enough to the topic to be repeated here.)"


def minimal_context(project_name: str, project_path: str, plan: PlanRecord | None) -> str:
    """The project's identity and the active plan's summary, at most :data:`MINIMAL_CONTEXT_TOKENS` tokens."""
    lines = [f"Project: {project_name} ({project_path})"]
    if plan is None:
        lines.append("Active plan: none.")
    else:
        lines.append(f"Active plan: #{plan.id} “{plan.title}” — phase {plan.phase}.")
        summary = " ".join(plan.description.split())
        if summary:
            lines.append(f"Plan summary: {summary}")
        if plan.subtasks:
            lines.append("Subtasks: " + "; ".join(f"{s.index}. {s.title} ({s.status})" for s in plan.subtasks))
    return default_counter().truncate("\n".join(lines), MINIMAL_CONTEXT_TOKENS)


def runtime_minimal_context(rt: ProjectData) -> str:
    """:func:`minimal_context` of the runtime's project and its active plan."""
    from tunaflow_tui.runtime.planning import active_plan

    project = rt.store.project
    return minimal_context(project.name, project.path, active_plan(rt))


def paragraph_chunks(text: str) -> list[Chunk]:
    """``text`` cut at its paragraphs, each kept whole up to 800 characters (longer ones cut as usual).

    Unlike the search index's chunks, neighbouring paragraphs are not packed together: one decisive
    paragraph then stands on its own when it is compared with the topic, not diluted by its neighbours.
    """
    pieces: list[Chunk] = []
    for match in _PARAGRAPH.finditer(text):
        for part in split_into_chunks(match.group(0)):
            start = match.start() + part.start
            pieces.append(Chunk(len(pieces), start, start + len(part.text), part.text))
    return pieces


def diverse_best(ranked: Sequence[SelectedChunk], keep: int = TOP_CHUNKS, *, relevance: float = RELEVANCE_WEIGHT,
                 same: float = DUPLICATE_COSINE) -> list[SelectedChunk]:
    """``keep`` chunks of ``ranked`` chosen for relevance and for saying something the others do not.

    Maximal marginal relevance: each pick maximises ``relevance × score − (1 − relevance) × its
    highest cosine with a chunk already picked``. Seats restate the topic and each other; five
    restatements would fill every place and crowd out the one passage that adds a fact, so a chunk
    close to one already kept must be clearly more relevant to win its place. A near copy (cosine ≥
    ``same``) is never kept. The first pick is the best-scoring chunk; the result is in transcript
    order, like ``ranked``.
    """
    import numpy as np

    candidates = sorted(ranked, key=lambda chosen: (-chosen.score, chosen.position))
    units = []
    for item in candidates:
        vector = np.asarray(item.chunk.vector, dtype=np.float32)
        units.append(vector / max(float(np.linalg.norm(vector)), 1e-12))
    closest = [0.0] * len(candidates)  # each candidate's highest cosine with a kept chunk
    open_ = list(range(len(candidates)))
    kept: list[SelectedChunk] = []
    while open_ and len(kept) < keep:
        best = max(open_, key=lambda i: (relevance * candidates[i].score - (1 - relevance) * closest[i], -i))
        open_.remove(best)
        kept.append(candidates[best])
        for i in open_:
            closest[i] = max(closest[i], float(np.dot(units[i], units[best])))
        open_ = [i for i in open_ if closest[i] < same]
    return sorted(kept, key=lambda chosen: chosen.position)


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """An earlier answer as the recall needs it: its message (for stored chunks) and what was said."""

    message_id: int
    content: str
    answer: SpokenAnswer


class EarlierRoundsRecall:
    """Builds what seats are told of earlier rounds: selected excerpts, or the full transcript."""

    def __init__(self, store: Store, embedder: TextEmbedder | None) -> None:
        self._store = store
        self._embedder = embedder
        self._query_vectors: dict[str, object] = {}
        self.unavailable_reason: str | None = None if embedder is not None else "embeddings are turned off"

    async def recall(self, answers: Sequence[StoredAnswer], moderator_turns: Sequence[tuple[int, str]],
                     topic: str, latest_user_turn: str) -> EarlierRounds:
        """Excerpts of ``answers`` most relevant to the topic and the latest user turn (full text without a model)."""
        full = full_transcript([a.answer for a in answers], moderator_turns)
        if not answers:
            return EarlierRounds(full, compressed=False)
        if self.unavailable_reason is None:
            try:
                text = await asyncio.to_thread(self._select, answers, topic, latest_user_turn)
                return EarlierRounds(text, compressed=True)
            except EmbeddingUnavailable as exc:
                self.unavailable_reason = exc.reason
        return EarlierRounds(full, compressed=False)

    # ---------------------------------------------------------------- worker thread
    def store_vectors(self, answers: Sequence[StoredAnswer]) -> None:
        """Embed and store the chunks of ``answers`` not stored yet (a worker thread; quiet without a model).

        Called as each answer is stored, so that the next round finds its vectors ready.
        """
        if self.unavailable_reason is not None or self._embedder is None:
            return
        try:
            self._embedder.load()
            self._vectors_of(answers)
        except EmbeddingUnavailable as exc:
            self.unavailable_reason = exc.reason
        except Exception:  # the project closed meanwhile, or one text failed: the next round embeds it
            return

    def _vectors_of(self, answers: Sequence[StoredAnswer]) -> list[tuple[StoredAnswer, str, bytes]]:
        """(answer, chunk text, vector blob) for every chunk, embedding only what is not stored yet."""
        from tunaflow_tui.core.memory.vectors import vector_to_blob

        assert self._embedder is not None
        stored = self._store.stored_chunks([a.message_id for a in answers], MODEL_ID)
        out: list[tuple[StoredAnswer, str, bytes]] = []
        for answer in answers:
            chunks = stored.get(answer.message_id)
            if chunks is None:
                pieces = paragraph_chunks(answer.content)
                vectors = self._embedder.embed([piece.text for piece in pieces])
                rows = [ChunkToSave(p.index, p.start, p.end, vector_to_blob(v))
                        for p, v in zip(pieces, vectors, strict=True)]
                self._store.save_message_chunks(answer.message_id, answer.content, MODEL_ID, rows)
                out += [(answer, answer.content[row.start:row.end], row.vector or b"") for row in rows]
                continue
            out += [(answer, answer.content[c.start:c.end], c.vector) for c in chunks if c.vector is not None]
        return out

    def _query(self, text: str) -> object:
        assert self._embedder is not None
        if text not in self._query_vectors:
            self._query_vectors[text] = self._embedder.embed_one(text)
        return self._query_vectors[text]

    def _select(self, answers: Sequence[StoredAnswer], topic: str, latest_user_turn: str) -> str:
        from tunaflow_tui.core.memory.selection import LabelledChunk, render_selection, select_relevant_chunks
        from tunaflow_tui.core.memory.vectors import blob_to_vector

        assert self._embedder is not None
        self._embedder.load()
        chunks = [LabelledChunk(a.answer.speaker, a.answer.round, scrub_markers(text).strip(), blob_to_vector(blob))
                  for a, text, blob in self._vectors_of(answers) if blob]
        queries = [self._query(topic)]
        if latest_user_turn.strip():
            queries.append(self._query(latest_user_turn))
        ranked = select_relevant_chunks(chunks, queries, top_n=len(chunks))  # type: ignore[arg-type]
        return render_selection(diverse_best(ranked)) or NOTHING_RELEVANT
