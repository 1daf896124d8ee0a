"""What a roundtable seat is given besides the topic: the minimal context and the picks from earlier rounds.

Pure tests of the selection (fake vectors are enough for its arithmetic; the model's own behaviour
is tested in tests/core/memory) and of the recall's fall-backs, with a real store.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest
from numpy.typing import NDArray
from roundtable_seats import no_model

from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.model_files import EmbeddingUnavailable, ModelStatus
from tunaflow_tui.core.memory.selection import LabelledChunk, SelectedChunk
from tunaflow_tui.core.roundtable.seat_prompts import EarlierRounds, SpokenAnswer
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import Approve
from tunaflow_tui.core.workflow.service import WorkflowService
from tunaflow_tui.runtime.ports import ProjectData
from tunaflow_tui.runtime.roundtable_context import (
    EarlierRoundsRecall,
    StoredAnswer,
    diverse_best,
    minimal_context,
    runtime_minimal_context,
)

TOPIC = "How should the storage layer be split?"


def vec(*values: float, length: float = 1.0) -> NDArray[np.float32]:
    """A 384-dimensional vector pointing along ``values``, of the given length."""
    vector = np.zeros(384, dtype=np.float32)
    vector[: len(values)] = values
    return (vector / np.linalg.norm(vector) * length).astype(np.float32)


def pick(text: str, position: int, score: float, vector: NDArray[np.float32]) -> SelectedChunk:
    return SelectedChunk(LabelledChunk("ada", 1, text, vector), position, score)


def texts(chosen: Sequence[SelectedChunk]) -> list[str]:
    return [item.chunk.text for item in chosen]


# ------------------------------------------------------------------ the minimal context

def test_without_an_active_plan_a_seat_is_told_the_project_and_that_there_is_no_plan() -> None:
    assert minimal_context("ledger", "/home/u/ledger", None) == "Project: ledger (/home/u/ledger)\nActive plan: none."


def test_the_active_plan_s_summary_and_subtasks_are_given_on_their_own_lines(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        service = WorkflowService(store)
        plan = service.create_plan_from_proposal(
            title="Split the storage layer", slug="split-storage",
            description="Move the schema\n  and the   records\n\ninto their own modules.",
            subtasks=[("Move the schema", ""), ("Move the records", "")])
        service.apply(plan.id, Approve(), actor="user")
        service.mark_subtask_done(plan.id, 1)
        plan = store.get_plan(plan.id)
        assert plan is not None
        assert minimal_context("ledger", "/home/u/ledger", plan) == (
            "Project: ledger (/home/u/ledger)\n"
            f"Active plan: #{plan.id} “Split the storage layer” — phase {plan.phase}.\n"
            "Plan summary: Move the schema and the records into their own modules.\n"
            "Subtasks: 1. Move the schema (done); 2. Move the records (pending)")


def test_the_runtime_s_context_names_its_project_and_its_plan_still_moving(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        plan = WorkflowService(store).create_plan_from_proposal(title="Split the storage layer", slug="split")
        context = runtime_minimal_context(cast(ProjectData, SimpleNamespace(store=store)))
        project = store.project
    assert project.name and project.path
    assert context.splitlines() == [f"Project: {project.name} ({project.path})",
                                    f"Active plan: #{plan.id} “Split the storage layer” — phase {plan.phase}."]


# ------------------------------------------------------------------ diverse best picks

def test_a_passage_overlapping_a_kept_one_but_far_more_relevant_beats_an_off_topic_one() -> None:
    ranked = [pick("the split, in three modules", 0, 0.95, vec(1.0)),
              pick("the split, and where the WAL goes", 1, 0.9, vec(0.5, 0.75 ** 0.5)),
              pick("the coffee machine", 2, 0.6, vec(0.0, 0.0, 1.0))]
    # relevance 0.7 × 0.9 − 0.3 × 0.5 (its overlap) = 0.48 beats 0.7 × 0.6 = 0.42
    assert texts(diverse_best(ranked, keep=2)) == ["the split, in three modules", "the split, and where the WAL goes"]


@pytest.mark.parametrize("length", [0.5, 3.0])
def test_a_near_copy_is_recognised_and_a_distinct_passage_kept_whatever_the_vectors_length(length: float) -> None:
    ranked = [pick("split now", 0, 0.9, vec(1.0, length=length)),
              pick("split now, as I said", 1, 0.89, vec(1.0, 0.1, length=length)),
              pick("the flag decides", 2, 0.5, vec(0.3, 0.0, 0.91 ** 0.5, length=length))]
    assert texts(diverse_best(ranked, keep=2)) == ["split now", "the flag decides"]


def test_an_exact_copy_is_left_out_even_when_only_exact_copies_count_as_copies() -> None:
    ranked = [pick("split now", 0, 0.9, vec(1.0)), pick("split now", 1, 0.9, vec(1.0)),
              pick("the flag decides", 2, 0.3, vec(0.0, 1.0))]
    assert texts(diverse_best(ranked, keep=2, same=1.0)) == ["split now", "the flag decides"]


def test_of_two_equally_good_picks_the_earlier_passage_wins_the_last_place() -> None:
    ranked = [pick("first said", 0, 0.6, vec(1.0)), pick("said later", 1, 0.6, vec(0.0, 1.0))]
    assert texts(diverse_best(ranked, keep=1)) == ["first said"]


def test_with_novelty_alone_equally_novel_passages_are_still_taken_most_relevant_first() -> None:
    ranked = [pick("off topic", 0, 0.3, vec(1.0)), pick("on topic", 1, 0.9, vec(0.0, 1.0)),
              pick("close to it", 2, 0.7, vec(0.0, 0.0, 1.0))]
    assert texts(diverse_best(ranked, keep=2, relevance=0.0)) == ["on topic", "close to it"]


# ------------------------------------------------------------------ the recall and its fall-backs

class CountingLoads(Embedder):
    """A real embedder whose model file is missing, counting the times it is asked to load."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(env={"TUNAFLOW_EMBEDDING_MODEL": str(tmp / "missing-model.onnx")})
        self.loads = 0

    def load(self) -> None:
        self.loads += 1
        super().load()


