"""Honest gates on the real runtime: an incomplete or failed review is never taken for a pass, every
plan has a way on, and the user's edit of a proposal is what gets approved and written down."""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_harness import PROPOSAL, Harness, dev_turn, verdict

from tunaflow_tui.core.exporting import export_plan
from tunaflow_tui.core.proposal_editing import parse_edited_proposal, proposal_to_editable_text
from tunaflow_tui.core.workflow import Approve, Decision, IllegalTransition, Waiting
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _runtime(h: Harness, **workflow: object) -> WorkflowRuntime:
    return WorkflowRuntime(h.project, h.settings(**workflow))


def _types(rt: WorkflowRuntime, plan_id: int) -> list[str]:
    return [e.type for e in rt.store.list_plan_events(plan_id)]


async def _proposed(rt: WorkflowRuntime) -> int:
    await rt.send_user_message("add mul")
    [plan] = rt.store.list_plans()
    return plan.id


async def test_a_rejected_login_on_one_seat_leaves_an_incomplete_review_not_a_pass(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"auth_401": True}])
    rt = _runtime(harness)
    try:
        plan = await rt.decide(await _proposed(rt), "approve")
        assert plan.pending_decision == "review" and plan.pending_detail["verdict"] == "pass"
        way = rt.way_on(plan.id)
        assert way.summary.startswith("review incomplete: retry the seat (1 of 2 seats answered")
        assert Decision.ACCEPT not in way.decisions
        assert way.decisions[:2] == (Decision.RETRY, Decision.ACCEPT_PARTIAL)
        assert "1 of 2 seats" in way.confirm[Decision.ACCEPT_PARTIAL]
        with pytest.raises(IllegalTransition, match="the review is incomplete"):
            await rt.decide(plan.id, Decision.ACCEPT)
        assert rt.get_plan(plan.id) == plan and "accepted" not in _types(rt, plan.id)
        plan = await rt.decide(plan.id, Decision.ACCEPT_PARTIAL, reason="codex login expired; one pass is enough")
        assert plan.phase == "done"
        [event] = [e for e in rt.store.list_plan_events(plan.id) if e.type == "accepted_partial_review"]
        assert event.detail["errored"] == ("verifier",) and event.detail["answered"] == 1
        assert rt.way_on(plan.id).waiting is Waiting.MERGE
        result = Path(plan.worktree_path or "") / "docs" / "plans" / f"{plan.slug}-result.md"
        assert "Decision: accepted with an incomplete review (1 of 2 seats)" in result.read_text()
        text = export_plan(rt.store, str(plan.id))
        assert "Outcome: accepted with an incomplete review (1 of 2 seats): codex login expired" in text
    finally:
        rt.close()


async def test_a_failed_review_is_accepted_only_by_an_explicit_override(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("fail")}], verifier=[{"text": verdict("pass")}])
    rt = _runtime(harness)
    try:
        plan = await rt.decide(await _proposed(rt), "approve")
        assert plan.pending_detail["verdict"] == "fail"
        review_docs = Path(plan.worktree_path or "") / "docs" / "plans"
        before = sorted(p.name for p in review_docs.iterdir())
        with pytest.raises(IllegalTransition, match="verdict is fail"):
            await rt.decide(plan.id, "accept")
        assert sorted(p.name for p in review_docs.iterdir()) == before, "a refused accept runs nothing"
        assert rt.way_on(plan.id).needs_confirmation(Decision.ACCEPT_OVERRIDE)
        plan = await rt.decide(plan.id, Decision.ACCEPT_OVERRIDE)
        assert plan.phase == "done"
        assert "accepted_over_failed_review" in _types(rt, plan.id) and "accepted" not in _types(rt, plan.id)
    finally:
        rt.close()


