"""Cross-session links: a new branch is linked to the earlier conversations most like its first message."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest
from runtime_harness import Harness

from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.indexer import EmbeddingIndexer
from tunaflow_tui.core.memory.model_files import MODEL_PACKAGE
from tunaflow_tui.runtime.links import drop_link, link_new_conversation, link_similar, pack_links
from tunaflow_tui.runtime.runtime import WorkflowRuntime

UPLOADER = "The uploader retries three times with exponential backoff before it gives up."


def _runtime(harness: Harness, embedder: Embedder) -> WorkflowRuntime:
    return WorkflowRuntime(harness.project, harness.settings(), embedder=embedder)


@pytest.fixture
def rt(harness: Harness, tmp_path: Path) -> Iterator[WorkflowRuntime]:
    runtime = _runtime(harness, Embedder(env={"TUNAFLOW_EMBEDDING_MODEL": str(tmp_path / "none.onnx")}))
    yield runtime
    runtime.close()


def _branch(rt: WorkflowRuntime, label: str, first: str) -> str:
    branch = rt.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                                    kind="general", label=label)
    rt.store.add_message(branch.shadow_conversation_id, "user", first)
    return branch.shadow_conversation_id


def test_a_new_branch_links_the_conversations_sharing_its_words_and_cites_them(rt: WorkflowRuntime) -> None:
    rt.store.add_message("main", "user", UPLOADER)
    colours = _branch(rt, "colours", "Make the sidebar colours readable at 256 colours.")
    retry = _branch(rt, "retry", "Should the uploader retries use exponential backoff?")
    [link] = link_similar(rt, retry)
    assert (link.from_conversation_id, link.to_conversation_id, link.kind) == (retry, "main", "related")
    assert link.note.startswith("The uploader retries three times")
    assert link_similar(rt, colours) == ()
    pack = rt.context.build(role="architect", conversation_id=retry, request="go on")
    links = next(s for s in pack.sections if s.name == "links")
    assert "Related main: The uploader retries three times" in links.text
    main_pack = rt.context.build(role="architect", conversation_id="main", request="go on")
    assert "links" not in {s.name for s in main_pack.sections if s.text}, "the older side is not told about itself"


def test_links_are_capped_replaced_and_go_with_a_deleted_branch(rt: WorkflowRuntime) -> None:
    earlier = [_branch(rt, f"try {i}", f"Attempt {i}: uploader retries with exponential backoff.") for i in range(7)]
    newest = _branch(rt, "again", "uploader retries exponential backoff")
    rt.settings.memory.link_max = 5
    links = link_similar(rt, newest)
    assert len(links) == 5 and {link.to_conversation_id for link in links} <= set(earlier)
    again = link_similar(rt, newest)
    assert len([link for link in rt.store.list_session_links(newest) if link.from_conversation_id == newest]) == 5
    target = again[0].to_conversation_id
    rt.store.delete_branch(int(target.split(":")[1]))
    remaining = [link.to_conversation_id for link in rt.store.list_session_links(newest)]
    assert target not in remaining and len(remaining) == 4


def test_a_dropped_link_leaves_the_pack_and_never_comes_back(rt: WorkflowRuntime) -> None:
    rt.store.add_message("main", "user", UPLOADER)
    older = _branch(rt, "older try", "Attempt: the uploader retries with exponential backoff.")
    retry = _branch(rt, "retry", "Should the uploader retries use exponential backoff?")
    links = link_similar(rt, retry)
    assert {link.to_conversation_id for link in links} == {"main", older}
    unwanted = next(link for link in links if link.to_conversation_id == older)
    assert drop_link(rt, unwanted.id) is not None
    pack = rt.context.build(role="architect", conversation_id=retry, request="go on")
    cited = next(s for s in pack.sections if s.name == "links").text
    assert "Related main:" in cited and "older try" not in cited
    assert [link.to_conversation_id for link in pack_links(rt, retry)] == ["main"]
    # Linking again (a later session, or asked for) never brings the dropped conversation back.
    assert link_new_conversation(rt, retry) == ()
    assert [link.to_conversation_id for link in link_similar(rt, retry)] == ["main"]
    assert [link.to_conversation_id for link in pack_links(rt, retry)] == ["main"]
    main_link = pack_links(rt, retry)[0]
    drop_link(rt, main_link.id)
    assert pack_links(rt, retry) == () and link_new_conversation(rt, retry) == ()
    assert "links" not in {s.name for s in rt.context.build(role="architect", conversation_id=retry,
                                                            request="go on").sections}
    assert drop_link(rt, 10_000) is None


def test_a_branch_made_before_another_is_not_linked_to_it(rt: WorkflowRuntime) -> None:
    first = _branch(rt, "first", "uploader retries exponential backoff")
    _branch(rt, "second", UPLOADER)
    assert link_similar(rt, first) == ()


@pytest.mark.skipif(importlib.util.find_spec(MODEL_PACKAGE) is None, reason="model not installed")
def test_with_the_model_links_follow_meaning_above_the_threshold(harness: Harness) -> None:
    embedder = Embedder(env={})
    rt = _runtime(harness, embedder)
    try:
        rt.store.add_message("main", "user", "The nightly CI job broke after we bumped the dependencies.")
        _branch(rt, "colours", "Make the sidebar colours readable at 256 colours.")
        EmbeddingIndexer(rt.store, embedder).run_pass()
        new = _branch(rt, "build", "Why did the build fail after upgrading packages?")
        rt.settings.memory.link_min_similarity = 0.35
        links = link_similar(rt, new)
        assert [link.to_conversation_id for link in links] == ["main"]
        rt.settings.memory.link_min_similarity = 0.99
        assert link_similar(rt, new) == (), "below the threshold nothing is linked, even sharing words"
        assert rt.store.list_session_links(new) == ()
    finally:
        rt.close()


@pytest.mark.asyncio
async def test_the_runtime_links_a_branch_when_its_first_message_arrives(rt: WorkflowRuntime) -> None:
    import asyncio

    from tunaflow_tui.runtime.events import MessageAdded

    rt.store.add_message("main", "user", UPLOADER)
    rt.start_memory()
    branch = _branch(rt, "retry", "uploader retries exponential backoff?")
    rt.emit(MessageAdded(branch, 0, "user"))
    pending = set(rt._background)
    assert pending, "linking runs in the background"
    await asyncio.gather(*pending)
    assert [link.to_conversation_id for link in rt.store.list_session_links(branch)] == ["main"]
