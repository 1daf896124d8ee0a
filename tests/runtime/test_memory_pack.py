"""Retrieved chunks in the ContextPack: Architect and Developer get them, within budget; reviewers never."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from runtime_harness import Harness

from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.indexer import EmbeddingIndexer
from tunaflow_tui.core.memory.model_files import MODEL_PACKAGE
from tunaflow_tui.runtime.links import link_similar
from tunaflow_tui.runtime.runtime import WorkflowRuntime
from tunaflow_tui.runtime.tokens import default_counter

OLD_DECISION = "We decided the uploader keeps partial files in a quarantine folder for seven days."


@pytest.fixture
def rt(harness: Harness, tmp_path: Path) -> Iterator[WorkflowRuntime]:
    missing = Embedder(env={"TUNAFLOW_EMBEDDING_MODEL": str(tmp_path / "none.onnx")})  # full text: deterministic
    runtime = WorkflowRuntime(harness.project, harness.settings(), embedder=missing)
    yield runtime
    runtime.close()


def _seed(rt: WorkflowRuntime) -> tuple[int, int]:
    store = rt.store
    branch = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                                 kind="general", label="storage ideas")
    old = store.add_message(branch.shadow_conversation_id, "assistant", OLD_DECISION, persona="architect")
    for i in range(20):
        store.add_message("main", "user" if i % 2 == 0 else "assistant", f"small talk number {i} about colours")
    recent = store.add_message("main", "assistant", "The quarantine folder question is still open.")
    return old.id, recent.id


def test_the_architect_gets_chunks_from_other_conversations_labelled_with_their_source(rt: WorkflowRuntime) -> None:
    old_id, recent_id = _seed(rt)
    request = rt.store.add_message("main", "user", "How long do we keep partial uploader files in quarantine?")
    pack = rt.context.build(role="architect", conversation_id="main", request=request.content,
                            exclude_message_id=request.id)
    sections = {s.name: s for s in pack.sections}
    retrieved = sections["retrieved"].text
    assert OLD_DECISION in retrieved
    assert f"message {old_id}, Architect" in retrieved and "branch:" in retrieved
    assert "still open" not in retrieved, "a message already in the recent turns is not retrieved again"
    assert "still open" in sections["recent"].text and recent_id
    assert request.content not in retrieved
    developer = rt.context.build(role="developer", conversation_id="main", request=request.content)
    assert any(s.name == "retrieved" for s in developer.sections)


def test_reviewers_get_no_retrieval_even_with_history(rt: WorkflowRuntime) -> None:
    _seed(rt)
    for role in ("reviewer", "verifier"):
        for history in (True, False):
            pack = rt.context.build(role=role, conversation_id="main", history=history,
                                    request="Review the uploader quarantine change.")
            assert "retrieved" not in {s.name for s in pack.sections}
            assert OLD_DECISION not in pack.render()


def test_retrieval_stays_within_its_budget_in_whole_chunks(rt: WorkflowRuntime) -> None:
    store = rt.store
    for i in range(12):
        store.add_message("main", "assistant", f"Quarantine note {i}: " + "the uploader quarantine keeps files. " * 8)
    for i in range(14):
        store.add_message("main", "user", f"recent filler {i}")
    rt.settings.context.retrieved_tokens = 150
    rt.settings.memory.retrieved_chunks = 10
    pack = rt.context.build(role="architect", conversation_id="main", request="uploader quarantine")
    retrieved = next(s for s in pack.sections if s.name == "retrieved")
    counter = default_counter()
    assert counter.count(retrieved.text) <= 150 and not retrieved.truncated
    assert retrieved.text.count("[main, message") >= 1
    assert all(part.rstrip().endswith("files.") for part in retrieved.text.split("\n\n")), "no chunk is cut"
    rt.settings.context.max_tokens = 1_000
    small = rt.context.build(role="architect", conversation_id="main", request="uploader quarantine")
    assert small.total_tokens <= 1_000 + 10


def test_the_context_pack_counts_the_persona(rt: WorkflowRuntime) -> None:
    pack = rt.context.build(role="architect", conversation_id="main", request="")
    persona = dict((name, tokens) for name, tokens, _cut in pack.describe())["persona"]
    assert persona > 50, "the Architect's persona is part of what the engine receives"


@pytest.mark.skipif(__import__("importlib").util.find_spec(MODEL_PACKAGE) is None, reason="model not installed")
def test_a_branch_s_first_message_is_embedded_once_for_its_links_and_its_retrieval(harness: Harness) -> None:
    embedder = Embedder(env={})
    rt = WorkflowRuntime(harness.project, harness.settings(), embedder=embedder)
    try:
        rt.store.add_message("main", "assistant", OLD_DECISION, persona="architect")
        branch = rt.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                        mode="chat", kind="general", label="cleanup")
        cid = branch.shadow_conversation_id
        first = rt.store.add_message(cid, "user", "How long do we keep half-uploaded files around?")
        EmbeddingIndexer(rt.store, embedder).run_pass()  # the model loaded and every message embedded
        vectors = rt.memory.search_engine.query_vectors
        rt.settings.memory.link_min_similarity = 0.2
        assert [link.to_conversation_id for link in link_similar(rt, cid)] == ["main"]
        assert vectors.computed == 1
        pack = rt.context.build(role="architect", conversation_id=cid, request=first.content,
                                exclude_message_id=first.id)
        assert OLD_DECISION in next(s for s in pack.sections if s.name == "retrieved").text
        assert vectors.computed == 1, "the turn's request was embedded for the links already"
        rt.context.build(role="architect", conversation_id=cid, request="And the quarantine folder?")
        assert vectors.computed == 2
        rt.context.build(role="reviewer", conversation_id=cid, request="Review the cleanup job.")
        assert vectors.computed == 2, "a reviewer's pack retrieves nothing, so embeds nothing"
    finally:
        rt.close()
