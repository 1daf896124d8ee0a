"""Roundtable compression: the planted relevant chunks are kept, labelled, in transcript order."""

from __future__ import annotations

import numpy as np
import pytest

from tunaflow_tui.core.memory.chunks import split_into_chunks
from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.selection import (
    LabelledChunk,
    render_selection,
    select_relevant_chunks,
)
from tunaflow_tui.core.memory.vectors import InvalidVector

DIM = 384


def axis(i: int, j: int | None = None, weight: float = 0.0) -> np.ndarray:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[i] = 1.0
    if j is not None:
        vector[j] = weight
    return vector


def test_the_top_five_above_the_threshold_come_back_in_transcript_order() -> None:
    chunks = [LabelledChunk("proposer" if i % 2 else "critic", i // 3 + 1, f"chunk {i}", axis(i % 7 + 10, 0, w))
              for i, w in enumerate([0.1, 3.0, 0.0, 0.5, 2.0, 0.3, 1.0, 0.05, 4.0, 0.0])]
    selected = select_relevant_chunks(chunks, [axis(0)])
    # cosine to the topic = w / sqrt(1 + w²): 3.0→.95, 2.0→.89, 4.0→.97, 1.0→.71, 0.5→.45, 0.3→.29
    assert [item.chunk.text for item in selected] == ["chunk 1", "chunk 3", "chunk 4", "chunk 6", "chunk 8"]
    assert [item.position for item in selected] == [1, 3, 4, 6, 8]
    assert selected[0].label == "proposer, round 1" and selected[-1].label == "critic, round 3"


def test_chunks_below_the_threshold_are_left_out_even_with_room() -> None:
    chunks = [LabelledChunk("critic", 1, "weak", axis(1, 0, 0.15)), LabelledChunk("critic", 1, "strong", axis(0))]
    assert [item.chunk.text for item in select_relevant_chunks(chunks, [axis(0)])] == ["strong"]
    assert select_relevant_chunks(chunks[:1], [axis(0)]) == []


def test_a_chunk_close_to_the_latest_user_turn_counts_even_if_far_from_the_topic() -> None:
    chunks = [LabelledChunk("verifier", 2, "about the user's question", axis(5)),
              LabelledChunk("critic", 2, "unrelated", axis(6))]
    selected = select_relevant_chunks(chunks, [axis(0), axis(5)])
    assert [item.chunk.text for item in selected] == ["about the user's question"]
    assert selected[0].score == pytest.approx(1.0)


def test_bad_vectors_and_missing_queries_are_refused() -> None:
    with pytest.raises(ValueError):
        select_relevant_chunks([LabelledChunk("a", 1, "t", axis(0))], [])
    with pytest.raises(InvalidVector, match="chunk vector"):
        select_relevant_chunks([LabelledChunk("a", 1, "t", np.zeros(DIM))], [axis(0)])
    with pytest.raises(InvalidVector, match="query vector"):
        select_relevant_chunks([LabelledChunk("a", 1, "t", axis(0))], [[1.0, 2.0]])
    assert select_relevant_chunks([], [axis(0)]) == []


def test_rendering_labels_each_chunk() -> None:
    chunks = [LabelledChunk("critic", 2, "Keep the cache.", axis(0))]
    assert render_selection(select_relevant_chunks(chunks, [axis(0)])) == "[critic, round 2]\nKeep the cache."


FILLER = [
    ("proposer", 1, "I suggest we begin with the onboarding copy: the welcome screen is too wordy and the "
                    "call to action sits below the fold on small laptops."),
    ("critic", 1, "Colour contrast in the sidebar fails WCAG AA for the muted labels; that should be fixed "
                  "whatever else we decide."),
    ("verifier", 1, "The marketing team wants the release notes in the app itself rather than on the blog."),
    ("proposer", 2, "For the icons we could switch to a single SVG sprite to save requests."),
    ("critic", 2, "Keyboard shortcuts are undocumented; a cheat sheet behind the question mark key would help."),
    ("verifier", 2, "Dark mode colours were picked by eye; we should derive them from the palette tokens."),
]
PLANTED = ("critic", 2, "The session token is stored in localStorage, so any injected script can read it; "
                        "move it to an HttpOnly, SameSite=strict cookie and rotate it on login.")


def test_the_real_model_keeps_the_planted_relevant_chunk(embedder: Embedder) -> None:
    transcript = [*FILLER[:4], PLANTED, *FILLER[4:]]
    pieces = [(speaker, round_, chunk.text) for speaker, round_, text in transcript
              for chunk in split_into_chunks(text)]
    vectors = embedder.embed([text for _, _, text in pieces])
    chunks = [LabelledChunk(s, r, t, v) for (s, r, t), v in zip(pieces, vectors, strict=True)]
    topic = embedder.embed_one("Security review of how the web app handles authentication tokens")
    latest_turn = embedder.embed_one("Where should we keep the login token so XSS cannot steal it?")
    selected = select_relevant_chunks(chunks, [topic, latest_turn], top_n=1)
    assert [item.chunk.text for item in selected] == [PLANTED[2]]
    assert selected[0].label == "critic, round 2"
    everything = select_relevant_chunks(chunks, [topic, latest_turn])
    assert PLANTED[2] in [item.chunk.text for item in everything]
    assert [item.position for item in everything] == sorted(item.position for item in everything)
