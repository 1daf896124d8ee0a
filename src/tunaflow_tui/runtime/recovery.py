"""After a crash or a cancel: find the agent steps that did not finish, and run them again."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tunaflow_tui.core.storage.records import MessageRecord, PlanRecord
from tunaflow_tui.core.workflow import AggregateVerdict, open_step
from tunaflow_tui.core.workflow.phases import Actor, Phase, PlanEventType
from tunaflow_tui.runtime import decisions, development, planning, prompts, review
from tunaflow_tui.runtime.agent_turn import TurnResult
from tunaflow_tui.runtime.leftovers import AgentStillRunning, find_leftovers
from tunaflow_tui.runtime.turn_spec import TurnSpec

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import ProjectData, RecoveryContext, StepContext


_RESTARTABLE = {Phase.CHAT: "architect", Phase.DRAFTING: "architect", Phase.DEV: "developer",
                Phase.REWORK: "developer", Phase.REVIEW: "review"}


@dataclass(frozen=True, slots=True)
class InterruptedRun:
    """An agent step that started and never finished."""

    plan_id: int
    plan_title: str
    role: str
    step: str


def _open_step(rt: ProjectData, plan: PlanRecord) -> dict[str, object] | None:
    found = open_step(rt.store.list_plan_events(plan.id))
    return None if found is None else dict(found)


def plan_conversations(plan: PlanRecord, role: str | None = None) -> set[str]:
    """The conversations an agent step of ``role`` on the plan runs in (by default, its phase's step)."""
    if (role or _RESTARTABLE.get(Phase(plan.phase))) == "architect":
        return {"main"}
    return {f"branch:{plan.impl_branch_id}", f"branch:{plan.review_branch_id}"}


def interrupted_runs(rt: RecoveryContext) -> tuple[InterruptedRun, ...]:
    """Plans whose agent step was running when the process stopped (none run in this process).

    Also a plan in development whose Developer never started (the process stopped between the
    decision and the agent). None while another live process owns the project: its steps are
    running there, not stopped; nor a step whose conversation's lease a live process holds.
    """
    if not rt.store.is_owner:
        return ()
    running = set(rt.runner.running_conversations)
    running |= {lease.conversation_id for lease in rt.store.live_leases()}  # turns another process writes now
    busy = rt.busy_plan_ids()
    found = []
    for plan in rt.store.list_plans():
        if Phase(plan.phase).is_terminal or plan.pending_decision or plan.id in busy:
            continue
        detail = _open_step(rt, plan)
        if detail is None and Phase(plan.phase) in (Phase.DEV, Phase.REWORK):
            detail = {"role": "developer", "step": plan.phase}
        if detail is None:
            continue
        if running & plan_conversations(plan, str(detail.get("role"))):
            continue
        found.append(InterruptedRun(plan.id, plan.title, str(detail.get("role", "")), str(detail.get("step", ""))))
    return tuple(found)


def record_interruption(rt: RecoveryContext, reason: str) -> None:
    """Note on every plan whose step was running that tunaflow was stopped, and why (the step stays resumable)."""
    for run in interrupted_runs(rt):
        rt.service.record(run.plan_id, PlanEventType.RUN_INTERRUPTED, Actor.SYSTEM,
                                {"reason": reason, "role": run.role, "step": run.step})


def _last_feedback(rt: ProjectData, plan_id: int) -> tuple[str, bool]:
    for event in reversed(rt.store.list_plan_events(plan_id)):
        if event.type in (PlanEventType.REVISION_REQUESTED, PlanEventType.REDESIGN_REQUESTED):
            return str(event.detail.get("feedback", "")), event.type == PlanEventType.REDESIGN_REQUESTED
    return "", False


def _last_review(rt: ProjectData, plan_id: int) -> tuple[AggregateVerdict | None, int | None]:
    for event in reversed(rt.store.list_plan_events(plan_id)):
        if event.type == PlanEventType.REVIEW_FINISHED:
            raw = event.detail.get("aggregate")
            round_no = event.detail.get("round")
            agg = AggregateVerdict.from_json(raw) if isinstance(raw, Mapping) else None
            return agg, round_no if isinstance(round_no, int) else None
    return None, None


async def resume_plan(rt: RecoveryContext, plan_id: int, *, how: str = "resume") -> PlanRecord:
    """Run the interrupted step again: ``resume`` continues the stored session, ``retry`` starts afresh.

    Raises :class:`AgentStillRunning` (and changes nothing) while the step's earlier agent still runs.
    A plan whose step never started (the process stopped between a decision and its agent) has no
    session to resume: its step is started afresh. A plan waiting for the user has no step to run.
    """
    plan = rt.get_plan(plan_id)
    detail = _open_step(rt, plan)
    if detail is None:
        if plan.pending_decision is not None or Phase(plan.phase) not in _RESTARTABLE:
            raise ValueError(f"plan {plan_id} has no interrupted step")
        detail, how = {"role": _RESTARTABLE[Phase(plan.phase)], "step": plan.phase}, "retry"
    else:
        await _no_leftovers(rt, plan, detail)
        rt.service.record(plan.id, PlanEventType.AGENT_FINISHED, Actor.SYSTEM, {**detail, "status": "interrupted", "how": how})
    if detail.get("role") == "review":
        round_no = detail.get("round")
        if isinstance(round_no, int) and round_no == plan.review_round and round_no > 0:
            # same round: the seats that answered before the crash keep their answers
            done = review.finished_seats(rt, plan.id, round_no)
            raw_asked = detail.get("seats")
            asked = tuple(str(s) for s in raw_asked) if isinstance(raw_asked, list | tuple) and raw_asked else review.SEATS
            missing = tuple(s for s in asked if s not in done)
            plan = await review.run_review(rt, plan.id, seats=missing, previous=done)
        else:
            plan = await review.run_review(rt, plan.id)
        return await decisions.maybe_auto_rework(rt, plan)
    if plan.phase in (Phase.DEV, Phase.REWORK):
        if how == "resume":
            plan = await development.run_developer(rt, plan, lambda p, _root: prompts.continue_prompt(p))
        elif plan.phase == Phase.REWORK:
            agg, round_no = _last_review(rt, plan.id)
            findings = list(agg.findings) if agg else []
            earlier = decisions.earlier_failures(rt, plan.id, exclude_round=round_no)
            plan = await development.run_developer(
                rt, plan, lambda p, _root: prompts.rework_prompt(p, findings, earlier), fresh=True
            )
        else:
            plan = await development.run_developer(rt, plan, development.implementation_prompt_for, fresh=True)
        return await decisions.after_development(rt, plan)
    if plan.phase in (Phase.DRAFTING, Phase.CHAT):
        feedback, redesign = _last_feedback(rt, plan.id)
        agg, _round = _last_review(rt, plan.id)
        prompt = (prompts.redesign_prompt(plan, list(agg.findings) if agg else [], feedback,
                                          agg.verdict if agg else None) if redesign
                  else prompts.revision_prompt(plan, feedback))
        return await decisions.architect_revision(rt, plan, prompt)
    return plan


async def _no_leftovers(rt: RecoveryContext, plan: PlanRecord, step: Mapping[str, object]) -> None:
    """Refuse to run ``step`` again while the agent an earlier tunaflow started for it still runs.

    A leftover test run of the plan is stopped instead (see ``RecoveryContext.stop_leftover_agents``).
    """
    role = step.get("role")
    if role == "architect":
        conversations = ("main",)
    elif role == "developer":
        conversations = (f"branch:{plan.impl_branch_id}",)
    else:
        conversations = (f"branch:{plan.review_branch_id}",)
    await rt.stop_leftover_agents(plan.id, agents=False)
    found = find_leftovers(rt.store, conversations=conversations, plan_id=plan.id if role == "review" else None)
    if found:
        raise AgentStillRunning(found)


def last_unanswered_user_message(rt: ProjectData) -> MessageRecord | None:
    """The main conversation's last user message when no finished reply follows it."""
    messages = rt.store.list_messages("main", limit=20)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user":
            later = messages[index + 1:]
            if not any(m.role == "assistant" and m.status == "done" for m in later):
                return message
            return None
    return None


async def retry_message(rt: RecoveryContext, message: MessageRecord) -> TurnResult | None:
    """Re-run the turn behind a failed or interrupted reply."""
    if message.conversation_id != "main":
        for plan in rt.store.list_plans():
            if message.conversation_id in (f"branch:{plan.impl_branch_id}", f"branch:{plan.review_branch_id}"):
                if any(run.plan_id == plan.id for run in interrupted_runs(rt)):
                    async with rt.plan_lock(plan.id):
                        await resume_plan(rt, plan.id, how="retry")
                return None
        conversation = rt.store.get_conversation(message.conversation_id)
        branch = rt.store.get_branch(conversation.branch_id) if conversation and conversation.branch_id else None
        if branch is None or branch.kind != "general" or branch.mode != "chat":
            return None
        asked = [m for m in rt.store.list_messages(message.conversation_id, before_id=message.id, limit=20)
                 if m.role == "user"]
        return await rt.answer_in_branch(asked[-1]) if asked else None
    earlier = rt.store.list_messages("main", before_id=message.id, limit=20)
    users = [m for m in earlier if m.role == "user"]
    if not users:
        return None
    return await answer_user_message(rt, users[-1])


async def answer_user_message(rt: StepContext, user_message: MessageRecord) -> TurnResult:
    """Let the Architect answer an already stored user message again."""
    drafting = planning.plan_in_drafting(rt)
    result = await rt.turns.run(TurnSpec("architect", "main", user_message.content,
                                        plan=drafting or planning.active_plan(rt), exclude_message_id=user_message.id))
    if result.ok:
        await planning.handle_architect_reply(rt, result, revising=drafting)
    return result
