"""The runtime embeds finished messages in the background and says once when there is no model."""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_harness import Harness

from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.model_files import MODEL_ID, MODEL_PACKAGE
from tunaflow_tui.runtime.events import MemoryProgress, NoticeRaised, RuntimeEvent
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _missing_model(tmp_path: Path) -> Embedder:
    return Embedder(env={"TUNAFLOW_EMBEDDING_MODEL": str(tmp_path / "no-such-model.onnx")})


def test_without_the_model_the_runtime_says_so_once_and_search_uses_full_text(harness: Harness,
                                                                               tmp_path: Path) -> None:
    events: list[RuntimeEvent] = []
    rt = WorkflowRuntime(harness.project, harness.settings(), observer=events.append,
                         embedder=_missing_model(tmp_path))
    try:
        rt.store.add_message("main", "user", "the uploader retries three times")
        rt.start_memory()
        indexer = rt.memory.indexer
        assert indexer is not None and indexer.wait_idle(30)
        message = rt.store.add_message("main", "user", "another one")
        rt.memory.message_settled("main", message.id)
        assert indexer.wait_idle(30)
        notices = [e for e in events if isinstance(e, NoticeRaised) and "Semantic search is off" in e.text]
        assert len(notices) == 1 and "no-such-model.onnx" in notices[0].text
        progress = [e for e in events if isinstance(e, MemoryProgress)]
        assert progress and progress[-1].unavailable is not None
        result = rt.memory.search("uploader retries")
        assert result.mode == "fts" and "full-text search only" in result.note
        assert [hit.message.content for hit in result.hits] == ["the uploader retries three times"]
        assert "full-text search only" in rt.memory.state().describe()
    finally:
        rt.close()


@pytest.mark.skipif(__import__("importlib").util.find_spec(MODEL_PACKAGE) is None, reason="model not installed")
def test_messages_finishing_during_a_session_are_embedded_off_the_event_loop(harness: Harness) -> None:
    events: list[RuntimeEvent] = []
    rt = WorkflowRuntime(harness.project, harness.settings(), observer=events.append, embedder=Embedder(env={}))
    try:
        for i in range(3):
            rt.store.add_message("main", "user", f"older message {i}")
        rt.start_memory()
        indexer = rt.memory.indexer
        assert indexer is not None and indexer.wait_idle(60)
        branch = rt.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                        mode="roundtable", kind="review", label="review")
        reply = rt.store.add_message(branch.shadow_conversation_id, "assistant", "the review found no issue")
        rt.memory.message_settled(branch.shadow_conversation_id, reply.id)
        assert indexer.wait_idle(60)
        counts = rt.store.embedding_counts(MODEL_ID)
        assert (counts.embedded, counts.total) == (4, 4)
        progress = [e for e in events if isinstance(e, MemoryProgress)]
        assert progress[0].running and progress[0].total == 3, "the backfill announces itself"
        assert progress[-1] == MemoryProgress(4, 4, running=False)
    finally:
        rt.close()
