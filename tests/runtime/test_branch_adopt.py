"""Adopting a branch: the summary, the adopt record, the archive, the session link — all or nothing."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from runtime_harness import Harness

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.access import _TrackedDatabase
from tunaflow_tui.core.storage.models import SessionLinkRow
from tunaflow_tui.core.storage.records import BranchRecord
from tunaflow_tui.runtime.adoption import AdoptCancelled
from tunaflow_tui.runtime.branching import BranchError, BranchReadOnly
from tunaflow_tui.runtime.events import MessageDelta, MessageStarted, RuntimeEvent
from tunaflow_tui.runtime.runtime import WorkflowRuntime

LONG_REPLY = "PKCE is the way: " + "the public client never holds a secret, " * 12 + "THE END"


def _runtime(h: Harness, events: list[RuntimeEvent] | None = None, **roles: str) -> WorkflowRuntime:
    if not h.script:
        h.set_script(summarizer=[{"text": "Conclusion: OAuth2 with PKCE. Reason: no client secret."}])
    settings = h.settings()
    if roles:
        settings = settings.model_copy(update={"roles": settings.roles.model_copy(update=roles)})
    return WorkflowRuntime(h.project, settings, observer=events.append if events is not None else None)


def _seed(rt: WorkflowRuntime) -> tuple[BranchRecord, BranchRecord, BranchRecord]:
    """main with two messages; branch A at the first with a question and LONG_REPLY; A's child, its grandchild."""
    anchor = rt.store.add_message("main", "user", "how should we authenticate?")
    rt.store.add_message("main", "assistant", "Several options.", persona="architect")
    branch = rt.fork("main", anchor.id, label="oauth")
    rt.store.add_message(branch.shadow_conversation_id, "user", "try OAuth2")
    rt.store.add_message(branch.shadow_conversation_id, "assistant", LONG_REPLY, persona="architect",
                         engine="fclaude")
    rt.store.update_message(rt.store.list_messages(branch.shadow_conversation_id)[-1].id,
                            native_session_id="branch-own-session")
    rt.store.set_native_session(branch.shadow_conversation_id, "fclaude", "branch-own-session")
    child_anchor = rt.store.list_messages(branch.shadow_conversation_id)[0]
    child = rt.fork(branch.shadow_conversation_id, child_anchor.id)
    grand_anchor = rt.store.add_message(child.shadow_conversation_id, "user", "deeper")
    grandchild = rt.fork(child.shadow_conversation_id, grand_anchor.id)
    return branch, child, grandchild


def _state(store: Store) -> tuple[object, ...]:
    """Everything adopting may change."""
    return (
        [(m.id, m.content) for m in store.list_messages("main")],
        [(b.id, b.status) for b in store.list_branches()],
        store.all_session_links(),
    )


async def test_adopting_with_a_given_summary_writes_record_status_archive_and_link(harness: Harness) -> None:
    rt = _runtime(harness)
    branch, child, grandchild = _seed(rt)
    adoption = await rt.adopt_branch(branch.id, summary="We chose OAuth2 PKCE.")
    record = adoption.record
    assert record.conversation_id == "main" and record.role == "system" and record.persona == "branch-adopt"
    assert rt.store.list_messages("main")[-1].id == record.id
    meta = dict(record.meta)
    assert meta["kind"] == "branch_adopt" and meta["branch_id"] == branch.id
    assert meta["branch_label"] == "oauth" and meta["message_count"] == 2 and meta["engine"] == "fclaude"
    assert meta["summary"] == "We chose OAuth2 PKCE." and meta["summary_source"] == "given"
    assert meta["diff_stat"] is None, "a branch without commits of its own has no diff stat"
    assert "We chose OAuth2 PKCE." in record.content and "“oauth”" in record.content
    statuses = {b.id: b.status for b in rt.store.list_branches()}
    assert statuses == {branch.id: "adopted", child.id: "archived", grandchild.id: "archived"}
    assert set(adoption.archived) == {child.id, grandchild.id}
    (link,) = rt.store.all_session_links()
    assert (link.from_conversation_id, link.to_conversation_id, link.kind, link.note) == \
        ("main", branch.shadow_conversation_id, "adopted", "We chose OAuth2 PKCE.")
    assert rt.store.count_messages(branch.shadow_conversation_id) == 2, "the branch keeps its messages"
    with pytest.raises(BranchReadOnly):
        await rt.send_user_message("more?", branch.shadow_conversation_id)


async def test_the_parents_next_context_pack_cites_the_adopted_summary(harness: Harness) -> None:
    rt = _runtime(harness)
    branch, _child, _grand = _seed(rt)
    before = rt.context.build(role="architect", conversation_id="main", request="next")
    assert "Linked sessions" not in before.render()
    await rt.adopt_branch(branch.id, summary="We chose OAuth2 PKCE.")
    pack = rt.context.build(role="architect", conversation_id="main", request="next")
    links = next(s for s in pack.sections if s.name == "links")
    assert links.text == f"- Adopted branch {branch.id} “oauth”: We chose OAuth2 PKCE."
    assert "## Linked sessions" in pack.render()
    other = rt.context.build(role="architect", conversation_id="branch:2", request="x")
    assert all(s.name != "links" for s in other.sections), "only the parent the branch was adopted into"