class FixedVectors:
    """Stands in for the model: each paragraph and query has a vector chosen by the test."""

    def __init__(self, vectors: dict[str, NDArray[np.float32]]) -> None:
        self.vectors = vectors

    @property
    def loaded(self) -> bool:
        return True

    @property
    def error(self) -> EmbeddingUnavailable | None:
        return None

    def available(self) -> bool:
        return True

    def status(self) -> ModelStatus:
        raise NotImplementedError

    def load(self) -> None:
        return None

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return np.stack([self.vectors[text] for text in texts])

    def embed_one(self, text: str) -> NDArray[np.float32]:
        return self.vectors[text]


def _answers(store: Store, said: Sequence[tuple[str, int, str]]) -> list[StoredAnswer]:
    answers = []
    for seat, round_no, text in said:
        message = store.add_message("main", "assistant", text, persona=seat, engine="claude")
        answers.append(StoredAnswer(message.id, text, SpokenAnswer(seat, "proposer", round_no, text)))
    return answers


def _missing_model_reason(tmp: Path) -> str:
    with pytest.raises(EmbeddingUnavailable) as caught:
        no_model(tmp).load()
    return caught.value.reason


async def test_with_embeddings_turned_off_seats_get_every_answer_and_the_moderator_s_word(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        answers = _answers(store, [("alice", 1, "Split now."), ("bob", 2, "Not yet.")])
        recall = EarlierRoundsRecall(store, None)
        earlier = await recall.recall(answers, [(2, "Keep the WAL where it is.")], TOPIC, "")
    assert earlier == EarlierRounds("### alice (proposer), round 1\nSplit now.\n\n"
                                    "### The moderator (the user), round 2\nKeep the WAL where it is.\n\n"
                                    "### bob (proposer), round 2\nNot yet.", compressed=False)
    assert recall.unavailable_reason == "embeddings are turned off", "the user is told why"


async def test_before_any_answer_there_is_nothing_to_recall_and_the_model_is_not_touched(tmp_path: Path) -> None:
    embedder = CountingLoads(tmp_path)
    with Store.open(tmp_path) as store:
        recall = EarlierRoundsRecall(store, embedder)
        earlier = await recall.recall([], [(1, "Start with the schema.")], TOPIC, "")
    assert earlier == EarlierRounds("### The moderator (the user), round 1\nStart with the schema.", compressed=False)
    assert embedder.loads == 0 and recall.unavailable_reason is None


async def test_a_model_found_missing_when_recalling_is_named_and_not_tried_again(tmp_path: Path) -> None:
    embedder = CountingLoads(tmp_path)
    with Store.open(tmp_path) as store:
        answers = _answers(store, [("alice", 1, "Split now.")])
        recall = EarlierRoundsRecall(store, embedder)
        first = await recall.recall(answers, [], TOPIC, "")
        second = await recall.recall(answers, [], TOPIC, "")
    assert first == second == EarlierRounds("### alice (proposer), round 1\nSplit now.", compressed=False)
    assert recall.unavailable_reason == _missing_model_reason(tmp_path)
    assert embedder.loads == 1


def test_a_model_found_missing_while_storing_vectors_is_named_and_not_tried_again(tmp_path: Path) -> None:
    embedder = CountingLoads(tmp_path)
    with Store.open(tmp_path) as store:
        answers = _answers(store, [("alice", 1, "Split now."), ("bob", 1, "Not yet.")])
        recall = EarlierRoundsRecall(store, embedder)
        recall.store_vectors(answers[:1])
        assert recall.unavailable_reason == _missing_model_reason(tmp_path)
        recall.store_vectors(answers[1:])
    assert embedder.loads == 1, "later answers do not try the missing model again"


async def test_the_passage_that_adds_a_fact_is_recalled_though_five_restatements_score_higher(
        tmp_path: Path) -> None:
    restatements = [f"On the topic, {seat} in round {r}: the storage layer should be split."
                    for seat, r in [("ada", 1), ("bram", 1), ("chen", 1), ("ada", 2), ("bram", 2)]]
    fact = "Ship behind FLAG-1 or the rollout is blocked."
    vectors = {text: vec(1.0, 1.0, *([0.0] * k), 0.45) for k, text in enumerate(restatements)}
    vectors[fact] = vec(0.6, 0, 0, 0, 0, 0, 0, 0, 0.8)
    vectors[TOPIC] = vec(1.0)
    said: list[tuple[str, int, str]] = [("ada", 1, restatements[0]), ("bram", 1, restatements[1]),
                                        ("chen", 1, restatements[2]),
                                        ("ada", 2, restatements[3]), ("bram", 2, restatements[4] + "\n\n" + fact)]
    embedder: Any = FixedVectors(vectors)
    with Store.open(tmp_path) as store:
        recall = EarlierRoundsRecall(store, embedder)
        earlier = await recall.recall(_answers(store, said), [], TOPIC, "")
    assert earlier.compressed
    assert f"[bram, round 2]\n{fact}" in earlier.text, "six passages compete for five places, not the top five"
    assert earlier.text.count("[") == 5
