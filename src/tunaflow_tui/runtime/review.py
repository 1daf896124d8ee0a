"""Review: the project's tests, two blind read-only reviewers in parallel, the guarded worktree."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from tunaflow_tui.core import gitops
from tunaflow_tui.core.markers import ReviewVerdict
from tunaflow_tui.core.plandocs import write_review_doc
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.testrunner import TestResult, detect_test_command, run_tests
from tunaflow_tui.core.workflow import AggregateVerdict, ReviewFinished, ReviewStarted, SeatResult, aggregate
from tunaflow_tui.core.workflow.phases import Actor
from tunaflow_tui.core.workflow.service import plain_json
from tunaflow_tui.runtime import prompts
from tunaflow_tui.runtime.development import workdir
from tunaflow_tui.runtime.events import NoticeRaised
from tunaflow_tui.runtime.planning import record_rejections

if TYPE_CHECKING:
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

SEATS: tuple[str, ...] = ("reviewer", "verifier")
DIFF_MAX_BYTES = 120_000


def ensure_review_branch(rt: WorkflowRuntime, plan: PlanRecord) -> PlanRecord:
    """The plan's review branch (a roundtable), created on the first review."""
    if plan.review_branch_id is not None:
        return plan
    parent = f"branch:{plan.impl_branch_id}" if plan.impl_branch_id else "main"
    branch = rt.store.create_branch(
        conversation_id=parent,
        checkpoint_id=None,
        parent_branch_id=plan.impl_branch_id,
        mode="roundtable",
        kind="review",
        label=f"Review: {plan.title}"[:120],
        git_branch=plan.git_branch,
        worktree_path=plan.worktree_path,
    )
    return rt.store.update_plan(plan.id, review_branch_id=branch.id)


async def run_project_tests(rt: WorkflowRuntime, plan: PlanRecord, root: Path) -> TestResult | None:
    """Run the project's tests in the worktree and record the result as a plan event."""
    configured = rt.settings.workflow.test_command
    command = detect_test_command(root, configured)
    if command is None:
        rt.store.add_plan_event(plan.id, "tests_ran", "system", {"status": "not_detected"})
        rt.progress("No test command detected; the reviewers are told so.")
        return None
    rt.progress(f"Running the project's tests: {command.label}")
    result = await asyncio.to_thread(run_tests, root, command, timeout_s=rt.settings.workflow.test_timeout_s)
    rt.store.add_plan_event(
        plan.id,
        "tests_ran",
        "system",
        {
            "command": command.label,
            "status": result.status,
            "exit_code": result.exit_code,
            "duration_s": round(result.duration_s, 3),
            "summary": result.summary,
            "output_tail": result.output[-8000:],
        },
    )
    rt.progress(f"Tests {result.status}: {result.summary}")
    return result


async def _run_seat(
    rt: WorkflowRuntime, plan: PlanRecord, seat: str, round_no: int, diff: str, tests: TestResult | None
) -> SeatResult:
    engine, _config = rt.engine_for(seat)
    conversation = f"branch:{plan.review_branch_id}"
    prompt = prompts.review_prompt(plan, seat=seat, round_no=round_no, diff=diff, tests=tests)
    try:
        # blind: each seat starts a fresh session and sees only the plan, the diff and the tests
        result = await rt.run_role_turn(
            seat, conversation, prompt, cwd=workdir(rt, plan), plan=plan, fresh_session=True
        )
    except Exception as exc:  # a seat that cannot even start is a review error, not a failure
        return SeatResult(seat=seat, engine=engine.name, verdict=None, error=f"could not run: {exc}")
    record_rejections(rt, result.parse, seat, plan.id)
    if not result.ok:
        reason = result.message.error_message or result.message.status
        return SeatResult(seat=seat, engine=engine.name, verdict=None, error=reason)
    verdicts = [m for m in result.parse.markers if isinstance(m, ReviewVerdict) and m.accepted]
    if not verdicts:
        return SeatResult(seat=seat, engine=engine.name, verdict=None, error="the reviewer gave no verdict")
    v = verdicts[-1]
    return SeatResult(
        seat=seat,
        engine=engine.name,
        verdict=v.verdict,
        scores=dict(v.scores.items()) if hasattr(v.scores, "items") else dict(v.scores),
        failed_subtasks=tuple(v.failed_subtasks),
        findings=tuple(v.findings),
        recommendations=tuple(v.recommendations),
    )


