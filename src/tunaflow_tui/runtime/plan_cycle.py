"""The plan cycle's entry points: the user's decisions, edits, review rounds, resumed steps, the merge.

One step at a time per plan (the plan locks live here). A decision is checked and run by
:mod:`~tunaflow_tui.runtime.decisions` (approve → :mod:`~tunaflow_tui.runtime.development` → review →
rework…); the two decisions that act on the runtime rather than the state machine — resume or retry an
interrupted step, merge — are dispatched here, and so is the resumed step itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Protocol

from tunaflow_tui.core import gitops
from tunaflow_tui.core.proposal_editing import EditedProposal
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.workflow.commands import Hold
from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.core.workflow.phases import Actor, Phase, PlanEventType
from tunaflow_tui.core.workflow.service import WaitingDecision
from tunaflow_tui.core.workflow.ways import WayOn
from tunaflow_tui.runtime import (
    conflict_resolution,
    decisions,
    development,
    plan_slots,
    planning,
    record_writer,
    recovery,
    review,
    role_prompts,
)
from tunaflow_tui.runtime.events import NoticeRaised
from tunaflow_tui.runtime.merge_queue import QueuedBehind
from tunaflow_tui.runtime.ports import LeftoverStopper, RunningAgents, StepContext


class CycleHost(StepContext, RunningAgents, LeftoverStopper, Protocol):
    """What the plan cycle uses: the steps' context, the agents running now, the leftovers."""


