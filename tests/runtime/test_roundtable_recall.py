"""What later rounds see of earlier ones (compressed with the model, in full without it) and the peer ranking."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from roundtable_seats import convene, runtime, said
from runtime_harness import Harness

from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.model_files import MODEL_ID
from tunaflow_tui.core.roundtable.ranking import make_ballots
from tunaflow_tui.core.roundtable.seats import Seat
from tunaflow_tui.runtime.roundtable import RoundtableError
from tunaflow_tui.runtime.roundtable_records import RoundtableEvent, RoundtableNotice
from tunaflow_tui.runtime.tokens import default_counter

FILLER = ("We also discussed logging formats, the colour of the dashboard, the on-call rota for the summer and "
          "how the office coffee machine keeps breaking on Mondays. ")
FACT = "The storage split must keep the WAL checkpoint in the schema module, because migrations hold its lock."


def _long(name: str, extra: str = "") -> str:
    return f"{name} says the storage layer should be split. {extra} " + FILLER * 12


class CountingEmbedder(Embedder):
    """The real model, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts += list(texts)
        return super().embed(texts)


@pytest.fixture(scope="module")
def model_ready() -> None:
    if not Embedder().available():
        pytest.skip("the embedding model package is not installed")


async def test_later_rounds_get_labelled_relevant_excerpts_embedded_once(harness: Harness, model_ready: None) -> None:
    harness.set_script(**{"seat:alice": [said(_long("alice", FACT))], "seat:bob": [said(_long("bob"))],
                          "seat:carol": [said(_long("carol"))]})
    embedder = CountingEmbedder()
    rt = runtime(harness, embedder)
    table = convene(rt, Seat("alice", "fclaude"), Seat("bob", "fcodex", "critic"),
                    Seat("carol", "fclaude", "judge", blind=True))
    first = await table.run_round()
    assert not first.compressed
    second = await table.run_round()
    assert second.compressed
    alice, bob, carol = second.answers
    assert bob.compressed and FACT in bob.prompt
    assert "## Earlier rounds (the most relevant excerpts)" in alice.prompt and alice.compressed
    labels = re.findall(r"^\[(\w+), round (\d)\]$", alice.prompt, re.MULTILINE)
    assert 1 <= len(labels) <= 5 and {round_no for _name, round_no in labels} == {"1"}
    assert FACT in alice.prompt, "the chunk closest to the topic is kept"
    full = sum(default_counter().count(a.message.content) for a in first.answers)
    excerpts = alice.prompt.split("## Earlier rounds (the most relevant excerpts)\n", 1)[1].split("\n\nGive")[0]
    assert default_counter().count(excerpts) < full * 0.6
    assert not carol.compressed and "Earlier rounds" not in carol.prompt, "a blind seat gets no excerpt"
    stored = rt.store.stored_chunks([a.message.id for a in first.answers], MODEL_ID)
    assert set(stored) == {a.message.id for a in first.answers}, "vectors are stored with the answers"
    await table.settle_embedding()  # round 2's answers were embedded as they were stored
    embedded_after_two = list(embedder.texts)
    third = await table.run_round(prefetch=False)
    assert third.compressed
    assert embedder.texts == embedded_after_two, "round 3 embedded nothing: every vector was read back"
    rt.close()


async def test_without_the_model_later_rounds_get_the_full_transcript_and_the_user_is_told_once(
        harness: Harness) -> None:
    harness.set_script(**{"seat:alice": [said("Alice: split now.")], "seat:bob": [said("Bob: not yet.")]})
    events: list[RoundtableEvent] = []
    rt = runtime(harness)  # a model file that does not exist
    table = convene(rt, Seat("alice", "fclaude"), Seat("bob", "fcodex", "critic"), events=events)
    results = await table.run(3)
    assert [r.compressed for r in results] == [False, False, False]
    last = results[2].answers[0]
    assert "## Earlier rounds\n### alice (proposer), round 1\nAlice: split now." in last.prompt
    assert "### bob (critic), round 2\nBob: not yet." in last.prompt
    notices = [e for e in events if isinstance(e, RoundtableNotice)]
    assert len(notices) == 1 and "sent in full" in notices[0].text
    rt.close()