async def test_the_summarizer_writes_the_summary_in_a_streamed_turn(harness: Harness) -> None:
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    branch, _child, _grand = _seed(rt)
    adoption = await rt.adopt_branch(branch.id)
    meta = dict(adoption.record.meta)
    assert meta["summary"] == "Conclusion: OAuth2 with PKCE. Reason: no client secret."
    assert meta["summary_source"] == "summarizer" and meta["summary_engine"] == "fclaude"
    assert meta["message_count"] == 2, "the summary is not counted as a message of the branch"
    call = [c for c in harness.calls() if c["role"] == "summarizer"][-1]
    assert "try OAuth2" in call["prompt"] and "THE END" in call["prompt"], "the whole branch is summarized"
    assert "--resume" not in call["argv"]
    started = [e for e in events if isinstance(e, MessageStarted) and e.role == "summarizer"]
    assert started and started[0].conversation_id == branch.shadow_conversation_id
    assert any(isinstance(e, MessageDelta) and e.message_id == started[0].message_id for e in events)
    shadow = rt.store.get_conversation(branch.shadow_conversation_id)
    assert shadow is not None and shadow.native_session_id == "branch-own-session", \
        "the summarizer's session does not replace the branch's"


async def test_without_a_summarizer_the_last_reply_is_cut_at_300_characters_and_marked(harness: Harness) -> None:
    rt = _runtime(harness, summarizer="not-configured")
    branch, _child, _grand = _seed(rt)
    adoption = await rt.adopt_branch(branch.id)
    meta = dict(adoption.record.meta)
    summary = str(meta["summary"])
    assert meta["summary_source"] == "last_reply_cut"
    assert summary.startswith("PKCE is the way:") and summary.endswith("…") and len(summary) <= 301
    assert "THE END" not in summary
    assert "cut at 300 characters" in str(meta["summary_note"]) and "cut at 300 characters" in adoption.record.content


async def test_a_failing_summarizer_falls_back_to_the_cut_last_reply(harness: Harness) -> None:
    harness.set_script(summarizer=[{"text": "", "crash": True}])
    rt = _runtime(harness)
    branch, _child, _grand = _seed(rt)
    adoption = await rt.adopt_branch(branch.id)
    assert adoption.record.meta["summary_source"] == "last_reply_cut"
    assert "could not answer" in str(adoption.record.meta["summary_note"])


async def test_cancelling_the_summary_adopts_nothing(harness: Harness) -> None:
    harness.set_script(summarizer=[{"text": "Conclusion: partial and then more", "pause_after": {"partial": 30}}])
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    branch, _child, _grand = _seed(rt)
    before = _state(rt.store)
    task = asyncio.create_task(rt.adopt_branch(branch.id))
    for _ in range(600):
        if any(isinstance(e, MessageDelta) for e in events):
            break
        await asyncio.sleep(0.05)
    assert await rt.cancel(branch.shadow_conversation_id) == 1
    with pytest.raises(AdoptCancelled, match="nothing was adopted"):
        await asyncio.wait_for(task, 30)
    assert _state(rt.store) == before


async def test_empty_adopted_and_archived_branches_are_refused(harness: Harness) -> None:
    rt = _runtime(harness)
    branch, child, _grand = _seed(rt)
    empty = rt.fork("main", rt.store.list_messages("main")[0].id)
    with pytest.raises(BranchError, match=f"branch {empty.id} is empty"):
        await rt.adopt_branch(empty.id, summary="anything")
    await rt.adopt_branch(branch.id, summary="done")
    before = _state(rt.store)
    with pytest.raises(BranchError, match=f"branch {branch.id} is adopted already"):
        await rt.adopt_branch(branch.id, summary="again")
    with pytest.raises(BranchError, match=f"branch {child.id} is archived; restore it"):
        await rt.adopt_branch(child.id, summary="child")
    with pytest.raises(BranchError, match="main is the project's conversation"):
        await rt.adopt_branch("main", summary="x")  # type: ignore[arg-type]
    assert _state(rt.store) == before


