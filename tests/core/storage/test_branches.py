"""Branches: creation with a shadow conversation, listing, updates, deletion rules."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.storage import Store


def _fork(store: Store, **overrides: object) -> int:
    checkpoint = store.add_message("main", "assistant", "fork here")
    fields: dict[str, object] = dict(conversation_id="main", checkpoint_id=checkpoint.id, parent_branch_id=None,
                                     mode="chat", kind="general", label="try another way")
    fields.update(overrides)
    return store.create_branch(**fields).id  # type: ignore[arg-type]


def test_create_branch_makes_its_shadow_conversation(store: Store) -> None:
    checkpoint = store.add_message("main", "assistant", "fork here")
    branch = store.create_branch(conversation_id="main", checkpoint_id=checkpoint.id, parent_branch_id=None,
                                 mode="roundtable", kind="review", label="review round 1",
                                 git_branch="tunaflow/x", worktree_path="/tmp/wt")
    assert (branch.mode, branch.kind, branch.status, branch.label) == ("roundtable", "review", "active",
                                                                     "review round 1")
    assert (branch.checkpoint_id, branch.git_branch, branch.worktree_path) == (checkpoint.id, "tunaflow/x",
                                                                               "/tmp/wt")
    assert branch.engine_session_id is None
    assert branch.shadow_conversation_id == f"branch:{branch.id}"
    shadow = store.get_conversation(branch.shadow_conversation_id)
    assert shadow is not None and shadow.branch_id == branch.id
    assert store.get_branch(branch.id) == branch


def test_branches_of_branches_track_their_parent(store: Store) -> None:
    parent = store.get_branch(_fork(store))
    assert parent is not None
    cp = store.add_message(parent.shadow_conversation_id, "assistant", "deeper")
    child = store.create_branch(conversation_id=parent.shadow_conversation_id, checkpoint_id=cp.id,
                                parent_branch_id=parent.id, mode="chat", kind="general", label="deeper")
    assert child.parent_branch_id == parent.id
    assert child.conversation_id == parent.shadow_conversation_id


def test_list_and_update_branches(store: Store) -> None:
    first, second = _fork(store), _fork(store, label="second")
    assert [b.id for b in store.list_branches()] == [first, second]
    adopted = store.update_branch(first, status="adopted", label="kept", engine_session_id="s-1")
    assert (adopted.status, adopted.label, adopted.engine_session_id) == ("adopted", "kept", "s-1")
    assert [b.id for b in store.list_branches(status="active")] == [second]
    assert [b.id for b in store.list_branches(status="adopted")] == [first]
    with pytest.raises(ValueError, match="cannot update"):
        store.update_branch(first, mode="roundtable")
    with pytest.raises(ValueError, match="status"):
        store.update_branch(first, status="merged")
    with pytest.raises(ValueError, match="unknown branch"):
        store.update_branch(9999, label="x")
    with pytest.raises(ValueError, match="mode"):
        _fork(store, mode="debate")


def test_deleting_an_active_branch_removes_its_messages(store: Store) -> None:
    branch_id = _fork(store)
    shadow = f"branch:{branch_id}"
    store.add_message(shadow, "user", "scratch work")
    store.delete_branch(branch_id)
    assert store.get_branch(branch_id) is None
    assert store.count_messages(shadow) == 0
    assert store.get_conversation(shadow) is None
    assert store.count_messages("main") == 1  # the checkpoint stays


@pytest.mark.parametrize("status", ["adopted", "archived"])
def test_deleting_a_finished_branch_keeps_its_messages(store: Store, status: str) -> None:
    branch_id = _fork(store)
    shadow = f"branch:{branch_id}"
    store.add_message(shadow, "assistant", "the conclusion")
    store.update_branch(branch_id, status=status)
    store.add_session_link("main", shadow, "adopted")
    store.delete_branch(branch_id)
    assert store.get_branch(branch_id) is None
    assert [m.content for m in store.list_messages(shadow)] == ["the conclusion"]
    assert len(store.list_session_links("main")) == 1
    # a later branch never reuses the kept shadow conversation
    assert _fork(store) != branch_id


def test_delete_unknown_branch_is_an_error(store: Store) -> None:
    with pytest.raises(ValueError, match="unknown branch"):
        store.delete_branch(42)
