"""Conversations and messages: writing, reading, paging windows, immutability."""

from __future__ import annotations

import dataclasses
from datetime import UTC

import pytest

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.turns import Usage


def test_main_conversation_is_created_once(store: Store) -> None:
    first = store.main_conversation()
    assert first.id == "main"
    assert first.branch_id is None
    assert first.project_id == store.project.id
    assert store.main_conversation() == first
    assert store.get_conversation("main") == first
    assert store.get_conversation("branch:99") is None


def test_native_session_is_remembered_per_conversation(store: Store) -> None:
    store.set_native_session("main", "claude", "sess-123")
    conv = store.get_conversation("main")
    assert conv is not None
    assert (conv.native_engine, conv.native_session_id) == ("claude", "sess-123")
    store.set_native_session("main", "codex", None)
    conv = store.get_conversation("main")
    assert conv is not None
    assert (conv.native_engine, conv.native_session_id) == ("codex", None)


def test_add_and_get_message(store: Store) -> None:
    msg = store.add_message("main", "assistant", "hello", persona="Architect", engine="claude",
                            model="opus", status="streaming")
    assert (msg.role, msg.persona, msg.engine, msg.model, msg.status, msg.content) == (
        "assistant", "Architect", "claude", "opus", "streaming", "hello")
    assert msg.usage == Usage()
    assert msg.created_at.tzinfo == UTC
    assert store.get_message(msg.id) == msg
    assert store.get_message(msg.id + 1000) is None


def test_update_message_changes_only_given_fields(store: Store) -> None:
    msg = store.add_message("main", "assistant", "partial", status="streaming", engine="codex")
    done = store.update_message(msg.id, content="partial and complete", status="done",
                                usage=Usage(120, 40, 100, 0.0123), native_session_id="thread-9")
    assert done.content == "partial and complete"
    assert done.status == "done"
    assert done.usage == Usage(input_tokens=120, output_tokens=40, cached_tokens=100, cost_usd=0.0123)
    assert done.native_session_id == "thread-9"
    assert done.engine == "codex"
    assert done.updated_at >= msg.updated_at
    failed = store.update_message(msg.id, status="error", error_kind="rate_limit", error_message="slow down")
    assert (failed.error_kind, failed.error_message, failed.content) == ("rate_limit", "slow down",
                                                                       "partial and complete")
    assert store.get_message(msg.id) == failed


def test_invalid_values_are_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="role"):
        store.add_message("main", "robot", "x")
    with pytest.raises(ValueError, match="status"):
        store.add_message("main", "user", "x", status="finished")
    with pytest.raises(ValueError, match="unknown conversation"):
        store.add_message("branch:404", "user", "x")
    with pytest.raises(ValueError, match="unknown message"):
        store.update_message(12345, content="x")
    assert store.count_messages("main") == 0


def test_window_paging_over_a_thousand_messages(store: Store) -> None:
    with store.transaction():
        ids = [store.add_message("main", "user" if n % 2 else "assistant", f"message {n}").id
               for n in range(1000)]
    assert store.count_messages("main") == 1000
    last = store.list_messages("main", limit=50)
    assert [m.id for m in last] == ids[-50:]  # the newest 50, oldest first
    older = store.list_messages("main", before_id=last[0].id, limit=50)
    assert [m.id for m in older] == ids[-100:-50]
    # walking back to the start visits every message exactly once
    seen: list[int] = []
    before: int | None = None
    while True:
        window = store.list_messages("main", before_id=before, limit=128)
        if not window:
            break
        seen = [m.id for m in window] + seen
        before = window[0].id
    assert seen == ids
    assert store.list_messages("main", before_id=ids[3], limit=100) == tuple(
        store.get_message(i) for i in ids[:3])
    assert len(store.list_messages("main")) == 100  # default window
    assert store.list_messages("main", limit=0) == ()


