"""Memos and session links."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.storage import Store


def test_memos_by_kind_and_branch(store: Store) -> None:
    branch = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                 mode="roundtable", kind="general", label="rt")
    brief = store.add_memo("roundtable_brief", "## Key Positions\n- claude: yes", conversation_id="main",
                           branch_id=branch.id)
    note = store.add_memo("summary", "summary of older turns")
    assert (brief.kind, brief.branch_id, brief.conversation_id, brief.plan_id) == (
        "roundtable_brief", branch.id, "main", None)
    assert store.list_memos() == (brief, note)
    assert store.list_memos(kind="roundtable_brief") == (brief,)
    assert store.list_memos(branch_id=branch.id) == (brief,)
    assert store.list_memos(kind="summary", branch_id=branch.id) == ()


def test_session_links_are_listed_from_both_ends(store: Store) -> None:
    branch = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                 mode="chat", kind="general", label="b")
    link = store.add_session_link("main", branch.shadow_conversation_id, "adopted", note="3 messages")
    assert (link.from_conversation_id, link.to_conversation_id, link.kind, link.note) == (
        "main", branch.shadow_conversation_id, "adopted", "3 messages")
    assert store.list_session_links("main") == (link,)
    assert store.list_session_links(branch.shadow_conversation_id) == (link,)
    assert store.list_session_links("branch:999") == ()
    with pytest.raises(ValueError, match="unknown conversation"):
        store.add_session_link("main", "branch:999", "adopted")
