"""What goes wrong mid-cycle ends in a state the user can act on, with the reason shown."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from pathlib import Path

from runtime_harness import MUL, MUL_DOC, PROPOSAL, Harness, dev_turn, verdict
from waiting import HANG_LIMIT, until

from tunaflow_tui.runtime.events import NoticeRaised, RuntimeEvent
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _runtime(h: Harness, events: list[RuntimeEvent] | None = None, **workflow: object) -> WorkflowRuntime:
    return WorkflowRuntime(h.project, h.settings(**workflow), observer=(events.append if events is not None else None))


async def _to_review(rt: WorkflowRuntime) -> int:
    await rt.send_user_message("add mul")
    [plan] = rt.store.list_plans()
    await rt.decide(plan.id, "approve")
    return plan.id


async def test_a_leftover_git_branch_of_the_same_name_gets_a_new_slug(harness: Harness) -> None:
    harness.git("branch", "tunaflow/add-multiplication-to-calc")
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    rt = _runtime(harness)
    try:
        plan_id = await _to_review(rt)
        plan = rt.get_plan(plan_id)
        assert plan.slug == "add-multiplication-to-calc-2"
        assert plan.pending_decision == "review"
    finally:
        rt.close()


async def test_a_worktree_that_cannot_be_created_stalls_dev_with_the_reason(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    blocker = harness.data_dir / "worktrees"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("a file where the worktrees folder should be")
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        await rt.send_user_message("add mul")
        [plan] = rt.store.list_plans()
        plan = await rt.decide(plan.id, "approve")
        assert plan.phase == "dev" and plan.pending_decision == "dev_stalled"
        assert "could not start" in str(plan.pending_detail["reason"])
        assert any(isinstance(e, NoticeRaised) and e.level == "error" for e in events)
        blocker.unlink()  # the user fixes the cause, then lets the Developer continue
        plan = await rt.decide(plan.id, "continue")
        assert plan.pending_decision == "review" and plan.pending_detail["verdict"] == "pass"
    finally:
        rt.close()


async def test_a_refusing_pre_commit_hook_does_not_lose_impl_complete(harness: Harness) -> None:
    hook = harness.project / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint: calc.py fails' >&2\nexit 1\n")
    hook.chmod(0o755)
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    rt = _runtime(harness)
    try:
        await rt.send_user_message("add mul")
        [plan] = rt.store.list_plans()
        plan = await rt.decide(plan.id, "approve")
        types = [e.type for e in rt.store.list_plan_events(plan.id)]
        assert "commit_failed" in types
        assert plan.pending_decision == "review", "impl-complete still ended Dev and the review ran"
        assert "def mul" in next(c for c in harness.calls() if c["role"] == "reviewer")["prompt"]
    finally:
        rt.close()


async def test_reviewers_stay_blind_across_rounds(harness: Harness) -> None:
    harness.set_script(
        architect=[{"text": PROPOSAL}],
        developer=[dev_turn(MUL), dev_turn(MUL_DOC)],
        reviewer=[{"text": verdict("fail", "SECRET-REVIEWER-FINDING")}, {"text": verdict("pass")}],
        verifier=[{"text": verdict("pass", "SECRET-VERIFIER-FINDING")}],
    )
    rt = _runtime(harness)
    try:
        plan_id = await _to_review(rt)
        await rt.decide(plan_id, "rework")
    finally:
        rt.close()
    calls = harness.calls()
    round2 = [c for c in calls if c["role"] in ("reviewer", "verifier") and "Review round: 2" in c["prompt"]]
    assert len(round2) == 2
    for call in round2:
        assert "SECRET-REVIEWER-FINDING" not in call["prompt"] and "SECRET-VERIFIER-FINDING" not in call["prompt"]
        assert "--resume" not in call["argv"]


async def test_test_run_leftovers_never_reach_the_branch(harness: Harness) -> None:
    (harness.project / "tests" / "conftest.py").write_text(
        "from pathlib import Path\n\n\ndef pytest_sessionfinish(session):\n"
        "    Path(session.config.rootpath, 'test-report.txt').write_text('report')\n"
    )
    harness.git("add", "-A")
    harness.git("commit", "-q", "-m", "report writer")
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    rt = _runtime(harness)
    try:
        plan_id = await _to_review(rt)
        plan = await rt.decide(plan_id, "accept")
        worktree = Path(plan.worktree_path or "")
        assert not (worktree / "test-report.txt").exists()
        files = harness.git("ls-tree", "-r", "--name-only", f"tunaflow/{plan.slug}").split()
        assert "test-report.txt" not in files
        assert not any("__pycache__" in f for f in files)
        assert "calc.py" in files and f"docs/plans/{plan.slug}-review-r1.md" in files
    finally:
        rt.close()


async def test_rework_prompt_keeps_an_earlier_failure_when_the_current_verdict_is_conditional(
    harness: Harness,
) -> None:
    harness.set_script(
        architect=[{"text": PROPOSAL}],
        developer=[dev_turn()],
        reviewer=[{"text": verdict("fail", "ROUND1-FAIL")}, {"text": verdict("conditional", "ROUND2-COND")},
                  {"text": verdict("pass")}],
        verifier=[{"text": verdict("pass")}],
    )
    rt = _runtime(harness)
    try:
        plan_id = await _to_review(rt)
        await rt.decide(plan_id, "rework")
        await rt.decide(plan_id, "rework")
    finally:
        rt.close()
    last = [c["prompt"] for c in harness.calls() if c["role"] == "developer"][-1]
    assert "ROUND2-COND" in last.split("Earlier failed reviews")[0], "current findings come first"
    assert "Earlier failed reviews" in last and "ROUND1-FAIL" in last.split("Earlier failed reviews")[1]


async def test_a_stale_session_is_dropped_and_the_turn_sent_again(harness: Harness) -> None:
    harness.set_script(architect=[{"text": "Hello."}, {"text": "Hello again."}])
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        first = await rt.send_user_message("hi")
        assert first is not None and first.ok
        # the CLI lost its transcripts (cleared, another machine): the stored session is stale
        Path(harness.env()["TUNAFLOW_FAKE_STATE"] + ".sessions").unlink()
        second = await rt.send_user_message("hi again")
        assert second is not None and second.ok and "Hello again." in second.text
    finally:
        rt.close()
    argvs = [c["argv"] for c in harness.calls()]
    assert "--resume" in argvs[1], "the stored session was tried once"
    assert "--session-id" in argvs[2] and "--resume" not in argvs[2], "then a fresh session"
    assert any(isinstance(e, NoticeRaised) and "could not resume" in e.text for e in events)


async def test_a_session_that_crashed_before_answering_is_not_resumed(harness: Harness) -> None:
    harness.set_script(architect=[{"crash": True}, {"text": "Hello again."}])
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        crashed = await rt.send_user_message("hi")
        assert crashed is not None and not crashed.ok
        second = await rt.send_user_message("hi again")
        assert second is not None and second.ok
    finally:
        rt.close()
    argvs = [c["argv"] for c in harness.calls()]
    assert len(argvs) == 2, "no failed resume in between"
    assert "--resume" not in argvs[1] and "--session-id" in argvs[1]
    assert not any(isinstance(e, NoticeRaised) and "could not resume" in e.text for e in events)


async def test_cancel_stops_every_turn_of_a_conversation(harness: Harness) -> None:
    harness.set_script(
        architect=[{"text": PROPOSAL}],
        developer=[dev_turn()],
        reviewer=[{"text": verdict("pass"), "hang_after_partial": 60}],
        verifier=[{"text": verdict("pass"), "hang_after_partial": 60}],
    )
    rt = _runtime(harness)
    try:
        await rt.send_user_message("add mul")
        [plan] = rt.store.list_plans()
        task = asyncio.create_task(rt.decide(plan.id, "approve"))
        await until(None, lambda: len(rt.runner.running_conversations) == 1 and len(rt.runner._running) == 2,
                    "both review seats running")
        review_conv = rt.runner.running_conversations[0]
        assert await rt.cancel(review_conv) == 2
        plan = await asyncio.wait_for(task, HANG_LIMIT)
        assert plan.pending_decision == "review_error"
        assert sorted(plan.pending_detail["retry_seats"]) == ["reviewer", "verifier"]
        statuses = [m.status for m in rt.store.list_messages(review_conv)]
        assert statuses.count("interrupted") == 2
    finally:
        rt.close()


def test_headless_architect_failure_exits_1_with_the_reason(harness: Harness) -> None:
    harness.set_script(architect=[{"crash": True}])
    harness.write_config()
    result = subprocess.run([sys.executable, "-m", "tunaflow_tui", "run", str(harness.project), "--request", "x"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "Architect's turn failed" in result.stderr


def test_headless_stalled_developer_says_which_decision_and_why(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[{"crash": True}])
    harness.write_config()
    result = subprocess.run([sys.executable, "-m", "tunaflow_tui", "run", str(harness.project), "--request", "x",
                             "--approve"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 3
    assert "dev_stalled" in result.stdout and "no flag decides this" in result.stdout
    assert "error" in result.stderr


async def test_retrying_an_interrupted_rework_sends_the_findings_again(harness: Harness) -> None:
    harness.set_script(
        architect=[{"text": PROPOSAL}],
        developer=[dev_turn(MUL), dict(dev_turn(MUL_DOC), hang_after_partial=60), dev_turn(MUL_DOC)],
        reviewer=[{"text": verdict("fail", "FINDING-TO-KEEP")}, {"text": verdict("pass")}],
        verifier=[{"text": verdict("pass")}],
    )
    rt = _runtime(harness)
    try:
        plan_id = await _to_review(rt)
        task = asyncio.create_task(rt.decide(plan_id, "rework"))

        def reworking() -> bool:  # the Developer is mid-answer: a part of its reply is stored
            return any(m.role == "assistant" and m.status == "streaming" and m.content
                       for conversation in rt.runner.running_conversations
                       for m in rt.store.list_messages(conversation))

        await until(None, reworking, "the Developer writing its rework")
        task.cancel()  # what quitting the app mid-turn does
        with contextlib.suppress(asyncio.CancelledError):
            await task
        [run] = rt.interrupted_plans()
        assert run.plan_id == plan_id and run.role == "developer"
        plan = await rt.resume_interrupted(plan_id, how="retry")
        assert plan.pending_decision == "review" and plan.pending_detail["verdict"] == "pass"
    finally:
        rt.close()
    retried = [c for c in harness.calls() if c["role"] == "developer"][-1]
    assert "FINDING-TO-KEEP" in retried["prompt"] and "--resume" not in retried["argv"]


async def test_cancel_while_the_turn_is_still_starting_stops_it_as_its_agent_starts(harness: Harness) -> None:
    """The status says "architect is working…" before the agent runs (lease, git snapshot): f4 then
    must not answer "no agent is running" and let the agent go on."""
    from tunaflow_tui.runtime.events import Progress

    harness.set_script(architect=[{"text": "Noted; here is my view."}])
    cancels: list[asyncio.Task[int]] = []
    rt: WorkflowRuntime

    def observe(event: RuntimeEvent) -> None:
        if isinstance(event, Progress) and "is working" in event.text and not cancels:
            cancels.append(asyncio.get_running_loop().create_task(rt.cancel()))

    rt = WorkflowRuntime(harness.project, harness.settings(), observer=observe)
    try:
        result = await asyncio.wait_for(rt.send_user_message("what about caching?"), HANG_LIMIT)
        assert cancels and await cancels[0] == 1, "the starting turn counted as running"
        assert result is not None and result.cancelled_by_user, result and result.message.status
        assert "Noted" not in result.message.content
    finally:
        rt.close()
