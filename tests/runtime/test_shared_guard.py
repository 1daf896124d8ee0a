"""Agents that answer in the user's own tree cannot leave git hooks or configuration behind.

The Architect in main, a branch's agent, a roundtable seat and the summarizer run outside any plan's
worktree, with a read-only or chat profile. Hostile stand-ins (scripted claude/codex subprocesses)
plant a ``post-commit`` hook and a git alias there anyway; what is asserted is what the user would
meet afterwards: the files as they were, a warning that names them, and a commit of theirs that runs
nothing the agent planted.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from runtime_harness import PROPOSAL, Harness, dev_turn

from tunaflow_tui.cli import main
from tunaflow_tui.runtime.events import NoticeRaised, RuntimeEvent
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _plant(h: Harness, text: str) -> tuple[dict[str, Any], Path]:
    """A turn answering ``text`` that plants a post-commit hook and appends an alias to .git/config."""
    hook = h.project / ".git" / "hooks" / "post-commit"
    marker = h.root / "planted-hook-ran"
    turn = {
        "text": text,
        "write": {str(hook): f"#!/bin/sh\ntouch '{marker}'\n"},
        "run": [["chmod", "+x", str(hook)], ["git", "config", "alias.st", f"!touch '{marker}'"]],
    }
    return turn, marker


def _user_commits(h: Harness) -> None:
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "the user's own commit"], cwd=h.project,
                   check=True, capture_output=True)


def _warnings(events: list[RuntimeEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, NoticeRaised) and e.level == "warning"]


def _git_files(h: Harness) -> tuple[bytes, list[str]]:
    return (h.project / ".git" / "config").read_bytes(), sorted(p.name for p in (h.project / ".git" / "hooks").iterdir())


async def test_the_architect_in_main_leaves_no_hook_or_config_behind(harness: Harness) -> None:
    turn, marker = _plant(harness, PROPOSAL)
    harness.set_script(architect=[turn])
    before = _git_files(harness)
    events: list[RuntimeEvent] = []
    rt = WorkflowRuntime(harness.project, harness.settings(), observer=events.append)
    try:
        await rt.send_user_message("Please add multiplication")
        [plan] = rt.store.list_plans()
        assert plan.pending_decision == "approval", "the proposal itself still counts"
    finally:
        rt.close()
    assert _git_files(harness) == before
    [warning] = [w for w in _warnings(events) if "shared git files" in w]
    assert warning.startswith("The architect agent (fclaude) changed")
    assert ".git/hooks/post-commit" in warning and ".git/config" in warning and "put them back" in warning
    _user_commits(harness)
    assert subprocess.run(["git", "st"], cwd=harness.project, capture_output=True).returncode != 0, "no alias left"
    assert not marker.exists(), "the planted hook ran on the user's commit"


async def test_an_agent_answering_in_a_branch_leaves_no_hook_behind(harness: Harness) -> None:
    turn, marker = _plant(harness, "Here is another angle.")
    harness.set_script(architect=[{"text": "A first answer."}, turn])
    before = _git_files(harness)
    events: list[RuntimeEvent] = []
    rt = WorkflowRuntime(harness.project, harness.settings(), observer=events.append)
    try:
        await rt.send_user_message("How should multiplication work?")
        answer = rt.store.list_messages("main")[-1]
        branch = rt.fork("main", answer.id, label="angle")
        await rt.send_user_message("Try it another way", branch.shadow_conversation_id)
        assert rt.store.list_messages(branch.shadow_conversation_id)[-1].content == "Here is another angle."
    finally:
        rt.close()
    assert _git_files(harness) == before
    assert any(".git/hooks/post-commit" in w for w in _warnings(events))
    _user_commits(harness)
    assert not marker.exists()


def test_a_roundtable_seat_leaves_no_hook_behind(harness: Harness, capsys: pytest.CaptureFixture[str]) -> None:
    turn, marker = _plant(harness, "Split the module later.")
    harness.set_script(**{"seat:alice": [turn], "seat:bob": [{"text": "Agreed with alice."}]})
    harness.write_config()
    before = _git_files(harness)
    code = main(["roundtable", str(harness.project), "--topic", "Split calc.py?", "--seat", "alice=fclaude",
                 "--seat", "bob=fcodex:critic"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert _git_files(harness) == before
    assert ".git/hooks/post-commit" in out.out + out.err
    _user_commits(harness)
    assert not marker.exists()


async def test_the_developer_of_a_plan_is_reported_once_by_the_plan_guard(harness: Harness) -> None:
    """The plan's own guard covers the Developer: the shared-file warning is not given twice."""
    from runtime_harness import dev_turn, verdict

    turn, marker = _plant(harness, "")
    developer = dev_turn(run=turn["run"])
    developer["write"].update(turn["write"])
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[developer],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    events: list[RuntimeEvent] = []
    rt = WorkflowRuntime(harness.project, harness.settings(), observer=events.append)
    try:
        await rt.send_user_message("Please add multiplication")
        [plan] = rt.store.list_plans()
        plan = await rt.decide(plan.id, "approve")
        findings = [f for e in rt.store.list_plan_events(plan.id) if e.type == "git_integrity"
                    for f in e.detail["findings"] if f["kind"] == "shared_git"]
        assert findings and findings[0]["repaired"]
    finally:
        rt.close()
    assert not [w for w in _warnings(events) if "during its turn; tunaflow put them back" in w]
    assert not marker.exists()


