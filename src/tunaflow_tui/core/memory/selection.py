"""Choosing what a roundtable's later rounds see of the earlier ones: the most relevant chunks.

Earlier answers are cut into chunks (:mod:`.chunks`) and embedded once, when each answer is
stored. For a new round, each chunk is scored by its best cosine against the query vectors (the
topic and the latest user turn); the top 5 scoring at least 0.2 replace the transcript, put back
in transcript order and labelled with speaker and round. No model runs here: vectors come in, so
this is cheap enough for any thread and trivially testable.

When the model is unavailable there are no vectors; the caller then sends the full transcript.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from tunaflow_tui.core.memory.model_files import EMBEDDING_DIM
from tunaflow_tui.core.memory.vectors import InvalidVector, as_vector

TOP_CHUNKS = 5
MIN_SCORE = 0.2

VectorLike = Sequence[float] | NDArray[np.floating]


@dataclass(frozen=True, slots=True)
class LabelledChunk:
    """A chunk of an earlier answer: who said it, in which round, the text and its vector."""

    speaker: str
    round: int
    text: str
    vector: VectorLike


@dataclass(frozen=True, slots=True)
class SelectedChunk:
    """A chunk kept for the next round, with its place in the transcript and its best cosine."""

    chunk: LabelledChunk
    position: int
    score: float

    @property
    def label(self) -> str:
        """"critic, round 2": who said it and when, for the prompt."""
        return f"{self.chunk.speaker}, round {self.chunk.round}"


def _unit_rows(vectors: Sequence[VectorLike], what: str) -> NDArray[np.float32]:
    try:
        matrix = np.stack([as_vector(vector, EMBEDDING_DIM) for vector in vectors])
    except InvalidVector as exc:
        raise InvalidVector(f"{what}: {exc}") from exc
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        raise InvalidVector(f"{what}: a zero vector has no direction to compare")
    rows: NDArray[np.float32] = (matrix / norms).astype(np.float32)
    return rows


def select_relevant_chunks(chunks: Sequence[LabelledChunk], queries: Sequence[VectorLike], *,
                           top_n: int = TOP_CHUNKS, min_score: float = MIN_SCORE) -> list[SelectedChunk]:
    """The ``top_n`` chunks most similar to any query (cosine ≥ ``min_score``), in transcript order.

    ``chunks`` must be given in transcript order. A chunk's score is its highest cosine over the
    queries; equal scores favour the earlier chunk. Raises :class:`InvalidVector` for a vector
    of the wrong shape, non-finite or zero, and ValueError when no query is given.
    """
    if not queries:
        raise ValueError("at least one query vector (the topic) is needed")
    if not chunks or top_n <= 0:
        return []
    scores = (_unit_rows([chunk.vector for chunk in chunks], "chunk vector")
              @ _unit_rows(queries, "query vector").T).max(axis=1)
    ranked = sorted(range(len(chunks)), key=lambda i: (-float(scores[i]), i))
    kept = [i for i in ranked[:top_n] if float(scores[i]) >= min_score]
    return [SelectedChunk(chunks[i], i, float(scores[i])) for i in sorted(kept)]


def render_selection(selected: Sequence[SelectedChunk]) -> str:
    """The kept chunks as prompt text, each under its label: ``[critic, round 2]`` then the text."""
    return "\n\n".join(f"[{item.label}]\n{item.chunk.text}" for item in selected)