async def test_with_automatic_review_off_the_plan_waits_for_start_review(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    rt = _runtime(harness, auto_review=False)
    try:
        plan = await rt.decide(await _proposed(rt), "approve")
        assert plan.phase == "review" and plan.pending_decision is None
        [waiting] = rt.waiting()
        assert (waiting.plan_id, waiting.kind, waiting.decisions[0]) == (plan.id, Waiting.START_REVIEW,
                                                                         Decision.START_REVIEW)
        plan = await rt.decide(plan.id, Decision.START_REVIEW)
        assert plan.pending_decision == "review" and plan.pending_detail["verdict"] == "pass"
    finally:
        rt.close()


async def test_a_held_proposal_is_still_waiting_and_can_be_approved_directly(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    rt = _runtime(harness)
    try:
        plan = await rt.decide(await _proposed(rt), "hold")
        [waiting] = rt.waiting()
        assert waiting.held and waiting.kind is Waiting.APPROVAL and waiting.decisions[0] is Decision.APPROVE
        plan = await rt.decide(plan.id, Decision.APPROVE)
        assert plan.pending_decision == "review"
        assert _types(rt, plan.id)[:5] == ["proposal_received", "held", "resumed", "approved", "dev_started"]
    finally:
        rt.close()


async def test_the_edited_proposal_is_what_is_approved_and_written(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    rt = _runtime(harness)
    try:
        plan_id = await _proposed(rt)
        text = proposal_to_editable_text(rt.get_plan(plan_id))
        text = text.replace("# Add multiplication to calc", "# Multiply numbers in calc")
        text = text.replace("2. Test `mul` in tests/test_mul.py",
                            "2. Test `mul` in tests/test_mul.py, including negative numbers\n3. Mention `mul` in the "
                            "module docstring")
        plan = await rt.edit_proposal(plan_id, parse_edited_proposal(text))
        assert plan.title == "Multiply numbers in calc" and plan.slug == "multiply-numbers-in-calc"
        assert [s.title for s in plan.subtasks][2] == "Mention `mul` in the module docstring"
        plan = await rt.decide(plan_id, Decision.APPROVE)
        docs = Path(plan.worktree_path or "") / "docs" / "plans"
        assert "# Multiply numbers in calc" in (docs / "multiply-numbers-in-calc.md").read_text()
        assert "including negative numbers" in (docs / "multiply-numbers-in-calc-task-02.md").read_text()
        assert (docs / "multiply-numbers-in-calc-task-03.md").is_file()
        assert plan.git_branch == "tunaflow/multiply-numbers-in-calc"
        prompt = next(c["prompt"] for c in harness.calls() if c["role"] == "developer")
        assert "Mention `mul` in the module docstring" in prompt
        assert _types(rt, plan_id)[:3] == ["proposal_received", "plan_edited", "approved"]
        assert "edited by you: title: “Add multiplication to calc” → “Multiply numbers in calc”" in export_plan(
            rt.store, str(plan_id))
    finally:
        rt.close()


async def test_a_plan_whose_step_never_started_is_started_again(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    rt = _runtime(harness)
    try:
        plan_id = await _proposed(rt)
        # the process stopped right after the approval was written, before the Developer started
        rt.service.apply(plan_id, Approve(), actor="user")
        way = rt.way_on(plan_id)
        assert way.waiting is Waiting.INTERRUPTED and way.decisions == (Decision.RETRY_STEP, Decision.ABANDON)
        assert [(run.plan_id, run.role) for run in rt.interrupted_plans()] == [(plan_id, "developer")]
        with pytest.raises(IllegalTransition, match="available: retry_step, abandon"):
            await rt.decide(plan_id, Decision.RESUME_STEP)
        plan = await rt.decide(plan_id, Decision.RETRY_STEP)
        assert plan.pending_decision == "review" and plan.pending_detail["verdict"] == "pass"
    finally:
        rt.close()


async def test_abandoning_records_the_reason(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}],
                       developer=[dev_turn(text="I did part of it.\n<!-- tunaflow:subtask-done:1 -->\n")])
    rt = _runtime(harness)
    try:
        plan = await rt.decide(await _proposed(rt), "approve")
        assert plan.pending_decision == "dev_stalled"
        assert "Abandon the plan" in rt.way_on(plan.id).confirm[Decision.ABANDON]
        plan = await rt.decide(plan.id, Decision.ABANDON, reason="the Architect misread the task")
        assert plan.phase == "abandoned" and rt.way_on(plan.id).waiting is Waiting.NOTHING
        assert "Outcome: abandoned: the Architect misread the task" in export_plan(rt.store, str(plan.id))
    finally:
        rt.close()
