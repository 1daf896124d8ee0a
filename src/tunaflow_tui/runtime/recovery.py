"""After a crash or a cancel: find the agent steps that did not finish, and retry a failed reply.

The interrupted step itself is run again by :meth:`.plan_cycle.PlanCycle.resume`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tunaflow_tui.core.storage.records import MessageRecord, PlanRecord
from tunaflow_tui.core.workflow import AggregateVerdict, open_step
from tunaflow_tui.core.workflow.phases import Actor, Phase, PlanEventType
from tunaflow_tui.runtime import planning
from tunaflow_tui.runtime.agent_turn import TurnResult
from tunaflow_tui.runtime.leftovers import AgentStillRunning, find_leftovers
from tunaflow_tui.runtime.plan_slots import queued_plans
from tunaflow_tui.runtime.plans_in_flight import plan_pointer
from tunaflow_tui.runtime.turn_spec import TurnSpec

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import LeftoverContext, ProjectData, RecoveryContext, StepContext


_RESTARTABLE = {Phase.CHAT: "architect", Phase.DRAFTING: "architect", Phase.DEV: "developer",
                Phase.REWORK: "developer", Phase.REVIEW: "review"}


@dataclass(frozen=True, slots=True)
class InterruptedRun:
    """An agent step that started and never finished."""

    plan_id: int
    plan_title: str
    role: str
    step: str


def restartable_role(plan: PlanRecord) -> str | None:
    """The role whose step the plan's phase runs, when that step can be started again (else None)."""
    return _RESTARTABLE.get(Phase(plan.phase))


def open_step_of(rt: ProjectData, plan: PlanRecord) -> dict[str, object] | None:
    """The plan's agent step that started and has not finished (its start event's detail), if any."""
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
    decision and the agent), unless it was queued for a slot: that one starts by itself
    (``WorkflowRuntime.start_queued``). None while another live process owns the project: its steps are
    running there, not stopped; nor a step whose conversation's lease a live process holds.
    """
    if not rt.store.is_owner:
        return ()
    running = set(rt.runner.running_conversations)
    running |= {lease.conversation_id for lease in rt.store.live_leases()}  # turns another process writes now
    busy = rt.busy_plan_ids() | {queued.plan_id for queued in queued_plans(rt.store)}  # queued: started, not offered
    found = []
    for plan in rt.store.list_plans():
        if Phase(plan.phase).is_terminal or plan.pending_decision or plan.id in busy:
            continue
        detail = open_step_of(rt, plan)
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


def last_feedback(rt: ProjectData, plan_id: int) -> tuple[str, bool]:
    """The feedback of the plan's latest revision or redesign request, and whether it was a redesign."""
    for event in reversed(rt.store.list_plan_events(plan_id)):
        if event.type in (PlanEventType.REVISION_REQUESTED, PlanEventType.REDESIGN_REQUESTED):
            return str(event.detail.get("feedback", "")), event.type == PlanEventType.REDESIGN_REQUESTED
    return "", False


def last_review(rt: ProjectData, plan_id: int) -> tuple[AggregateVerdict | None, int | None]:
    """The plan's latest review verdict and its round (None, None before any review)."""
    for event in reversed(rt.store.list_plan_events(plan_id)):
        if event.type == PlanEventType.REVIEW_FINISHED:
            raw = event.detail.get("aggregate")
            round_no = event.detail.get("round")
            agg = AggregateVerdict.from_json(raw) if isinstance(raw, Mapping) else None
            return agg, round_no if isinstance(round_no, int) else None
    return None, None


async def no_leftovers(rt: LeftoverContext, plan: PlanRecord, step: Mapping[str, object]) -> None:
    """Refuse to run ``step`` again while the agent an earlier tunaflow started for it still runs.

    A leftover test run of the plan is stopped instead (see ``WorkflowRuntime.stop_leftover_agents``).
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
                    await rt.resume_interrupted(plan.id, how="retry")
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
    pointer = plan_pointer(user_message.content)
    about = rt.store.get_plan(pointer) if pointer is not None else None
    result = await rt.turns.run(TurnSpec("architect", "main", user_message.content,
                                        plan=about or planning.plan_in_drafting(rt) or planning.active_plan(rt),
                                        exclude_message_id=user_message.id))
    if result.ok:
        await planning.handle_architect_reply(rt, result, revising=about, feedback=user_message.content)
    return result
