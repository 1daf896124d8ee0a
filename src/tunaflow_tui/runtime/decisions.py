"""The user's gate decisions, and the work each one starts until the next gate."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from tunaflow_tui.core import gitops
from tunaflow_tui.core.plandocs import write_result_doc
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.workflow import (
    Abandon,
    Accept,
    AggregateVerdict,
    Approve,
    ContinueAfterEscalation,
    ContinueDev,
    Hold,
    MarkComplete,
    Redesign,
    RequestRevision,
    Resume,
    RetryReview,
    RetrySetup,
    Rework,
    SkipSetup,
)
from tunaflow_tui.core.workflow.phases import Actor, Phase, PlanEventType
from tunaflow_tui.runtime import development, planning, prompts, review, worktree_prep
from tunaflow_tui.runtime.events import NoticeRaised

if TYPE_CHECKING:
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

DECISIONS: tuple[str, ...] = (
    "approve", "revise", "hold", "resume", "accept", "rework", "redesign", "retry",
    "continue", "complete", "abandon", "retry_setup", "skip_setup",
)


def pending_aggregate(plan: PlanRecord) -> AggregateVerdict | None:
    """The verdict the pending decision is about, if any."""
    raw = dict(plan.pending_detail or {}).get("aggregate")
    return AggregateVerdict.from_json(raw) if isinstance(raw, Mapping) else None


def earlier_failures(rt: WorkflowRuntime, plan_id: int, *, exclude_round: int | None = None) -> list[str]:
    """One line per failed review round of this plan other than ``exclude_round`` (for the rework prompt)."""
    lines: list[str] = []
    for event in rt.store.list_plan_events(plan_id):
        if event.type != "review_finished" or event.detail.get("verdict") != "fail":
            continue
        if event.detail.get("round") == exclude_round:
            continue
        raw = event.detail.get("aggregate")
        findings = AggregateVerdict.from_json(raw).findings if isinstance(raw, Mapping) else ()
        lines.append(f"round {event.detail.get('round')}: " + ("; ".join(findings[:5]) or "failed"))
    return lines


async def after_development(rt: WorkflowRuntime, plan: PlanRecord) -> PlanRecord:
    """After a Developer turn: review automatically when configured and the work is complete."""
    if plan.phase == Phase.REVIEW and plan.pending_decision is None and rt.settings.workflow.auto_review:
        plan = await review.run_review(rt, plan.id)
        plan = await maybe_auto_rework(rt, plan)
    return plan


async def maybe_auto_rework(rt: WorkflowRuntime, plan: PlanRecord) -> PlanRecord:
    """With ``auto_rework`` on, a failed review goes straight back to the Developer (the user's standing choice)."""
    if not rt.settings.workflow.auto_rework:
        return plan
    detail = dict(plan.pending_detail or {})
    if plan.pending_decision == "review" and detail.get("verdict") == "fail":
        rt.emit(NoticeRaised("Review failed; reworking automatically (auto_rework is on).", "info"))
        return await _rework(rt, plan, "")
    return plan


async def _rework(rt: WorkflowRuntime, plan: PlanRecord, feedback: str, *, escalated: bool = False) -> PlanRecord:
    agg = pending_aggregate(plan)
    findings = list(agg.findings) if agg else []
    earlier = earlier_failures(rt, plan.id, exclude_round=plan.review_round)
    command = ContinueAfterEscalation(feedback=feedback) if escalated else Rework(feedback=feedback)
    plan = rt.apply(plan.id, command, Actor.USER)
    plan = await development.run_developer(
        rt, plan, lambda p, _root: prompts.rework_prompt(p, findings, earlier, feedback)
    )
    return await after_development(rt, plan)


async def _after_setup_decision(rt: WorkflowRuntime, plan: PlanRecord, *, retry: bool) -> PlanRecord:
    """Retry the worktree setup, or skip it; either way the Developer starts once the worktree is ready."""
    plan = rt.apply(plan.id, RetrySetup() if retry else SkipSetup(), Actor.USER)
    if not retry:
        worktree_prep.mark_ready(rt, plan, setup="skipped")
    if plan.phase == Phase.DEV:
        plan = await development.run_developer(rt, plan, development.implementation_prompt_for, fresh=True)
    else:
        plan = await development.run_developer(rt, plan, lambda p, _root: prompts.continue_prompt(p))
    return await after_development(rt, plan)


async def architect_revision(rt: WorkflowRuntime, plan: PlanRecord, prompt: str) -> PlanRecord:
    """Ask the Architect for a revised proposal; a failed turn leaves the step open to retry."""
    rt.store.add_plan_event(plan.id, PlanEventType.AGENT_STARTED, "system", {"role": "architect", "step": "drafting"})
    result = await rt.run_role_turn("architect", "main", prompt, plan=plan)
    if not result.ok:
        rt.emit(NoticeRaised(f"The Architect's revision failed ({result.message.error_message or 'no reply'}); "
                             "retry it, or write to the Architect.", "error"))
        return rt.get_plan(plan.id)
    rt.store.add_plan_event(plan.id, PlanEventType.AGENT_FINISHED, "system",
                            {"role": "architect", "step": "drafting", "status": result.message.status})
    await planning.handle_architect_reply(rt, result, revising=rt.get_plan(plan.id))
    return rt.get_plan(plan.id)


async def finish_done(rt: WorkflowRuntime, plan: PlanRecord, agg: AggregateVerdict | None) -> PlanRecord:
    """Write the result document, archive the plan's branches, and say the merge is on offer."""
    root = development.workdir(rt, plan)
    await asyncio.to_thread(write_result_doc, root, plan.slug, prompts.result_document(plan, agg, plan.review_round))
    if plan.worktree_path:
        await asyncio.to_thread(gitops.commit_all, root, f"Result: {plan.title}")
    for branch_id in (plan.impl_branch_id, plan.review_branch_id):
        if branch_id is not None:
            rt.store.update_branch(branch_id, status="archived")
    if plan.git_branch:
        rt.progress(f"Plan {plan.id} is done. Merge {plan.git_branch} into {plan.base_branch} when you are ready.")
    else:
        rt.progress(f"Plan {plan.id} is done.")
    return rt.get_plan(plan.id)


async def apply_decision(
    rt: WorkflowRuntime, plan_id: int, decision: str, *, feedback: str = "", seats: tuple[str, ...] = ()
) -> PlanRecord:
    """Apply ``decision`` (one of DECISIONS) to the plan and run what follows."""
    plan = rt.get_plan(plan_id)
    if decision not in DECISIONS:
        raise ValueError(f"unknown decision {decision!r} (expected one of: {', '.join(DECISIONS)})")
    if decision in ("accept", "rework", "redesign", "continue", "abandon") and plan.pending_decision in (
        "review", "doom_loop", "review_error"
    ):
        # the round is settled: its document (held back while a seat could be retried) is written now
        await review.write_review_document(rt, plan)
    if decision == "approve":
        plan = rt.apply(plan_id, Approve(), Actor.USER)
        plan = await development.start_dev(rt, plan)
        return await after_development(rt, plan)
    if decision == "revise":
        plan = rt.apply(plan_id, RequestRevision(feedback=feedback), Actor.USER)
        return await architect_revision(rt, plan, prompts.revision_prompt(plan, feedback))
    if decision == "hold":
        return rt.apply(plan_id, Hold(), Actor.USER)
    if decision == "resume":
        return rt.apply(plan_id, Resume(), Actor.USER)
    if decision == "abandon":
        return rt.apply(plan_id, Abandon(reason=feedback), Actor.USER)
    if decision == "accept":
        agg = pending_aggregate(plan)
        plan = rt.apply(plan_id, Accept(), Actor.USER)
        return await finish_done(rt, plan, agg)
    if decision == "rework":
        return await _rework(rt, plan, feedback)
    if decision == "continue" and plan.phase == Phase.ESCALATED:
        return await _rework(rt, plan, feedback, escalated=True)
    if decision == "continue":
        plan = rt.apply(plan_id, ContinueDev(), Actor.USER)
        plan = await development.run_developer(rt, plan, lambda p, _root: prompts.continue_prompt(p))
        return await after_development(rt, plan)
    if decision == "complete":
        plan = rt.apply(plan_id, MarkComplete(), Actor.USER)
        return await after_development(rt, plan)
    if decision in ("retry_setup", "skip_setup"):
        return await _after_setup_decision(rt, plan, retry=decision == "retry_setup")
    if decision == "redesign":
        agg = pending_aggregate(plan)
        plan = rt.apply(plan_id, Redesign(feedback=feedback), Actor.USER)
        findings = list(agg.findings) if agg else []
        return await architect_revision(rt, plan, prompts.redesign_prompt(plan, findings, feedback))
    # retry: only the errored seats run again; the others' answers stand
    agg = pending_aggregate(plan)
    raw_offered = (plan.pending_detail or {}).get("retry_seats")
    offered = tuple(str(x) for x in raw_offered) if isinstance(raw_offered, list | tuple) else ()
    retry_seats = seats or offered or review.SEATS
    plan = rt.apply(plan_id, RetryReview(seats=seats), Actor.USER)
    previous = {s.seat: s for s in agg.seats} if agg else {}
    plan = await review.run_review(rt, plan_id, seats=tuple(retry_seats), previous=previous)
    return await maybe_auto_rework(rt, plan)