class PlanCycle:
    """Decide, edit, review, resume, merge: each plan one step at a time."""

    def __init__(self, host: CycleHost) -> None:
        self._host = host
        self._locks: dict[int, asyncio.Lock] = {}

    def plan_lock(self, plan_id: int) -> asyncio.Lock:
        """One step at a time per plan."""
        return self._locks.setdefault(plan_id, asyncio.Lock())

    @asynccontextmanager
    async def _step(self, plan_id: int) -> AsyncIterator[None]:
        """The plan's lock for one decision or step; the slot its work took is freed when it reaches its gate."""
        async with self.plan_lock(plan_id):
            try:
                with self._host.slots.deciding(plan_id):
                    yield
            finally:
                self._host.slots.release(plan_id)

    def busy_plan_ids(self) -> frozenset[int]:
        """Plans being worked on now: a decision or step in progress, or an agent running."""
        running = set(self._host.runner.running_conversations)
        busy = {plan_id for plan_id, lock in self._locks.items() if lock.locked()}
        for plan in self._host.store.list_plans():
            if running & recovery.plan_conversations(plan):
                busy.add(plan.id)
        return frozenset(busy)

    def way_on(self, plan_id: int) -> WayOn:
        """What the plan waits on now and the decisions available (the first is the main one).

        A queued plan waits on a slot, not on the user (holding or abandoning it is still possible).
        """
        way = self._host.service.way_on(plan_id, running=plan_id in self.busy_plan_ids())
        queued = next((q for q in plan_slots.queued_plans(self._host.store) if q.plan_id == plan_id), None)
        if queued is not None:
            limit = self._host.slots.limit
            return replace(way, summary=f"queued (number {queued.position} in line): starts by itself when "
                           f"one of the {limit} plans that may work at once (max_parallel_plans) reaches a gate")
        return way

    def waiting(self) -> tuple[WaitingDecision, ...]:
        """Everything waiting for the user, newest first, held plans last (a queued plan waits on a slot)."""
        queued = {q.plan_id for q in plan_slots.queued_plans(self._host.store)}
        return self._host.service.pending_decisions(busy=self.busy_plan_ids() | queued)

    async def decide(self, plan_id: int, decision: Decision | str, *, feedback: str = "",
                     seats: tuple[str, ...] = (), reason: str = "", edited: EditedProposal | None = None) -> PlanRecord:
        """Apply the user's decision on a plan and run whatever it starts, until the next gate.

        Abandoning a queued plan takes it out of the queue first: its Developer never starts. Holding a
        queued plan takes it out of the queue at once (the step waiting for its slot ends without starting);
        resuming it puts it back at the end of the queue, or starts its step when a slot is free.
        """
        if str(decision) == Decision.ABANDON:
            self._host.slots.withdraw(plan_id)
        if str(decision) == Decision.HOLD and self._host.service.state(plan_id).queued:
            # not behind the plan's lock: the step that waits for a slot holds it until it starts
            plan = self._host.apply(plan_id, Hold(), Actor.USER)
            self._host.slots.withdraw(plan_id)
            return plan
        async with self._step(plan_id):
            return await self._decide(plan_id, decision, feedback=feedback, seats=seats, reason=reason,
                                      edited=edited)

    async def _decide(self, plan_id: int, decision: Decision | str, *, feedback: str = "",
                      seats: tuple[str, ...] = (), reason: str = "",
                      edited: EditedProposal | None = None) -> PlanRecord:
        decided = await decisions.check_decision(self._host, plan_id, str(decision), feedback=feedback, seats=seats,
                                                 reason=reason, edited=edited)
        if decided.decision in (Decision.RESUME_STEP, Decision.RETRY_STEP):
            return await self.resume(plan_id, how="resume" if decided.decision is Decision.RESUME_STEP else "retry")
        if decided.decision is Decision.RESUME and decided.plan.pending_decision is None:
            await decisions.run_decision(self._host, decided)  # held while queued: its step never started
            return await self.resume(plan_id, how="retry")
        if decided.decision is Decision.MERGE:
            result = await asyncio.to_thread(self.merge, plan_id)
            level = "warning" if str(result.kind) == "conflict" else "info"
            self._host.emit(NoticeRaised(f"Merge: {result.kind} — {result.message}", level))
            return self._host.get_plan(plan_id)
        return await decisions.run_decision(self._host, decided)

    async def edit_proposal(self, plan_id: int, edited: EditedProposal) -> PlanRecord:
        """Replace a proposal at the approval gate with the user's edit (a new title renames the slug)."""
        async with self._step(plan_id):
            before = self._host.get_plan(plan_id)
            plan = await self._decide(plan_id, Decision.EDIT, edited=edited)
            if plan.title != before.title:
                plan = await planning.retitle_slug(self._host, plan)
                self._host.plan_changed(plan)
            return plan

    async def start_review(self, plan_id: int) -> PlanRecord:
        """Run a review round now (used when automatic review is off)."""
        async with self._step(plan_id):
            plan = await review.run_review(self._host, plan_id)
            return await decisions.maybe_auto_rework(self._host, plan)

    async def resume_interrupted(self, plan_id: int, *, how: str = "resume") -> PlanRecord:
        """Re-run the agent step that a crash or cancel interrupted (``resume`` keeps the session)."""
        async with self._step(plan_id):
            return await self.resume(plan_id, how=how)

    async def start_queued(self, plan_id: int) -> PlanRecord:
        """Start a plan an earlier run left queued: it waits for a slot in its place, then its step starts afresh."""
        async with self._step(plan_id):
            plan = self._host.get_plan(plan_id)
            if plan.id not in {q.plan_id for q in plan_slots.queued_plans(self._host.store)}:
                return plan
            return await self.resume(plan_id, how="retry")

    async def resume(self, plan_id: int, *, how: str = "resume") -> PlanRecord:
        """Run the interrupted step again (the plan's lock held): ``resume`` continues the session, ``retry`` not.

        Raises :class:`~tunaflow_tui.runtime.leftovers.AgentStillRunning` (and changes nothing) while the
        step's earlier agent still runs. A plan whose step never started (the process stopped between a
        decision and its agent) has no session to resume: its step is started afresh. A plan waiting for
        the user has no step to run.
        """
        host = self._host
        plan = host.get_plan(plan_id)
        detail = recovery.open_step_of(host, plan)
        if detail is None:
            restart = recovery.restartable_role(plan)
            if plan.pending_decision is not None or restart is None:
                raise ValueError(f"plan {plan_id} has no interrupted step")
            detail, how = {"role": restart, "step": plan.phase}, "retry"
        else:
            await recovery.no_leftovers(host, plan, detail)
            host.service.record(plan.id, PlanEventType.AGENT_FINISHED, Actor.SYSTEM,
                                {**detail, "status": "interrupted", "how": how})
        if detail.get("role") == "review":
            return await self._resume_review(plan, detail)
        if plan.phase in (Phase.DEV, Phase.REWORK):
            return await self._resume_development(plan, how)
        if plan.phase in (Phase.DRAFTING, Phase.CHAT):
            feedback, redesign = recovery.last_feedback(host, plan.id)
            agg, _round = recovery.last_review(host, plan.id)
            prompt = (role_prompts.redesign_prompt(plan, list(agg.findings) if agg else [], feedback,
                                              agg.verdict if agg else None) if redesign
                      else role_prompts.revision_prompt(plan, feedback))
            return await decisions.architect_revision(host, plan, prompt)
        return plan

    async def _resume_review(self, plan: PlanRecord, detail: dict[str, object]) -> PlanRecord:
        host = self._host
        round_no = detail.get("round")
        if isinstance(round_no, int) and round_no == plan.review_round and round_no > 0:
            # same round: the seats that answered before the crash keep their answers
            done = review.finished_seats(host, plan.id, round_no)
            raw_asked = detail.get("seats")
            asked = (tuple(str(s) for s in raw_asked) if isinstance(raw_asked, list | tuple) and raw_asked
                     else review.SEATS)
            missing = tuple(s for s in asked if s not in done)
            plan = await review.run_review(host, plan.id, seats=missing, previous=done)
        else:
            plan = await review.run_review(host, plan.id)
        return await decisions.maybe_auto_rework(host, plan)

    async def _resume_development(self, plan: PlanRecord, how: str) -> PlanRecord:
        host = self._host
        if conflict_resolution.resolving(host, plan):  # the merge in its worktree waits for the same turn
            plan = await conflict_resolution.resume(host, plan, fresh=how != "resume")
        elif how == "resume":
            plan = await development.run_developer(host, plan, lambda p, _root: role_prompts.continue_prompt(p))
        elif plan.phase == Phase.REWORK:
            agg, round_no = recovery.last_review(host, plan.id)
            findings = list(agg.findings) if agg else []
            earlier = decisions.earlier_failures(host, plan.id, exclude_round=round_no)
            plan = await development.run_developer(
                host, plan, lambda p, _root: role_prompts.rework_prompt(p, findings, earlier), fresh=True
            )
        else:
            plan = await development.run_developer(host, plan, development.implementation_prompt_for, fresh=True)
        return await decisions.after_development(host, plan)

    def merge(self, plan_id: int, on_queued: QueuedBehind | None = None) -> gitops.MergeResult:
        """Merge a done plan's branch into its base (fast-forward or merge commit; never force), after the
        merges asked before it (``on_queued`` hears which plan it waits behind).

        The merge (or the conflict that stopped it) gets its record in the chat.
        """
        since = record_writer.last_event_id(self._host, plan_id)
        before = self._host.store.get_plan(plan_id)
        try:
            return development.merge_plan(self._host, plan_id, on_queued)
        finally:
            record_writer.write_records(self._host, plan_id, since, before=before)

    def remove_worktree(self, plan_id: int) -> None:
        """Remove a plan's worktree (its git branch stays)."""
        development.remove_plan_worktree(self._host, plan_id)