async def test_the_anonymous_ranking_counts_borda_and_leaves_out_a_seat_that_does_not_rank(
        harness: Harness) -> None:
    harness.set_script(**{
        "seat:alice": [said("Alice: split now."), said("1. B — most concrete\n2. A — too vague")],
        "seat:bob": [said("Bob: not yet."), said("1. A — clearest\n2. B — weaker")],
        "seat:carol": [said("Carol: tests first."), said("I would rather not rank my colleagues.")],
    })
    rt = runtime(harness)
    table = convene(rt, Seat("alice", "fclaude"), Seat("bob", "fcodex", "critic"), Seat("carol", "fclaude", "judge"),
                    mode="deliberative")
    with pytest.raises(RoundtableError, match="at least two seats"):
        await convene(rt, Seat("solo", "fclaude")).rank()
    await table.run_round()
    rng = random.Random(11)
    same_draw = make_ballots({"alice": "", "bob": "", "carol": ""}, random.Random(11))
    expected_labels = {ballot.voter: dict(ballot.labels) for ballot in same_draw}
    result = await table.rank(rng)
    assert result.ballots == expected_labels
    assert result.left_out == {"carol": "its reply did not rank every answer exactly once"}
    alice_first = expected_labels["alice"]["B"]
    bob_first = expected_labels["bob"]["A"]
    points = dict(result.scores)
    assert points[alice_first] >= 2 and points[bob_first] >= 2 and sum(points.values()) == 6
    rankings = [m for m in table.messages() if m.meta.get("kind") == "roundtable_ranking"]
    for message in rankings:
        voter = str(message.meta["seat"])
        prompt = str(message.meta["prompt"])
        own = {"alice": "Alice: split now.", "bob": "Bob: not yet.", "carol": "Carol: tests first."}[voter]
        assert own not in prompt, "a seat never ranks its own answer"
        for name in ("alice", "bob", "carol"):
            assert f"{name}," not in prompt and f"({name}" not in prompt, "no name is revealed"
    memo = rt.store.list_memos(kind="roundtable_ranking", branch_id=table.branch.id)[-1]
    assert '"labels"' in memo.content, "the letters are revealed to the user"
    nxt = await table.run_round()
    for answer in nxt.answers:
        assert "most concrete" not in answer.prompt and "clearest" not in answer.prompt, \
            "rankings never reach a later round"
    rt.close()


def test_a_chunk_that_repeats_a_better_one_gives_its_place_to_the_next() -> None:
    import numpy as np

    from tunaflow_tui.core.memory.selection import LabelledChunk, select_relevant_chunks
    from tunaflow_tui.runtime.roundtable_context import diverse_best

    def unit(*values: float) -> np.ndarray:
        vector = np.zeros(384, dtype=np.float32)
        vector[: len(values)] = values
        return vector

    chunks = [LabelledChunk("ada", 1, "split now", unit(1.0, 0.1)),
              LabelledChunk("bram", 1, "split now (again)", unit(1.0, 0.11)),
              LabelledChunk("chen", 2, "the flag decides", unit(0.8, 0.0, 0.6)),
              LabelledChunk("ada", 2, "unrelated", unit(0.0, 1.0))]
    ranked = select_relevant_chunks(chunks, [unit(1.0)], top_n=len(chunks))
    assert [c.chunk.text for c in diverse_best(ranked, keep=2)] == ["split now", "the flag decides"]
    plain_top_two = select_relevant_chunks(chunks, [unit(1.0)], top_n=2)
    assert [c.chunk.text for c in plain_top_two] == ["split now", "split now (again)"], "without it: the copy"