def test_conversations_do_not_mix(store: Store) -> None:
    branch = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                 mode="chat", kind="general", label="side")
    store.add_message("main", "user", "in main")
    store.add_message(branch.shadow_conversation_id, "user", "in branch")
    assert [m.content for m in store.list_messages("main")] == ["in main"]
    assert [m.content for m in store.list_messages(branch.shadow_conversation_id)] == ["in branch"]
    assert store.count_messages(branch.shadow_conversation_id) == 1


def test_records_are_immutable(store: Store) -> None:
    msg = store.add_message("main", "user", "frozen")
    with pytest.raises(dataclasses.FrozenInstanceError):
        msg.content = "changed"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        msg.usage.input_tokens = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        store.project.name = "x"  # type: ignore[misc]
    plan = store.create_plan(title="T", slug="t", subtasks=[("a", "b")], constraints=["c"])
    assert isinstance(plan.constraints, tuple)
    assert isinstance(plan.subtasks, tuple)
    with pytest.raises(TypeError):
        plan.pending_detail["x"] = 1  # type: ignore[index]
    assert store.get_message(msg.id) == msg


def test_list_messages_pages_backwards_and_forwards_by_id(store: Store) -> None:
    ids = [store.add_message("main", "user", f"m{i}").id for i in range(1, 11)]
    assert [m.content for m in store.list_messages("main", limit=3)] == ["m8", "m9", "m10"]
    assert [m.content for m in store.list_messages("main", before_id=ids[4], limit=3)] == ["m2", "m3", "m4"]
    assert [m.content for m in store.list_messages("main", after_id=ids[4], limit=3)] == ["m6", "m7", "m8"]
    assert [m.content for m in store.list_messages("main", after_id=ids[7], limit=5)] == ["m9", "m10"]
    assert store.list_messages("main", after_id=ids[-1], limit=5) == ()
    between = store.list_messages("main", after_id=ids[1], before_id=ids[5], limit=10)
    assert [m.content for m in between] == ["m3", "m4", "m5"]


def test_tools_are_stored_with_the_message_bounded_and_readable(store: Store) -> None:
    from tunaflow_tui.core.storage.columns import MAX_STORED_TOOLS, MAX_TOOL_DETAIL, load_tools
    from tunaflow_tui.core.turns import ToolLine

    message = store.add_message("main", "assistant", "", persona="developer", status="streaming")
    assert message.tools == ()
    many = [ToolLine("Bash", f"step {i} " + "x" * 1000) for i in range(MAX_STORED_TOOLS + 20)]
    stored = store.update_message(message.id, tools=many, status="done")
    assert len(stored.tools) == MAX_STORED_TOOLS
    assert stored.tools[-1].detail.startswith(f"step {MAX_STORED_TOOLS + 19} ")  # the latest are kept
    assert all(len(t.detail) <= MAX_TOOL_DETAIL for t in stored.tools)
    assert store.get_message(message.id).tools == stored.tools
    assert load_tools("not json") == () and load_tools('{"a": 1}') == () and load_tools('[["Read"]]') == (
        ToolLine("Read", ""),)


def test_add_messages_appends_many_in_order_in_one_go(store: Store) -> None:
    store.add_message("main", "user", "before")
    added = store.add_messages("main", (
        {"role": "user", "content": f"question {n}"} if n % 2 else
        {"role": "assistant", "content": f"answer {n}", "persona": "architect", "engine": "demo"}
        for n in range(1, 1201)
    ))  # fmt: skip
    assert added == 1200
    assert store.count_messages("main") == 1201
    first = store.list_messages("main", after_id=0, limit=3)
    assert [m.content for m in first] == ["before", "question 1", "answer 2"]
    assert first[2].persona == "architect" and first[2].status == "done"
    assert store.list_messages("main", limit=1)[0].content == "answer 1200"
    assert [hit.message.content for hit in store.search_messages("answer 1200")][:1] == ["answer 1200"]


def test_add_messages_refuses_a_bad_role_and_writes_nothing(store: Store) -> None:
    with pytest.raises(ValueError):
        store.add_messages("main", [{"role": "user", "content": "fine"}, {"role": "robot", "content": "no"}])
    assert store.count_messages("main") == 0
