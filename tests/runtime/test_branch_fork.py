"""Forking a conversation at any message: checkpoint, git branch, native session fork or inherited context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runtime_harness import Harness

from tunaflow_tui.core.storage.records import MessageRecord
from tunaflow_tui.runtime.branching import BranchError, BranchReadOnly
from tunaflow_tui.runtime.events import NoticeRaised, RuntimeEvent
from tunaflow_tui.runtime.runtime import WorkflowRuntime

PARENT_SESSION = "0d1f2a3b-0000-4000-8000-00000000a11e"


def _runtime(h: Harness, events: list[RuntimeEvent] | None = None) -> WorkflowRuntime:
    if not h.script:
        h.set_script(architect=[{"text": "Noted; here is my view."}])
    return WorkflowRuntime(h.project, h.settings(), observer=events.append if events is not None else None)


def _known_session(h: Harness, session: str) -> None:
    """Tell the claude stand-in it has a transcript of ``session`` (as a finished turn leaves one)."""
    with open(str(h.root / "state.json") + ".sessions", "a") as fh:
        fh.write(session + "\n")


def _seed_main(rt: WorkflowRuntime, h: Harness, turns: int = 4) -> list[MessageRecord]:
    """``turns`` user/Architect exchanges in main, every reply in the claude session PARENT_SESSION."""
    messages = []
    for n in range(1, turns + 1):
        messages.append(rt.store.add_message("main", "user", f"question {n} about caching"))
        reply = rt.store.add_message("main", "assistant", f"answer {n}: use an LRU cache", persona="architect",
                                     engine="fclaude")
        messages.append(rt.store.update_message(reply.id, native_session_id=PARENT_SESSION))
    rt.store.set_native_session("main", "fclaude", PARENT_SESSION)
    _known_session(h, PARENT_SESSION)
    return messages


def _calls(h: Harness) -> list[dict[str, Any]]:
    return [c for c in h.calls() if c["role"] == "architect"]


async def test_fork_at_the_first_middle_and_last_message(harness: Harness) -> None:
    rt = _runtime(harness)
    msgs = _seed_main(rt, harness)
    first = rt.fork("main", msgs[0].id)
    middle = rt.fork("main", msgs[3].id, label="try JWT")
    last = rt.fork("main", msgs[-1].id)
    for branch, checkpoint in ((first, msgs[0]), (middle, msgs[3]), (last, msgs[-1])):
        assert branch.checkpoint_id == checkpoint.id
        assert branch.conversation_id == "main" and branch.parent_branch_id is None
        assert branch.status == "active" and branch.kind == "general" and branch.mode == "chat"
        assert branch.git_branch == "main", "a branch of main takes the project's current git branch"
        assert branch.engine == "fclaude"
        assert rt.store.count_messages(branch.shadow_conversation_id) == 0
    assert middle.label == "try JWT"
    assert first.label == f"from #{msgs[0].id}: question 1 about caching"
    # only the last message is where the parent's session is now: only it can be forked natively
    assert (first.context_source, middle.context_source, last.context_source) == \
        ("inheritance", "inheritance", "native_fork")
    assert rt.store.count_messages("main") == len(msgs), "forking writes nothing into the parent"


async def test_a_branch_named_after_a_markdown_reply_is_named_in_plain_words(harness: Harness) -> None:
    rt = _runtime(harness)
    _seed_main(rt, harness)
    reply = rt.store.add_message("main", "assistant", "\n## **Plan:** use `functools.lru_cache`\n\n- step",
                                 persona="architect", engine="fclaude")
    branch = rt.fork("main", reply.id)
    assert branch.label == f"from #{reply.id}: Plan: use functools.lru_cache"


async def test_a_native_fork_continues_the_parent_session_without_touching_it(harness: Harness) -> None:
    harness.set_script(architect=[{"text": "In this branch: JWT with short expiry."}])
    rt = _runtime(harness)
    msgs = _seed_main(rt, harness)
    branch = rt.fork("main", msgs[-1].id)
    result = await rt.send_user_message("what about JWT instead?", branch.shadow_conversation_id)
    assert result is not None and result.ok, result and result.message.error_message
    call = _calls(harness)[-1]
    argv = call["argv"]
    assert argv[argv.index("--resume") + 1] == PARENT_SESSION and "--fork-session" in argv
    assert "--session-id" not in argv
    assert call["prompt"].strip() == "what about JWT instead?", "no history is sent again"
    main = rt.store.get_conversation("main")
    assert main is not None and main.native_session_id == PARENT_SESSION, "the parent's session never changes"
    stored = rt.store.get_branch(branch.id)
    assert stored is not None and stored.context_source == "native_fork"
    assert stored.engine_session_id and stored.engine_session_id != PARENT_SESSION
    # the next turn resumes the branch's own session, not the parent's
    await rt.send_user_message("and refresh tokens?", branch.shadow_conversation_id)
    argv2 = _calls(harness)[-1]["argv"]
    assert argv2[argv2.index("--resume") + 1] == stored.engine_session_id and "--fork-session" not in argv2
    assert rt.store.get_conversation("main").native_session_id == PARENT_SESSION  # type: ignore[union-attr]
    texts = [m.content for m in rt.store.list_messages(branch.shadow_conversation_id)]
    assert texts[0] == "what about JWT instead?" and texts[1] == "In this branch: JWT with short expiry."
    assert rt.store.count_messages("main") == len(msgs)


async def test_an_inheriting_branch_gets_the_checkpoint_and_the_four_turns_before_it(harness: Harness) -> None:
    rt = _runtime(harness)
    msgs = _seed_main(rt, harness, turns=5)  # 10 messages
    checkpoint = msgs[6]  # "question 4"
    branch = rt.fork("main", checkpoint.id)
    assert branch.context_source == "inheritance"
    await rt.send_user_message("go on from here", branch.shadow_conversation_id)
    call = _calls(harness)[-1]
    assert "--resume" not in call["argv"], "an inheriting branch starts a session of its own"
    prompt = call["prompt"]
    assert "## Thread inheritance (from the parent conversation)" in prompt
    section = prompt.split("## Thread inheritance (from the parent conversation)", 1)[1].split("\n## ", 1)[0]
    assert "Checkpoint — **User**: question 4 about caching" in section
    for inherited in ("answer 2:", "question 3", "answer 3:"):
        assert inherited in section
    assert "question 2" in section  # four messages before the checkpoint: q2, a2, q3, a3
    assert "answer 1:" not in section and "question 1 " not in section
    assert "question 5" not in section and "answer 4" not in section, "nothing after the checkpoint"
    assert prompt.rstrip().endswith("go on from here")


async def test_nested_forks_inherit_git_branch_and_the_thread_through_every_level(harness: Harness) -> None:
    rt = _runtime(harness)
    msgs = _seed_main(rt, harness)
    b1 = rt.fork("main", msgs[2].id)  # question 2
    rt.store.update_branch(b1.id, git_branch="feature/oauth")
    b1_first = rt.store.add_message(b1.shadow_conversation_id, "user", "branch one asks about OAuth")
    rt.store.add_message(b1.shadow_conversation_id, "assistant", "branch one answers PKCE", persona="architect")
    b2 = rt.fork(b1.shadow_conversation_id, b1_first.id)
    assert b2.parent_branch_id == b1.id and b2.conversation_id == b1.shadow_conversation_id
    assert b2.git_branch == "feature/oauth", "a branch of a branch takes its parent branch's git branch"
    b2_msg = rt.store.add_message(b2.shadow_conversation_id, "user", "level two question")
    b3 = rt.fork(b2.shadow_conversation_id, b2_msg.id)
    assert b3.parent_branch_id == b2.id and b3.git_branch == "feature/oauth"
    section = rt.context.inheritance(b3.shadow_conversation_id)
    # b3's checkpoint, then up the chain: b2's checkpoint (b1's message), b1's checkpoint and main before it
    assert section.endswith("Checkpoint — **User**: level two question")
    assert "branch one asks about OAuth" in section and "question 2 about caching" in section
    assert "answer 1:" in section and "branch one answers PKCE" not in section, "nothing after a checkpoint"
    tree = {b.id: b.parent_branch_id for b in rt.store.list_branches()}
    assert tree == {b1.id: None, b2.id: b1.id, b3.id: b2.id}


async def test_a_parent_that_went_on_in_its_session_makes_the_fork_inherit(harness: Harness) -> None:
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    msgs = _seed_main(rt, harness)
    branch = rt.fork("main", msgs[-1].id)
    assert branch.context_source == "native_fork"
    later = rt.store.add_message("main", "assistant", "a later answer", persona="architect", engine="fclaude")
    rt.store.update_message(later.id, native_session_id=PARENT_SESSION)  # the parent resumed its session
    await rt.send_user_message("branch question", branch.shadow_conversation_id)
    call = _calls(harness)[-1]
    assert "--resume" not in call["argv"], "a fork now would carry the parent's later turn"
    assert "Thread inheritance" in call["prompt"] and "a later answer" not in call["prompt"]
    stored = rt.store.get_branch(branch.id)
    assert stored is not None and stored.context_source == "inheritance"
    assert any(isinstance(e, NoticeRaised) and "inherits" in e.text for e in events)


async def test_a_fork_the_engine_cannot_resume_falls_back_to_inheritance(harness: Harness) -> None:
    rt = _runtime(harness)
    msgs = _seed_main(rt, harness)
    (harness.root / "state.json.sessions").unlink()  # the stand-in lost the parent's transcript
    branch = rt.fork("main", msgs[-1].id)
    result = await rt.send_user_message("branch question", branch.shadow_conversation_id)
    assert result is not None and result.ok
    first, second = _calls(harness)[-2:]
    assert "--fork-session" in first["argv"] and "--resume" not in second["argv"]
    assert "Thread inheritance" in second["prompt"]
    stored = rt.store.get_branch(branch.id)
    assert stored is not None and stored.context_source == "inheritance"
    assert rt.store.get_conversation("main").native_session_id == PARENT_SESSION  # type: ignore[union-attr]


async def test_an_engine_without_a_session_fork_inherits(harness: Harness) -> None:
    rt = _runtime(harness)
    msgs = _seed_main(rt, harness)
    branch = rt.fork("main", msgs[-1].id, engine="fcodex")
    assert branch.engine == "fcodex" and branch.context_source == "inheritance"
    await rt.send_user_message("codex, your view?", branch.shadow_conversation_id)
    call = [c for c in harness.calls() if c["tool"] == "codex"][-1]
    assert "resume" not in call["argv"] and "fork" not in call["argv"]
    assert "Thread inheritance" in call["prompt"]


async def test_bad_forks_are_refused_and_change_nothing(harness: Harness) -> None:
    rt = _runtime(harness)
    msgs = _seed_main(rt, harness)
    b1 = rt.fork("main", msgs[0].id)
    cases = [
        (("main", 99_999), {}, "there is no message 99999"),
        ((b1.shadow_conversation_id, msgs[1].id), {}, "belongs to main"),
        (("main", msgs[1].id), {"engine": "nope"}, "no engine named 'nope'"),
        (("branch:77", msgs[1].id), {}, "there is no branch 77"),
        (("main", msgs[1].id), {"label": "  \x1b[2J "}, "label cannot be empty"),
    ]
    for args, kwargs, expected in cases:
        with pytest.raises(BranchError, match=expected):
            rt.fork(*args, **kwargs)
    assert [b.id for b in rt.store.list_branches()] == [b1.id]
    streaming = rt.store.add_message("main", "assistant", "half", persona="architect", status="streaming")
    with pytest.raises(BranchError, match="still being written"):
        rt.fork("main", streaming.id)


async def test_adopted_and_archived_branches_refuse_messages(harness: Harness) -> None:
    rt = _runtime(harness)
    msgs = _seed_main(rt, harness)
    branch = rt.fork("main", msgs[1].id)
    rt.archive_branch(branch.id)
    with pytest.raises(BranchReadOnly, match=r"archived and read-only; restore it .*branch restore"):
        await rt.send_user_message("hello?", branch.shadow_conversation_id)
    assert rt.store.count_messages(branch.shadow_conversation_id) == 0 and harness.calls() == []
    rt.restore_branch(branch.id)
    result = await rt.send_user_message("hello again", branch.shadow_conversation_id)
    assert result is not None and result.ok and rt.store.count_messages(branch.shadow_conversation_id) == 2


def test_fork_outside_git_has_no_git_branch(harness: Harness, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    rt = WorkflowRuntime(plain, harness.settings())
    message = rt.store.add_message("main", "user", "hi")
    assert rt.fork("main", message.id).git_branch is None


async def test_retrying_a_failed_reply_in_a_branch_answers_there_on_the_branchs_engine(harness: Harness) -> None:
    harness.set_script(architect=[{"text": "", "crash": True}, {"text": "the second try"}])
    rt = _runtime(harness)
    msgs = _seed_main(rt, harness)
    branch = rt.fork("main", msgs[1].id, engine="fcodex")
    failed = await rt.send_user_message("branch question", branch.shadow_conversation_id)
    assert failed is not None and not failed.ok
    retried = await rt.retry_message(failed.message)
    assert retried is not None and retried.ok and retried.message.conversation_id == branch.shadow_conversation_id
    assert retried.text == "the second try" and retried.message.engine == "fcodex"
    assert [c["tool"] for c in harness.calls()] == ["codex", "codex"]
    assert "Thread inheritance" in harness.calls()[-1]["prompt"]
