"""Branch lifecycle: rename, archive, restore, delete — and what each refuses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tunaflow_tui.core.settings import EngineConfig, RolesConfig, Settings
from tunaflow_tui.core.storage.records import BranchRecord
from tunaflow_tui.runtime.branching import BranchError
from tunaflow_tui.runtime.runtime import WorkflowRuntime


@pytest.fixture
def rt(tmp_path: Path) -> Iterator[WorkflowRuntime]:
    settings = Settings(roles=RolesConfig(), engines={"demo": EngineConfig(name="demo", type="demo")})
    runtime = WorkflowRuntime(tmp_path, settings)
    yield runtime
    runtime.close()


def _branch_with_messages(rt: WorkflowRuntime, parent: str = "main", n: int = 2) -> BranchRecord:
    anchor = rt.store.add_message(parent, "user", f"anchor in {parent}")
    branch = rt.fork(parent, anchor.id)
    for i in range(n):
        rt.store.add_message(branch.shadow_conversation_id, "user" if i % 2 == 0 else "assistant", f"msg {i}")
    return branch


def test_rename_changes_only_the_label_and_keeps_it_inert(rt: WorkflowRuntime) -> None:
    branch = _branch_with_messages(rt)
    renamed = rt.rename_branch(branch.id, "  JWT \x1b]0;pwned\x07 experiment\n")
    assert renamed.label == "JWT experiment"
    assert (renamed.status, renamed.checkpoint_id) == (branch.status, branch.checkpoint_id)
    with pytest.raises(BranchError, match="cannot be empty"):
        rt.rename_branch(branch.id, "   ")
    assert rt.store.get_branch(branch.id).label == "JWT experiment"  # type: ignore[union-attr]


def test_archive_and_restore(rt: WorkflowRuntime) -> None:
    branch = _branch_with_messages(rt)
    archived = rt.archive_branch(branch.id)
    assert archived.status == "archived" and archived.is_read_only
    assert rt.store.count_messages(branch.shadow_conversation_id) == 2, "archiving keeps the messages"
    with pytest.raises(BranchError, match="archived already"):
        rt.archive_branch(branch.id)
    restored = rt.restore_branch(branch.id)
    assert restored.status == "active" and not restored.is_read_only
    with pytest.raises(BranchError, match="active already"):
        rt.restore_branch(branch.id)


def test_deleting_an_active_branch_removes_its_messages(rt: WorkflowRuntime) -> None:
    branch = _branch_with_messages(rt, n=3)
    main_before = rt.store.count_messages("main")
    rt.delete_branch(branch.id)
    assert rt.store.get_branch(branch.id) is None
    assert rt.store.count_messages(branch.shadow_conversation_id) == 0
    assert rt.store.get_conversation(branch.shadow_conversation_id) is None
    assert rt.store.count_messages("main") == main_before, "the parent keeps everything"


@pytest.mark.parametrize("status", ["archived", "adopted"])
def test_deleting_an_archived_or_adopted_branch_keeps_its_messages(rt: WorkflowRuntime, status: str) -> None:
    branch = _branch_with_messages(rt, n=2)
    rt.store.update_branch(branch.id, status=status)
    rt.delete_branch(branch.id)
    assert rt.store.get_branch(branch.id) is None
    assert [m.content for m in rt.store.list_messages(branch.shadow_conversation_id)] == ["msg 0", "msg 1"]


def test_deleting_main_or_an_unknown_branch_is_refused(rt: WorkflowRuntime) -> None:
    branch = _branch_with_messages(rt)
    with pytest.raises(BranchError, match="main conversation cannot be deleted"):
        rt.delete_branch("main")  # type: ignore[arg-type]
    with pytest.raises(BranchError, match="there is no branch 42"):
        rt.delete_branch(42)
    for bad in ("x1", "²", "-1", ""):
        with pytest.raises(BranchError, match="not a conversation"):
            rt.archive_branch(bad)
    assert [b.id for b in rt.store.list_branches()] == [branch.id]


def test_a_branch_with_branches_of_its_own_is_not_deleted(rt: WorkflowRuntime) -> None:
    parent = _branch_with_messages(rt)
    child = _branch_with_messages(rt, parent.shadow_conversation_id)
    with pytest.raises(BranchError, match=rf"has branches of its own \({child.id}\)"):
        rt.delete_branch(parent.id)
    assert rt.store.count_messages(parent.shadow_conversation_id) == 3  # 2 + the child's anchor
    rt.delete_branch(child.id)
    rt.delete_branch(parent.id)
    assert rt.store.list_branches() == ()


def test_the_branch_of_a_plan_in_progress_is_not_deleted(rt: WorkflowRuntime) -> None:
    impl = rt.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                                  kind="implementation", label="impl")
    plan = rt.store.create_plan(title="T", slug="t", phase="dev")
    rt.store.update_plan(plan.id, impl_branch_id=impl.id)
    with pytest.raises(BranchError, match=f"belongs to plan {plan.id}, which is still dev"):
        rt.delete_branch(impl.id)
    assert rt.store.get_branch(impl.id) is not None
