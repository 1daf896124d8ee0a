"""Every turn carries what its session has not seen: resumed sessions get what entered their conversation
from elsewhere (adopt and decision records, retrieved history), once; a new session gets the full pack.

The stand-in engine speaks claude's stream-json and resumes its sessions; each prompt it receives on
stdin is logged, so these tests read exactly what the agent got.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runtime_harness import PROPOSAL, Harness, dev_turn, verdict

from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.runtime.runtime import WorkflowRuntime

SUMMARY = "Conclusion: keep partial uploads in a quarantine folder. Reason: resumable uploads."
FACT = "The billing exporter writes its CSV files with semicolons because Excel in Germany expects them."
SINCE = "## Since your last turn"
RETRIEVED = "## Retrieved from the project's history"


def _runtime(h: Harness, tmp_path: Path) -> WorkflowRuntime:
    missing = Embedder(env={"TUNAFLOW_EMBEDDING_MODEL": str(tmp_path / "none.onnx")})  # full text: deterministic
    return WorkflowRuntime(h.project, h.settings(), embedder=missing)


@pytest.fixture
def rt(harness: Harness, tmp_path: Path) -> Iterator[WorkflowRuntime]:
    harness.set_script(architect=[{"text": "Noted."}], summarizer=[{"text": SUMMARY}])
    runtime = _runtime(harness, tmp_path)
    yield runtime
    runtime.close()


def _turns(h: Harness, role: str = "architect") -> list[dict[str, Any]]:
    return [call for call in h.calls() if call["role"] == role]


def _resumed(call: dict[str, Any]) -> str | None:
    argv = call["argv"]
    return argv[argv.index("--resume") + 1] if "--resume" in argv else None


async def test_after_fork_and_adopt_the_next_resumed_main_turn_holds_the_summary(
        harness: Harness, rt: WorkflowRuntime) -> None:
    await rt.send_user_message("Where do partial uploads go?")
    session = rt.store.get_conversation("main").native_session_id
    answer = rt.store.list_messages("main")[-1]
    branch = rt.fork("main", answer.id, label="quarantine")
    rt.store.add_message(branch.shadow_conversation_id, "user", "what about a quarantine folder?")
    rt.store.add_message(branch.shadow_conversation_id, "assistant", "A quarantine folder keeps them safe.",
                         persona="architect", engine="fclaude")
    await rt.adopt_branch(branch.id)  # the summarizer writes the summary

    await rt.send_user_message("Go on with the upload design.")
    first, second = _turns(harness)
    assert _resumed(first) is None and _resumed(second) == session
    prompt = second["prompt"]
    assert SINCE in prompt and SUMMARY in prompt and "“quarantine”" in prompt
    assert f"Newly linked sessions:\n- Adopted branch {branch.id} “quarantine”" in prompt, "the new link, cited"
    assert prompt.rstrip().endswith("Go on with the upload design."), "the user's words come last"
    assert "Where do partial uploads go?" not in prompt, "the session has its own history already"

    await rt.send_user_message("And the retention time?")
    third = _turns(harness)[-1]
    assert _resumed(third) == session
    assert SUMMARY not in third["prompt"], "what the session was sent is not sent again"
    assert third["prompt"].strip() == "And the retention time?"


async def test_revision_feedback_reaches_the_architect_turn_on_a_resumed_session(harness: Harness,
                                                                                tmp_path: Path) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}, {"text": PROPOSAL}, {"text": "Fine."}])
    rt = _runtime(harness, tmp_path)
    try:
        await rt.send_user_message("Please add multiplication")
        [plan] = rt.store.list_plans()
        session = rt.store.get_conversation("main").native_session_id
        await rt.decide(plan.id, "revise", feedback="Name the function times, not mul")
        revising = _turns(harness)[-1]
        assert _resumed(revising) == session
        since = revising["prompt"].split(SINCE, 1)[1]
        assert "You asked for a revision" in since and "Name the function times, not mul" in since

        plan = rt.store.list_plans()[0]
        await rt.decide(plan.id, "abandon", reason="we will use the standard library instead")
        await rt.send_user_message("What now?")
        after = _turns(harness)[-1]
        assert _resumed(after) == session
        assert "You abandoned" in after["prompt"] and "we will use the standard library instead" in after["prompt"]
        assert "You asked for a revision" not in after["prompt"], "the earlier record was sent already"
    finally:
        rt.close()


async def test_a_fact_planted_in_a_branch_reaches_a_resumed_main_turn_once(harness: Harness,
                                                                          rt: WorkflowRuntime) -> None:
    await rt.send_user_message("Let us talk about the exporter.")
    session = rt.store.get_conversation("main").native_session_id
    branch = rt.fork("main", rt.store.list_messages("main")[0].id, label="billing")
    rt.store.add_message(branch.shadow_conversation_id, "assistant", FACT, persona="architect")

    await rt.send_user_message("Why does the billing exporter use semicolons in its CSV files?")
    resumed = _turns(harness)[-1]
    assert _resumed(resumed) == session
    assert RETRIEVED in resumed["prompt"] and FACT in resumed["prompt"]
    assert f"{branch.shadow_conversation_id}, message" in resumed["prompt"], "labelled with its source"

    await rt.send_user_message("Remind me: semicolons in the billing exporter CSV files, why?")
    again = _turns(harness)[-1]
    assert _resumed(again) == session
    assert FACT not in again["prompt"], "the same chunk is not sent twice to one session"

    # another engine's session has not seen it: the full pack, with the chunk again
    await rt.send_user_message("Semicolons in the billing exporter CSV: why, once more?", engine="fcodex")
    switched = _turns(harness)[-1]
    assert switched["tool"] == "codex" and "resume" not in switched["argv"]
    assert "## Recent conversation" in switched["prompt"] and FACT in switched["prompt"]


async def test_an_engine_switch_gets_the_full_pack_and_the_way_back_too(harness: Harness,
                                                                        rt: WorkflowRuntime) -> None:
    await rt.send_user_message("First question on claude.")
    await rt.send_user_message("Second question on codex.", engine="fcodex")
    await rt.send_user_message("Third question, claude again.")
    first, second, third = _turns(harness)
    assert first["tool"] == "claude" and _resumed(first) is None
    assert second["tool"] == "codex" and "resume" not in second["argv"]
    assert "## Recent conversation" in second["prompt"] and "First question on claude." in second["prompt"]
    assert third["tool"] == "claude" and _resumed(third) is None
    assert "## Recent conversation" in third["prompt"] and "Second question on codex." in third["prompt"]


async def test_compressed_memory_over_what_the_session_holds_starts_a_new_session_with_the_full_pack(
        harness: Harness, rt: WorkflowRuntime) -> None:
    rt.settings.context.recent_turns_kept = 1
    await rt.send_user_message("Tell me about the uploader.")
    await rt.send_user_message("And its retries?")
    messages = rt.store.list_messages("main")
    rt.store.save_summary("main", messages[0].id, messages[1].id, "UPLOADER-SUMMARY of the first exchange.", None)
    await rt.send_user_message("And its timeouts?")
    first, second, third = _turns(harness)
    assert _resumed(first) is None and _resumed(second) is not None
    assert _resumed(third) is None and "--session-id" in third["argv"], "the summarised session is not resumed"
    assert "## Compressed memory" in third["prompt"] and "UPLOADER-SUMMARY" in third["prompt"]
    assert "## Recent conversation" in third["prompt"] and "And its retries?" in third["prompt"]
    new_session = rt.store.get_conversation("main").native_session_id

    # the same early range summarised again: older than anything the new session holds, it stays
    rt.store.save_summary("main", messages[0].id, messages[1].id, "UPLOADER-SUMMARY, re-done.", None)
    await rt.send_user_message("And its logging?")
    assert _resumed(_turns(harness)[-1]) == new_session


async def test_a_branch_adopted_by_another_process_is_seen_by_the_next_turn(harness: Harness,
                                                                            rt: WorkflowRuntime) -> None:
    await rt.send_user_message("Which database should we use?")
    session = rt.store.get_conversation("main").native_session_id
    answer = rt.store.list_messages("main")[-1]
    branch = rt.fork("main", answer.id, label="sqlite")
    rt.store.add_message(branch.shadow_conversation_id, "assistant", "SQLite is enough.", persona="architect")
    harness.write_config()
    summary = harness.root / "summary.txt"
    summary.write_text("We chose SQLite with WAL for the single-user case.")
    shell = subprocess.run([sys.executable, "-m", "tunaflow_tui", "branch", "adopt", str(branch.id),
                            "--summary-file", str(summary)], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONIOENCODING": "utf-8"}, cwd=harness.project)
    assert shell.returncode == 0, shell.stderr

    await rt.send_user_message("So, the schema next.")
    turn = _turns(harness)[-1]
    assert _resumed(turn) == session
    assert "We chose SQLite with WAL for the single-user case." in turn["prompt"].split(SINCE, 1)[1]


async def test_the_last_turn_sent_is_the_exact_prompt_of_a_resumed_turn(harness: Harness,
                                                                        rt: WorkflowRuntime) -> None:
    await rt.send_user_message("Hello there.")
    answer = rt.store.list_messages("main")[-1]
    branch = rt.fork("main", answer.id, label="aside")
    rt.store.add_message(branch.shadow_conversation_id, "assistant", "An aside.", persona="architect")
    await rt.adopt_branch(branch.id, summary="The aside settled on tabs.")
    await rt.send_user_message("Next?")
    sent = rt.last_sent
    assert sent is not None and sent.resumed
    assert sent.prompt == _turns(harness)[-1]["prompt"]
    assert [s.name for s in sent.pack.sections if s.text] == ["since"]


async def test_messages_another_engine_wrote_meanwhile_reach_the_resumed_session(harness: Harness,
                                                                                 rt: WorkflowRuntime) -> None:
    """An engine without native sessions (an HTTP model) answered in main in between: the conversation
    keeps claude's session, and claude's next turn is told what was said."""
    await rt.send_user_message("Plan the cache.")
    session = rt.store.get_conversation("main").native_session_id
    rt.store.add_message("main", "user", "Quick check: is Redis installed here?")
    rt.store.add_message("main", "assistant", "Redis 7.2 is installed and running.", persona="architect",
                         engine="local-llama")
    await rt.send_user_message("Then use it for the cache.")
    turn = _turns(harness)[-1]
    assert _resumed(turn) == session
    since = turn["prompt"].split(SINCE, 1)[1]
    assert "Quick check: is Redis installed here?" in since and "Redis 7.2 is installed and running." in since
    assert "Plan the cache." not in turn["prompt"] and "Noted." not in turn["prompt"], "its own turns it has"


async def test_decisions_a_removed_worktree_and_a_merge_reach_the_architect_on_its_session(
        harness: Harness, tmp_path: Path) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}, {"text": "Noted."}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    rt = _runtime(harness, tmp_path)
    try:
        await rt.send_user_message("Please add multiplication")
        session = rt.store.get_conversation("main").native_session_id
        [plan] = rt.store.list_plans()
        plan = await rt.decide(plan.id, "approve")
        plan = await rt.decide(plan.id, "accept")
        rt.remove_worktree(plan.id)
        await rt.send_user_message("Where are we?")
        turn = _turns(harness)[-1]
        assert _resumed(turn) == session
        since = turn["prompt"].split(SINCE, 1)[1]
        assert "You approved plan" in since and "You accepted review round 1" in since
        assert f"The worktree of plan {plan.id}" in since and f"its branch tunaflow/{plan.slug} stays" in since

        rt.merge(plan.id)
        await rt.send_user_message("And now?")
        turn = _turns(harness)[-1]
        assert _resumed(turn) == session
        since = turn["prompt"].split(SINCE, 1)[1]
        assert f"You merged tunaflow/{plan.slug} into main" in since
        assert "You approved plan" not in since and "The worktree of plan" not in since, "sent once"
    finally:
        rt.close()


async def test_an_adopted_roundtable_brief_reaches_the_resumed_session(harness: Harness,
                                                                      rt: WorkflowRuntime) -> None:
    await rt.send_user_message("How should we authenticate?")
    session = rt.store.get_conversation("main").native_session_id
    table = rt.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                   mode="roundtable", kind="general", label="auth roundtable")
    rt.store.add_message(table.shadow_conversation_id, "assistant", "PKCE.", persona="proposer")
    rt.store.add_memo("roundtable_brief", "Key Positions\n- proposer: PKCE.\n- critic: add refresh tokens.",
                      conversation_id=table.shadow_conversation_id, branch_id=table.id)
    await rt.adopt_branch(table.id)
    await rt.send_user_message("Settle it, then.")
    turn = _turns(harness)[-1]
    assert _resumed(turn) == session
    since = turn["prompt"].split(SINCE, 1)[1]
    assert "- proposer: PKCE." in since and "- critic: add refresh tokens." in since


async def test_a_branch_linked_after_its_first_turn_cites_the_link_on_its_next(harness: Harness,
                                                                              rt: WorkflowRuntime) -> None:
    await rt.send_user_message("Start here.")
    branch = rt.fork("main", rt.store.list_messages("main")[0].id, label="cache")
    cid = branch.shadow_conversation_id
    await rt.send_user_message("Try a cache.", cid)
    spike = rt.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                                   kind="general", label="old cache spike")
    rt.store.add_session_link(cid, spike.shadow_conversation_id, "related", "An LRU cache of 512 entries was enough.")
    await rt.send_user_message("Which size?", cid)
    first, second = _turns(harness)[-2:]
    assert _resumed(second) is not None
    assert "An LRU cache of 512 entries was enough." not in first["prompt"]
    assert f"- Related branch {spike.id} “old cache spike”: An LRU cache of 512 entries was enough." in \
        second["prompt"].split(SINCE, 1)[1]


async def test_the_since_section_keeps_to_its_own_budget_newest_first(harness: Harness,
                                                                      rt: WorkflowRuntime) -> None:
    rt.settings.context.since_tokens = 80
    await rt.send_user_message("Begin.")
    for i in range(40):
        rt.store.add_message("main", "assistant", f"Status note number {i} from the night shift.",
                             persona="architect", engine="local-llama")
    await rt.send_user_message("Catch me up.")
    prompt = _turns(harness)[-1]["prompt"]
    since = prompt.split(SINCE, 1)[1]
    assert "Status note number 39 from the night shift." in since and "Status note number 0 from" not in since
    assert "earlier items left out to fit the budget]\n\n**Architect**: Status note number" in since, \
        "whole items only, after a line saying how many were left out"
    sent = rt.last_sent
    assert sent is not None
    section = next(s for s in sent.pack.sections if s.name == "since")
    assert section.budget == 80 and section.tokens <= 80 + 10