def _review_markdown(plan: PlanRecord, round_no: int, agg: AggregateVerdict, tests: TestResult | None,
                     modified: list[str]) -> str:
    lines = [f"# Review round {round_no}: {plan.title}", "", f"Verdict: {agg.verdict or 'review error'}", ""]
    if tests is not None:
        lines += [f"Tests: {tests.status} — {tests.summary}", ""]
    if modified:
        lines += ["Reviewer modified code (reverted):", *[f"- {p}" for p in modified], ""]
    for seat in agg.seats:
        lines.append(f"## {seat.seat} ({seat.engine}): {seat.verdict or 'error'}")
        if seat.error:
            lines.append(f"Review error: {seat.error}")
        lines += [f"- {name}: {score}" for name, score in seat.scores.items()]
        if seat.findings:
            lines += ["", "Findings:", *[f"- {f}" for f in seat.findings]]
        if seat.recommendations:
            lines += ["", "Recommendations:", *[f"- {r}" for r in seat.recommendations]]
        lines.append("")
    return "\n".join(lines)


async def run_review(
    rt: WorkflowRuntime,
    plan_id: int,
    *,
    seats: tuple[str, ...] = (),
    previous: dict[str, SeatResult] | None = None,
) -> PlanRecord:
    """Run a review round, or re-run ``seats`` of the current one keeping the ``previous`` answers."""
    plan = rt.get_plan(plan_id)
    retry = bool(seats)
    previous = previous or {}
    if not retry:
        plan = rt.apply(plan.id, ReviewStarted(), Actor.SYSTEM)
    plan = ensure_review_branch(rt, plan)
    round_no = plan.review_round
    root = workdir(rt, plan)
    tests = await run_project_tests(rt, plan, root)
    diff = ""
    if plan.base_branch and plan.worktree_path:
        diff = await asyncio.to_thread(gitops.diff_against_base, root, plan.base_branch, max_bytes=DIFF_MAX_BYTES)
    guarded = rt.is_git
    snap = await asyncio.to_thread(gitops.snapshot, root) if guarded else None
    before_fp = snap.fingerprint if snap is not None else None
    run_seats = seats or SEATS
    rt.store.add_plan_event(plan.id, "agent_started", "system", {"role": "review", "step": "review",
                                                                 "seats": list(run_seats), "round": round_no})
    rt.progress(f"Review round {round_no}: {', '.join(run_seats)} reading the work (read-only)…")
    results = await asyncio.gather(*(_run_seat(rt, plan, s, round_no, diff, tests) for s in run_seats))
    modified: list[str] = []
    if guarded and before_fp is not None and snap is not None:
        after_fp = await asyncio.to_thread(gitops.fingerprint, root)
        if after_fp != before_fp:
            restored = await asyncio.to_thread(gitops.restore, root, snap)
            modified = restored or gitops.changed_paths(before_fp, after_fp) or ["(git index or history)"]
            rt.store.add_plan_event(plan.id, "reviewer_modified_code", "system",
                                    {"paths": modified, "round": round_no, "reverted": True})
            rt.emit(NoticeRaised(
                f"A reviewer modified {len(modified)} file(s); the changes were reverted: "
                + ", ".join(modified[:5]), "warning"))
    rt.store.add_plan_event(plan.id, "agent_finished", "system", {"role": "review", "step": "review",
                                                                  "round": round_no})
    combined = dict(previous)
    combined.update({r.seat: r for r in results})
    agg = aggregate([combined[s] for s in SEATS if s in combined])
    content = _review_markdown(plan, round_no, agg, tests, modified)
    await asyncio.to_thread(write_review_doc, root, plan.slug, max(round_no, 1), content)
    if plan.worktree_path:
        await asyncio.to_thread(gitops.commit_all, root, f"Review round {round_no}: {plan.title}")
    plan = rt.apply(plan.id, ReviewFinished(aggregate=agg), Actor.AGENT)
    # keep the test result and any reverted reviewer edit with the decision, for the verdict card
    detail = plain_json(plan.pending_detail or {})
    detail["reviewer_modified"] = modified
    detail["tests"] = None if tests is None else {"status": tests.status, "summary": tests.summary}
    plan = rt.store.update_plan(plan.id, pending_detail=detail)
    rt.plan_changed(plan)
    return plan