async def test_a_failure_between_the_writes_leaves_the_old_state(harness: Harness,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    rt = _runtime(harness)
    branch, _child, _grand = _seed(rt)
    before = _state(rt.store)

    def broken_insert(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(SessionLinkRow, "insert", broken_insert)  # the last of the writes
    with pytest.raises(OSError, match="disk full"):
        await rt.adopt_branch(branch.id, summary="We chose OAuth2 PKCE.")
    assert _state(rt.store) == before
    monkeypatch.undo()
    await rt.adopt_branch(branch.id, summary="We chose OAuth2 PKCE.")
    assert _state(rt.store) != before


_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


async def test_a_failure_at_any_write_of_the_adoption_leaves_the_old_state(harness: Harness,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    rt = _runtime(harness)
    branch, child, grandchild = _seed(rt)
    before = _state(rt.store)
    original = _TrackedDatabase.execute_sql
    writes = [0]
    fail_at = [0]

    def failing(self: _TrackedDatabase, sql: str, *args: object, **kwargs: object) -> object:
        if sql.lstrip().upper().startswith(_WRITES):
            writes[0] += 1
            if writes[0] == fail_at[0]:
                raise OSError("disk full")
        return original(self, sql, *args, **kwargs)

    monkeypatch.setattr(_TrackedDatabase, "execute_sql", failing)
    failed_at: list[int] = []
    while True:  # fail the 1st write of the adoption, then the 2nd, ... until one goes through whole
        fail_at[0] += 1
        writes[0] = 0
        try:
            await rt.adopt_branch(branch.id, summary="We chose OAuth2 PKCE.")
        except OSError:
            failed_at.append(fail_at[0])
            assert _state(rt.store) == before, f"a failure at write {fail_at[0]} left part of the adoption"
            continue
        break
    assert len(failed_at) >= 4, "the record, the status, the archive and the link are written"
    statuses = {b.id: b.status for b in rt.store.list_branches()}
    assert statuses == {branch.id: "adopted", child.id: "archived", grandchild.id: "archived"}
    assert rt.store.list_messages("main")[-1].meta["kind"] == "branch_adopt"
    assert len(rt.store.all_session_links()) == 1
    rt.close()


_KILLED_ADOPTION = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.core.storage.models import SessionLinkRow

    def killed(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)  # kill -9 after every other write of the adoption

    store = Store.open(Path(sys.argv[1]))
    if sys.argv[3] == "kill":
        SessionLinkRow.insert = killed
    store.record_adoption(int(sys.argv[2]), content="adopted", meta={"kind": "branch_adopt"}, summary="s")
    print("committed")
""")


@pytest.mark.parametrize("how", ["kill", "finish"])
def test_kill_9_in_the_middle_of_adopting_leaves_the_old_state(harness: Harness, how: str) -> None:
    rt = _runtime(harness)
    branch, child, grandchild = _seed(rt)
    before = _state(rt.store)
    rt.close()
    proc = subprocess.run([sys.executable, "-c", _KILLED_ADOPTION, str(harness.project), str(branch.id), how],
                          capture_output=True, text=True, timeout=60, env={**os.environ})
    with Store.open(harness.project) as store:
        if how == "kill":
            assert proc.returncode == -signal.SIGKILL, proc.stderr
            assert _state(store) == before
        else:
            assert proc.returncode == 0 and "committed" in proc.stdout, proc.stderr
            statuses = {b.id: b.status for b in store.list_branches()}
            assert statuses == {branch.id: "adopted", child.id: "archived", grandchild.id: "archived"}
            assert store.list_messages("main")[-1].meta == {"kind": "branch_adopt"}
            assert len(store.all_session_links()) == 1


async def test_a_branch_with_commits_carries_its_diff_stat(harness: Harness, tmp_path: Path) -> None:
    rt = _runtime(harness)
    worktree = tmp_path / "wt-feature"
    harness.git("worktree", "add", "-q", "-b", "tunaflow/feature", str(worktree))
    (worktree / "auth.py").write_text("def login():\n    return 'pkce'\n")
    harness.git("add", "auth.py", cwd=worktree)
    harness.git("commit", "-q", "-m", "auth", cwd=worktree)
    branch = rt.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                                    kind="general", label="auth work", git_branch="tunaflow/feature",
                                    worktree_path=str(worktree))
    rt.store.add_message(branch.shadow_conversation_id, "assistant", "I wrote auth.py", persona="architect")
    adoption = await rt.adopt_branch(branch.id, summary="auth.py added")
    diff_stat = str(adoption.record.meta["diff_stat"])
    assert "auth.py" in diff_stat and "1 file changed" in diff_stat
    assert diff_stat in adoption.record.content



async def test_a_roundtable_is_adopted_with_its_briefs_key_positions(harness: Harness) -> None:
    rt = _runtime(harness)
    table = rt.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                   mode="roundtable", kind="general", label="auth roundtable")
    rt.store.add_message(table.shadow_conversation_id, "assistant", "PKCE.", persona="proposer")
    rt.store.add_memo("roundtable_brief", "Key Positions\n- proposer: PKCE.\n- critic: add refresh tokens.",
                      conversation_id=table.shadow_conversation_id, branch_id=table.id)
    adoption = await rt.adopt_branch(table.id)
    assert adoption.record.meta["summary_source"] == "roundtable_brief"
    assert str(adoption.record.meta["summary"]).startswith("Key Positions\n- proposer: PKCE.")
    assert not [c for c in harness.calls() if c["role"] == "summarizer"], "a brief needs no LLM call"
    stored = rt.store.get_message(adoption.record.id)
    assert stored is not None and stored.display_text == stored.content and stored.markers == ()