def test_restatements_of_the_topic_do_not_crowd_out_the_passage_that_adds_a_fact() -> None:
    import numpy as np

    from tunaflow_tui.core.memory.selection import LabelledChunk, select_relevant_chunks
    from tunaflow_tui.runtime.roundtable_context import diverse_best

    def unit(*values: float) -> np.ndarray:
        vector = np.zeros(384, dtype=np.float32)
        vector[: len(values)] = values
        return vector / np.linalg.norm(vector)

    # five openings that restate the topic, each a little differently (no near copies: cosine < 0.92
    # between them), and one decisive passage less close to the topic wording but saying something new
    chunks = [LabelledChunk(seat, r, f"On the topic ({seat}, {r})", unit(1.0, 1.0, *([0.0] * k), 0.45))
              for k, (seat, r) in enumerate([("ada", 1), ("bram", 1), ("chen", 1), ("ada", 2), ("bram", 2)])]
    chunks.append(LabelledChunk("chen", 2, "ship behind FLAG-1 or the rollout is blocked", unit(0.6, 0, 0, 0, 0, 0, 0, 0, 0.8)))
    topic = unit(1.0)
    for a in chunks[:5]:
        for b in chunks[:5]:
            if a is not b:
                assert float(np.dot(a.vector, b.vector)) < 0.92
    ranked = select_relevant_chunks(chunks, [topic], top_n=len(chunks))
    kept = [c.chunk.text for c in diverse_best(ranked, keep=5)]
    assert "ship behind FLAG-1 or the rollout is blocked" in kept
    assert len(kept) == 5 and kept[0].startswith("On the topic"), "the best restatement still leads"
    plain = [c.chunk.text for c in select_relevant_chunks(chunks, [topic], top_n=5)]
    assert "ship behind FLAG-1 or the rollout is blocked" not in plain, "by score alone it has no place"


def test_each_excerpt_of_an_answer_is_the_answer_s_own_text_at_its_place() -> None:
    from tunaflow_tui.runtime.roundtable_context import paragraph_chunks

    # a long middle paragraph is cut in several pieces; what a seat is shown is read back from the
    # stored answer at each piece's offsets, so they must point at that piece and nowhere else
    sentences = " ".join(f"Sentence {number} of the long paragraph says a little more." for number in range(60))
    text = f"A short opening.\n\n{sentences}\n\n   The closing word.\n"
    pieces = paragraph_chunks(text)
    assert len(pieces) >= 4, "the long paragraph is cut into pieces of at most 800 characters"
    assert [piece.index for piece in pieces] == list(range(len(pieces)))
    assert [text[piece.start:piece.end] for piece in pieces] == [piece.text for piece in pieces]
    assert pieces[0].text == "A short opening." and pieces[-1].text == "The closing word."
    assert " ".join(piece.text for piece in pieces[1:-1]) == sentences


async def test_answers_not_stored_yet_are_embedded_when_recalled_each_under_its_speaker(
        tmp_path: Path, model_ready: None) -> None:
    from tunaflow_tui.core.roundtable.seat_prompts import SpokenAnswer
    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.runtime.roundtable_context import EarlierRoundsRecall, StoredAnswer

    # the answers' vectors were never stored (their embedding had not run yet): the recall embeds them itself
    said_by = {"alice": FACT, "bob": "Bob says the storage layer split should wait until the migration tests pass."}
    with Store.open(tmp_path) as store:
        answers = []
        for seat, text in said_by.items():
            message = store.add_message("main", "assistant", text, persona=seat, engine="claude")
            answers.append(StoredAnswer(message.id, text, SpokenAnswer(seat, "proposer", 1, text)))
        recall = EarlierRoundsRecall(store, Embedder())
        earlier = await recall.recall(answers, [], "How should the storage layer be split?", "")
        asked = await recall.recall(answers, [], "How should the storage layer be split?", "Where does the WAL go?")
        assert set(store.stored_chunks([a.message_id for a in answers], MODEL_ID)) == {a.message_id for a in answers}
    assert earlier.compressed
    assert f"[alice, round 1]\n{FACT}" in earlier.text
    assert f"[bob, round 1]\n{said_by['bob']}" in earlier.text
    assert asked.compressed and f"[alice, round 1]\n{FACT}" in asked.text, "the user's latest turn is asked too"