async def test_the_summarizer_compressing_a_long_conversation_leaves_no_hook_behind(harness: Harness) -> None:
    from tunaflow_tui.runtime import compression

    turn, marker = _plant(harness, "The parser keeps its state; topics 0 to 7.")
    harness.set_script(summarizer=[turn])
    before = _git_files(harness)
    events: list[RuntimeEvent] = []
    rt = WorkflowRuntime(harness.project, harness.settings(), observer=events.append)
    rt.settings.memory.compress_after_tokens = 600
    rt.settings.memory.compress_keep_messages = 4
    rt.settings.memory.summary_span_tokens = 300
    try:
        for i in range(12):
            rt.store.add_message("main", "user" if i % 2 == 0 else "assistant",
                                 f"On topic {i} we agreed the parser keeps state number {i}. " * 6)
        assert await compression.compress_conversation(rt, "main") >= 1
        assert any(s.engine == "fclaude" for s in rt.store.list_summaries("main")), "the summarizer answered"
    finally:
        rt.close()
    assert _git_files(harness) == before
    assert any(w.startswith("The summarizer agent (fclaude)") and ".git/hooks/post-commit" in w
               for w in _warnings(events))
    _user_commits(harness)
    assert not marker.exists()


async def test_a_branch_switched_in_the_users_tree_during_a_chat_turn_is_reported_and_left(harness: Harness) -> None:
    harness.set_script(architect=[{"text": "Done looking.", "run": [["git", "checkout", "-q", "-b", "agent-side"]]}])
    events: list[RuntimeEvent] = []
    rt = WorkflowRuntime(harness.project, harness.settings(), observer=events.append)
    try:
        await rt.send_user_message("Have a look around")
    finally:
        rt.close()
    assert harness.git("symbolic-ref", "--short", "HEAD").strip() == "agent-side", "the user's tree is not moved back"
    assert "Your working tree switched from main to agent-side while the architect agent (fclaude) answered; " \
           "tunaflow left it as it is." in _warnings(events)


async def test_a_hook_planted_while_a_plan_develops_names_that_plan_beside_the_architect(harness: Harness) -> None:
    started, release = harness.root / "dev.started", harness.root / "dev.release"
    harness.set_script(
        architect=[{"text": "Noted.", "write": {".git/hooks/post-commit": "#!/bin/sh\ntouch pwned\n"}}],
        developer=[dev_turn(gate={"after": "I added mul", "started": str(started), "release": str(release),
                                  "limit": 60})])
    events: list[RuntimeEvent] = []
    rt = WorkflowRuntime(harness.project, harness.settings(auto_review=False), observer=events.append)
    try:
        plan = rt.service.create_plan_from_proposal(title="Add mul", slug="add-mul", subtasks=[("mul", "")])
        developing = asyncio.create_task(rt.decide(plan.id, "approve"))
        deadline = time.monotonic() + 60
        while not started.exists():
            assert time.monotonic() < deadline, "the Developer never started"
            await asyncio.sleep(0.02)
        await rt.send_user_message("How is it going?")  # the Architect answers while plan 1's Developer works
        release.write_text("go")
        await developing
    finally:
        release.write_text("go")
        rt.close()
    assert not (harness.project / ".git" / "hooks" / "post-commit").exists()
    [said] = [e.text for e in events if isinstance(e, NoticeRaised) and "shared git files" in e.text]
    assert said.endswith(f"(Plan {plan.id} was at work at the same time: it may have been its agents.)"), said
