"""The user's gate decisions, and the work each one starts until the next gate."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tunaflow_tui.core import gitops
from tunaflow_tui.core.plandocs import write_result_doc
from tunaflow_tui.core.proposal_editing import EditedProposal
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.workflow import (
    AggregateVerdict,
    ContinueAfterEscalation,
    IllegalTransition,
    Rework,
)
from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.core.workflow.event_text import plan_outcome
from tunaflow_tui.core.workflow.phases import Actor, PendingDecision, Phase, PlanEventType
from tunaflow_tui.core.workflow.ways import DecisionInput, decision_command
from tunaflow_tui.runtime import (
    conflict_resolution,
    development,
    git_guard,
    planning,
    record_writer,
    review,
    role_prompts,
    worktree_prep,
)
from tunaflow_tui.runtime.events import NoticeRaised
from tunaflow_tui.runtime.turn_spec import TurnSpec

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import ProjectData, StepContext

DECISIONS: tuple[str, ...] = tuple(decision.value for decision in Decision)
"""Every decision ``decide`` accepts, by name."""


def pending_aggregate(plan: PlanRecord) -> AggregateVerdict | None:
    """The verdict the pending decision is about, if any."""
    raw = dict(plan.pending_detail or {}).get("aggregate")
    return AggregateVerdict.from_json(raw) if isinstance(raw, Mapping) else None


def earlier_failures(rt: ProjectData, plan_id: int, *, exclude_round: int | None = None) -> list[str]:
    """One line per failed review round of this plan other than ``exclude_round`` (for the rework prompt)."""
    lines: list[str] = []
    for event in rt.store.list_plan_events(plan_id):
        if event.type != PlanEventType.REVIEW_FINISHED or event.detail.get("verdict") != "fail":
            continue
        if event.detail.get("round") == exclude_round:
            continue
        raw = event.detail.get("aggregate")
        findings = AggregateVerdict.from_json(raw).findings if isinstance(raw, Mapping) else ()
        lines.append(f"round {event.detail.get('round')}: " + ("; ".join(findings[:5]) or "failed"))
    return lines


async def after_development(rt: StepContext, plan: PlanRecord) -> PlanRecord:
    """After a Developer turn: review automatically when configured and the work is complete."""
    if plan.phase == Phase.REVIEW and plan.pending_decision is None and rt.settings.workflow.auto_review:
        plan = await review.run_review(rt, plan.id)
        plan = await maybe_auto_rework(rt, plan)
    return plan


async def maybe_auto_rework(rt: StepContext, plan: PlanRecord) -> PlanRecord:
    """With ``auto_rework`` on, a failed review goes straight back to the Developer (the user's standing choice)."""
    if not rt.settings.workflow.auto_rework:
        return plan
    detail = dict(plan.pending_detail or {})
    if plan.pending_decision == PendingDecision.REVIEW and detail.get("verdict") == "fail":
        rt.emit(NoticeRaised("Review failed; reworking automatically (auto_rework is on).", "info"))
        return await _rework(rt, plan, "")
    return plan


async def _rework(rt: StepContext, plan: PlanRecord, feedback: str, *, escalated: bool = False) -> PlanRecord:
    agg = pending_aggregate(plan)
    findings = list(agg.findings) if agg else []
    earlier = earlier_failures(rt, plan.id, exclude_round=plan.review_round)
    command = ContinueAfterEscalation(feedback=feedback) if escalated else Rework(feedback=feedback)
    plan = rt.apply(plan.id, command, Actor.USER)
    plan = await development.run_developer(
        rt, plan, lambda p, _root: role_prompts.rework_prompt(p, findings, earlier, feedback)
    )
    return await after_development(rt, plan)


async def architect_revision(rt: StepContext, plan: PlanRecord, prompt: str) -> PlanRecord:
    """Ask the Architect for a revised proposal; a failed turn leaves the step open to retry."""
    rt.service.record(plan.id, PlanEventType.AGENT_STARTED, Actor.SYSTEM, {"role": "architect", "step": "drafting"})
    result = await rt.turns.run(TurnSpec("architect", "main", prompt, plan=plan))
    if not result.ok:
        rt.emit(NoticeRaised(f"The Architect's revision failed ({result.message.error_message or 'no reply'}); "
                             "retry it, or write to the Architect.", "error"))
        return rt.get_plan(plan.id)
    rt.service.record(plan.id, PlanEventType.AGENT_FINISHED, Actor.SYSTEM,
                            {"role": "architect", "step": "drafting", "status": result.message.status})
    await planning.handle_architect_reply(rt, result, revising=rt.get_plan(plan.id))
    return rt.get_plan(plan.id)


async def finish_done(rt: StepContext, plan: PlanRecord, agg: AggregateVerdict | None) -> PlanRecord:
    """Write the result document, archive the plan's branches, and say the merge is on offer."""
    root = development.workdir(rt, plan)
    outcome = plan_outcome(rt.store.list_plan_events(plan.id))
    document = role_prompts.result_document(plan, agg, plan.review_round, outcome.text if outcome else None)
    await asyncio.to_thread(write_result_doc, root, plan.slug, document)
    if plan.worktree_path:
        try:
            await git_guard.commit(rt, plan, root, f"Result: {plan.title}")
        except gitops.GitError as exc:  # the plan is done either way; the document stays in the worktree
            rt.service.record(plan.id, PlanEventType.COMMIT_FAILED, Actor.SYSTEM, {"error": str(exc)[:2000]})
            rt.emit(NoticeRaised(f"Could not commit the result document (it stays in the worktree): {exc}",
                                 "warning"))
    archived = False
    for branch_id in (plan.impl_branch_id, plan.review_branch_id):
        if branch_id is not None:
            rt.store.update_branch(branch_id, status="archived")
            archived = True
    if archived:  # the sidebar moves the branches to the archive now, not at the next start
        rt.plan_changed(rt.get_plan(plan.id))
    if plan.git_branch:
        rt.progress(f"Plan {plan.id} is done. Merge {plan.git_branch} into {plan.base_branch} when you are ready.",
                    plan.id)
    else:
        rt.progress(f"Plan {plan.id} is done.", plan.id)
    return rt.get_plan(plan.id)


def _phase_behind(plan: PlanRecord) -> Phase:
    """The plan's phase, or for a held plan the phase it was held in."""
    return Phase(plan.held_from) if plan.phase == Phase.HELD and plan.held_from else Phase(plan.phase)


Action = Callable[["StepContext", PlanRecord, DecisionInput], Awaitable[PlanRecord]]


async def _approve(rt: StepContext, plan: PlanRecord, given: DecisionInput) -> PlanRecord:
    await git_guard.require_commit(rt)  # an empty repository: said up front, the plan stays at approval
    plan = await development.start_dev(rt, _gate(rt, plan, Decision.APPROVE, given))
    return await after_development(rt, plan)


async def _edit(rt: StepContext, plan: PlanRecord, given: DecisionInput) -> PlanRecord:
    assert given.edit is not None
    since = record_writer.last_event_id(rt, plan.id)
    plan = rt.service.edit_proposal(plan.id, given.edit[1])
    record_writer.write_records(rt, plan.id, since)
    rt.plan_changed(plan)
    return plan


async def _revise(rt: StepContext, plan: PlanRecord, given: DecisionInput) -> PlanRecord:
    plan = _gate(rt, plan, Decision.REVISE, given)
    return await architect_revision(rt, plan, role_prompts.revision_prompt(plan, given.feedback))


def _gate(rt: StepContext, plan: PlanRecord, decision: Decision, given: DecisionInput) -> PlanRecord:
    """Apply the state-machine command of ``decision`` (a decision that starts no agent work)."""
    command = decision_command(decision, rt.service.state(plan.id), given)
    assert command is not None
    return rt.apply(plan.id, command, Actor.USER)


async def _only_gate(rt: StepContext, plan: PlanRecord, given: DecisionInput, decision: Decision) -> PlanRecord:
    return _gate(rt, plan, decision, given)


async def _accept(rt: StepContext, plan: PlanRecord, given: DecisionInput, decision: Decision) -> PlanRecord:
    agg = pending_aggregate(plan)
    plan = _gate(rt, plan, decision, given)
    return await finish_done(rt, plan, agg)


async def _continue(rt: StepContext, plan: PlanRecord, given: DecisionInput) -> PlanRecord:
    if _phase_behind(plan) is Phase.ESCALATED:
        return await _rework(rt, plan, given.feedback, escalated=True)
    plan = _gate(rt, plan, Decision.CONTINUE, given)
    plan = await development.run_developer(rt, plan, lambda p, _root: role_prompts.continue_prompt(p))
    return await after_development(rt, plan)


async def _complete(rt: StepContext, plan: PlanRecord, given: DecisionInput) -> PlanRecord:
    return await after_development(rt, _gate(rt, plan, Decision.COMPLETE, given))


async def _after_setup_decision(rt: StepContext, plan: PlanRecord, given: DecisionInput,
                                decision: Decision) -> PlanRecord:
    """Retry the worktree setup, or skip it; either way the Developer starts once the worktree is ready."""
    plan = _gate(rt, plan, decision, given)
    if decision is Decision.SKIP_SETUP:
        worktree_prep.mark_ready(rt, plan, setup="skipped")
    if plan.phase == Phase.DEV:
        plan = await development.run_developer(rt, plan, development.implementation_prompt_for, fresh=True)
    else:
        plan = await development.run_developer(rt, plan, lambda p, _root: role_prompts.continue_prompt(p))
    return await after_development(rt, plan)


async def _redesign(rt: StepContext, plan: PlanRecord, given: DecisionInput) -> PlanRecord:
    agg = pending_aggregate(plan)
    plan = _gate(rt, plan, Decision.REDESIGN, given)
    findings = list(agg.findings) if agg else []
    return await architect_revision(rt, plan, role_prompts.redesign_prompt(plan, findings, given.feedback,
                                                                       agg.verdict if agg else None))


async def _retry(rt: StepContext, plan: PlanRecord, given: DecisionInput) -> PlanRecord:
    """Only the errored seats run again; the others' answers stand."""
    agg = pending_aggregate(plan)
    raw_offered = (plan.pending_detail or {}).get("retry_seats")
    offered = tuple(str(x) for x in raw_offered) if isinstance(raw_offered, list | tuple) else ()
    retry_seats = given.seats or offered or review.SEATS
    plan = _gate(rt, plan, Decision.RETRY, given)
    previous = {s.seat: s for s in agg.seats} if agg else {}
    plan = await review.run_review(rt, plan.id, seats=tuple(retry_seats), previous=previous)
    return await maybe_auto_rework(rt, plan)


async def _start_review(rt: StepContext, plan: PlanRecord, given: DecisionInput) -> PlanRecord:
    plan = await review.run_review(rt, plan.id)
    return await maybe_auto_rework(rt, plan)


async def _resolve_conflict(rt: StepContext, plan: PlanRecord, given: DecisionInput) -> PlanRecord:
    """The Developer merges the base into the plan's branch and resolves; the tests and review run again."""
    plan = await conflict_resolution.resolve(rt, plan, given.feedback)
    return await after_development(rt, plan)


async def _leave_conflict(rt: StepContext, plan: PlanRecord, given: DecisionInput) -> PlanRecord:
    return await conflict_resolution.leave(rt, plan)


async def _remove_worktree(rt: StepContext, plan: PlanRecord, given: DecisionInput) -> PlanRecord:
    await asyncio.to_thread(development.remove_plan_worktree, rt, plan.id)
    return rt.get_plan(plan.id)


def _with(action: Callable[..., Awaitable[PlanRecord]], extra: object) -> Action:
    async def run(rt: StepContext, plan: PlanRecord, given: DecisionInput) -> PlanRecord:
        return await action(rt, plan, given, extra)

    return run


async def _rework_decision(rt: StepContext, plan: PlanRecord, given: DecisionInput) -> PlanRecord:
    return await _rework(rt, plan, given.feedback)


_ACTIONS: dict[Decision, Action] = {
    Decision.APPROVE: _approve,
    Decision.EDIT: _edit,
    Decision.REVISE: _revise,
    Decision.HOLD: _with(_only_gate, Decision.HOLD),
    Decision.RESUME: _with(_only_gate, Decision.RESUME),
    Decision.ABANDON: _with(_only_gate, Decision.ABANDON),
    Decision.START_REVIEW: _start_review,
    Decision.ACCEPT: _with(_accept, Decision.ACCEPT),
    Decision.ACCEPT_PARTIAL: _with(_accept, Decision.ACCEPT_PARTIAL),
    Decision.ACCEPT_OVERRIDE: _with(_accept, Decision.ACCEPT_OVERRIDE),
    Decision.REWORK: _rework_decision,
    Decision.REDESIGN: _redesign,
    Decision.RETRY: _retry,
    Decision.CONTINUE: _continue,
    Decision.COMPLETE: _complete,
    Decision.RETRY_SETUP: _with(_after_setup_decision, Decision.RETRY_SETUP),
    Decision.SKIP_SETUP: _with(_after_setup_decision, Decision.SKIP_SETUP),
    Decision.REMOVE_WORKTREE: _remove_worktree,
    Decision.RESOLVE_CONFLICT: _resolve_conflict,
    Decision.LEAVE_CONFLICT: _leave_conflict,
}
# Decisions that settle the review round waiting: its document (held back while a seat could be
# retried) is written first.
_SETTLE_ROUND = frozenset({Decision.ACCEPT, Decision.ACCEPT_PARTIAL, Decision.ACCEPT_OVERRIDE, Decision.REWORK,
                           Decision.REDESIGN, Decision.CONTINUE, Decision.ABANDON})


def parse_decision(name: str) -> Decision:
    """The decision called ``name``; ValueError naming the known ones otherwise."""
    try:
        return Decision(name)
    except ValueError:
        raise ValueError(f"unknown decision {name!r} (expected one of: {', '.join(DECISIONS)})") from None


@dataclass(frozen=True, slots=True)
class Decided:
    """A decision checked against the plan's state: what runs it (see :func:`run_decision`)."""

    decision: Decision
    plan: PlanRecord
    given: DecisionInput


async def check_decision(
    rt: StepContext,
    plan_id: int,
    decision: str,
    *,
    feedback: str = "",
    seats: tuple[str, ...] = (),
    reason: str = "",
    edited: EditedProposal | None = None,
) -> Decided:
    """Check ``decision`` (a :class:`Decision` or its name) against the plan, before any work starts.

    A state-machine command the machine would refuse raises :class:`IllegalTransition` (so accepting
    a failed or incomplete review needs its own, confirmed decision), and so does a runtime action
    (resume a step, merge) that the plan does not offer. A decision that settles the review round
    waiting writes the round's document first.
    """
    chosen = parse_decision(str(decision))
    plan = rt.get_plan(plan_id)
    if chosen is Decision.EDIT and edited is None:
        raise ValueError("an edit needs the edited proposal")
    given = DecisionInput(feedback=feedback, reason=reason, seats=seats,
                          edit=(EditedProposal.of(plan), edited) if edited is not None else None)
    command = decision_command(chosen, rt.service.state(plan_id), given)
    if command is not None:
        rt.service.check(plan_id, command, actor=Actor.USER)
    else:
        way = rt.service.way_on(plan_id)
        if chosen not in way.decisions:
            offered = ", ".join(d.value for d in way.decisions) or "nothing"
            raise IllegalTransition(f"cannot {chosen.label.lower()} for plan {plan_id}: {way.summary} "
                                    f"(available: {offered})", phase=Phase(plan.phase), command=chosen.value,
                                    allowed=tuple(d.value for d in way.decisions))
    if chosen in _SETTLE_ROUND and plan.pending_decision in (
            PendingDecision.REVIEW, PendingDecision.DOOM_LOOP, PendingDecision.REVIEW_ERROR):
        await review.write_review_document(rt, plan)
    return Decided(chosen, plan, given)


async def run_decision(rt: StepContext, decided: Decided) -> PlanRecord:
    """Run what a checked gate decision starts, until the next gate.

    Resuming a step and merging act on the runtime, not the plan's gate: the plan cycle runs those
    (:class:`~tunaflow_tui.runtime.plan_cycle.PlanCycle`).
    """
    action = _ACTIONS.get(decided.decision)
    if action is None:
        raise ValueError(f"{decided.decision.value} is run by the plan cycle, not as a gate decision")
    return await action(rt, decided.plan, decided.given)
