"""The workflow on top of the project store: every transition is one transaction of plan fields + events.

The store is the source of truth: a plan's :class:`PlanState` is read from its row, and the doom-loop
counter is recomputed from its events, so a restart puts every plan back in its phase with its
pending decision.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tunaflow_tui.core.proposal_editing import EditedProposal
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.records import MemoRecord, PlanEventRecord, PlanRecord
from tunaflow_tui.core.workflow.commands import (
    Command,
    EditProposal,
    MarkerRejected,
    ProposalReceived,
    SubtaskReported,
)
from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.core.workflow.machine import (
    DEFAULT_DOOM_THRESHOLD,
    IllegalTransition,
    PlanState,
    allowed_names,
    failures_since_reset,
    transition,
    waits_in_queue,
)
from tunaflow_tui.core.workflow.phases import Actor, PendingDecision, Phase, PlanEventType, Waiting
from tunaflow_tui.core.workflow.ways import PlanContext, WayOn, open_step, ways_on

EXCERPT_LIMIT = 500
MARKER_REJECTED_MEMO = "marker_rejected"
# Events after which a plan waits for the user: the latest one dates its pending decision.
_DECISION_EVENTS = frozenset({
    PlanEventType.PROPOSAL_RECEIVED, PlanEventType.REVIEW_FINISHED, PlanEventType.DEV_STALLED,
    PlanEventType.SETUP_FAILED, PlanEventType.RESUMED, PlanEventType.HELD,
    PlanEventType.MERGE_CONFLICT, PlanEventType.CONFLICT_UNRESOLVED,
})
_PHASES = frozenset(p.value for p in Phase)
_QUESTIONS = frozenset(q.value for q in PendingDecision)


@dataclass(frozen=True)
class WaitingDecision:
    """Something waiting for the user on one plan: a question (also when held), a review to start, a
    step to resume. ``way`` holds the decisions available now and the confirmations they need."""

    plan_id: int
    plan_title: str
    kind: Waiting
    detail: Mapping[str, object]
    since: datetime
    way: WayOn

    @property
    def held(self) -> bool:
        """True when the user put the question aside (it is still answerable)."""
        return self.way.held

    @property
    def decisions(self) -> tuple[Decision, ...]:
        """The decisions available now, the main one first."""
        return self.way.decisions


def plain_json(value: Any) -> Any:
    """A copy of ``value`` with read-only mappings and tuples turned into dicts and lists (for JSON)."""
    if isinstance(value, Mapping):
        return {str(k): plain_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(v) for v in value]
    return value


def _as_phase(text: str | None) -> Phase | None:
    return Phase(text) if text in _PHASES else None


def _as_question(text: str | None) -> PendingDecision | None:
    return PendingDecision(text) if text in _QUESTIONS else None


def plan_state(plan: PlanRecord, events: Sequence[PlanEventRecord]) -> PlanState:
    """The machine state of a stored plan (an unknown stored decision reads as none)."""
    return PlanState(
        phase=Phase(plan.phase),
        held_from=_as_phase(plan.held_from),
        pending_decision=_as_question(plan.pending_decision),
        pending_detail=plan.pending_detail,
        revision=plan.revision,
        review_round=plan.review_round,
        failures_since_reset=failures_since_reset(events),
        queued=not Phase(plan.phase).is_terminal and plan.phase != Phase.HELD and waits_in_queue(events),
    )


def plan_context(plan: PlanRecord, events: Sequence[PlanEventRecord], *, running: bool = False) -> PlanContext:
    """What a plan's way on depends on besides its state: a running agent, an unfinished step, git leftovers."""
    step = open_step(events)
    return PlanContext(
        agent_running=running,
        open_step=None if step is None else str(step.get("role") or "agent"),
        git_branch=plan.git_branch,
        worktree=bool(plan.worktree_path),
        merged=any(e.type == PlanEventType.MERGED for e in events),
    )


class WorkflowService:
    """Applies workflow commands to the plans of one project store."""

    def __init__(self, store: Store, *, doom_threshold: int = DEFAULT_DOOM_THRESHOLD) -> None:
        if doom_threshold < 1:
            raise ValueError("doom_threshold must be at least 1")
        self._store = store
        self._threshold = doom_threshold

    @property
    def doom_threshold(self) -> int:
        """How many failed reviews since the last reset escalate to the user."""
        return self._threshold

    def _plan(self, plan_id: int) -> PlanRecord:
        plan = self._store.get_plan(plan_id)
        if plan is None:
            raise LookupError(f"there is no plan {plan_id}")
        return plan

    def state(self, plan_id: int) -> PlanState:
        """The current machine state of a plan (LookupError if there is none)."""
        return plan_state(self._plan(plan_id), self._store.list_plan_events(plan_id))

    def allowed(self, plan_id: int) -> tuple[str, ...]:
        """Names of the actions possible on a plan right now (e.g. for a footer)."""
        return allowed_names(self.state(plan_id))

    def way_on(self, plan_id: int, *, running: bool = False) -> WayOn:
        """What the plan waits on and the decisions available now.

        ``running``: an agent works on the plan in this process. When another live process owns the
        project, a plan without a question counts as worked on there.
        """
        plan = self._plan(plan_id)
        events = self._store.list_plan_events(plan_id)
        return self._way(plan, events, running=running)

    def way_of(self, plan: PlanRecord, events: Sequence[PlanEventRecord], *, running: bool = False) -> WayOn:
        """:meth:`way_on` for a plan already read with its events (oldest first): nothing is read again."""
        return self._way(plan, events, running=running)

    def _way(self, plan: PlanRecord, events: Sequence[PlanEventRecord], *, running: bool) -> WayOn:
        running = running or not self._store.is_owner or self._leased_elsewhere(plan)
        return ways_on(plan_state(plan, events), plan_context(plan, events, running=running))

    def _leased_elsewhere(self, plan: PlanRecord) -> bool:
        """Whether a live process holds the lease of a conversation the plan's agents work in."""
        own = {f"branch:{b}" for b in (plan.impl_branch_id, plan.review_branch_id) if b is not None}
        if plan.phase in (Phase.CHAT, Phase.DRAFTING):
            own.add("main")
        return any(lease.conversation_id in own for lease in self._store.live_leases())

    def check(self, plan_id: int, command: Command, *, actor: Actor) -> None:
        """Raise :class:`IllegalTransition` if ``command`` would be refused now; writes nothing."""
        transition(self.state(plan_id), command, actor=actor, doom_threshold=self._threshold, plan_id=plan_id)

    def apply(self, plan_id: int, command: Command, *, actor: Actor) -> PlanRecord:
        """Apply ``command`` by ``actor`` to a plan in one transaction; returns the updated plan.

        Raises :class:`IllegalTransition` (nothing is written), LookupError for an unknown plan.
        """
        with self._store.transaction():
            plan = self._plan(plan_id)
            before = plan_state(plan, self._store.list_plan_events(plan_id))
            outcome = transition(before, command, actor=actor, doom_threshold=self._threshold, plan_id=plan_id)
            after = outcome.state
            if (after.phase, after.held_from, after.pending_decision, after.revision, after.review_round) != (
                before.phase, before.held_from, before.pending_decision, before.revision, before.review_round
            ) or after.pending_detail is not before.pending_detail:
                plan = self._store.update_plan(
                    plan_id,
                    phase=after.phase.value,
                    held_from=after.held_from.value if after.held_from else None,
                    pending_decision=after.pending_decision.value if after.pending_decision else None,
                    pending_detail=plain_json(after.pending_detail),
                    revision=after.revision,
                    review_round=after.review_round,
                )
            for event in outcome.events:
                self._store.add_plan_event(plan_id, event.type, event.actor, plain_json(event.detail))
        return plan

    def create_plan_from_proposal(
        self,
        *,
        title: str,
        slug: str,
        description: str = "",
        expected_outcome: str | None = None,
        constraints: Sequence[str] = (),
        non_goals: Sequence[str] = (),
        subtasks: Sequence[tuple[str, str]] = (),
        source_message_id: int | None = None,
    ) -> PlanRecord:
        """Create a plan from an Architect's proposal, waiting at the approval gate (one transaction)."""
        with self._store.transaction():
            plan = self._store.create_plan(
                title=title,
                slug=slug,
                description=description,
                expected_outcome=expected_outcome,
                constraints=constraints,
                non_goals=non_goals,
                subtasks=subtasks,
                source_message_id=source_message_id,
                phase=Phase.CHAT.value,
            )
            return self.apply(plan.id, ProposalReceived(subtask_count=len(subtasks)), actor=Actor.AGENT)

    def receive_reproposal(
        self, plan_id: int, *, subtasks: Sequence[tuple[str, str]], **plan_fields: Any
    ) -> PlanRecord:
        """The Architect re-proposed a plan in drafting: replace its subtasks (and e.g. ``title``,
        ``description``, ``constraints``) and put it back at the approval gate, in one transaction."""
        with self._store.transaction():
            self.apply(plan_id, ProposalReceived(subtask_count=len(subtasks)), actor=Actor.AGENT)
            if plan_fields:
                self._store.update_plan(plan_id, **plan_fields)
            return self._store.replace_subtasks(plan_id, subtasks)

    def record(
        self, plan_id: int, type: PlanEventType, actor: Actor, detail: Mapping[str, object] | None = None
    ) -> PlanEventRecord:
        """Record an occurrence around the transitions (an agent starting, the tests running, a merge).

        It changes no phase or pending decision, so it needs no command; the store refuses an event
        type outside :class:`PlanEventType`, and ``detail`` is kept as plain JSON.
        """
        return self._store.add_plan_event(plan_id, type, actor, plain_json(detail) if detail is not None else None)

    def events(self, plan_id: int) -> tuple[PlanEventRecord, ...]:
        """The plan's events, oldest first."""
        return tuple(self._store.list_plan_events(plan_id))

    def failures_since_reset(self, plan_id: int) -> int:
        """Failed reviews since the latest doom-loop answer or plan revision."""
        return failures_since_reset(self._store.list_plan_events(plan_id))

    def pending_decisions(self, busy: Collection[int] = (), *,
                          events_of: Mapping[int, Sequence[PlanEventRecord]] | None = None,
                          ) -> tuple[WaitingDecision, ...]:
        """Everything waiting for the user, in the order f2 walks it: oldest first, plans on hold last.

        The queue is first come, first asked, whichever plan it is about. A plan the user put on hold
        said "not now": it comes after every question nobody set aside (held ones oldest first too).

        A held plan is listed (its question is still answerable), and so is a plan with no question
        that nothing moves on its own: a review to start, an interrupted step. ``busy``: plans an
        agent works on in this process (they wait for that agent, not for the user). ``events_of``: the
        plans' events, when the caller has read them already (a plan missing from it is read here).
        """
        found: list[WaitingDecision] = []
        for plan in self._store.list_plans():
            if Phase(plan.phase).is_terminal and not plan.pending_decision:  # a merge conflict still asks
                continue
            known = None if events_of is None else events_of.get(plan.id)
            events = known if known is not None else self._store.list_plan_events(plan.id)
            way = self._way(plan, events, running=plan.id in busy)
            if not way.asks_the_user:
                continue
            # a question dates from the event that asked it; a derived way on from the plan's last event
            asked = way.waiting in _QUESTIONS
            dated = [e.created_at for e in events if e.type in _DECISION_EVENTS or not asked]
            since = dated[-1] if dated else plan.updated_at
            found.append(WaitingDecision(plan.id, plan.title, way.waiting, plan.pending_detail, since, way))
        found.sort(key=lambda d: (d.held, d.since, d.plan_id))
        return tuple(found)

    def edit_proposal(self, plan_id: int, edited: EditedProposal) -> PlanRecord:
        """Replace the proposal of a plan at the approval gate (or held there) with the user's edit.

        One transaction: the plan's title, description, expected outcome, constraints, non-goals and
        subtasks, and a ``plan_edited`` event by the user listing what changed. An edit that changes
        nothing writes nothing. Raises :class:`IllegalTransition` outside the approval gate and
        ValueError for an edit without a title.
        """
        if not edited.title.strip():
            raise ValueError("the plan needs a title")
        if any(not subtask.title.strip() for subtask in edited.subtasks):
            raise ValueError("every subtask needs a title")
        with self._store.transaction():
            plan = self._plan(plan_id)
            before = EditedProposal.of(plan)
            if before == edited:
                return plan
            self.apply(plan_id, EditProposal(before=before, after=edited), actor=Actor.USER)
            self._store.update_plan(
                plan_id,
                title=edited.title,
                description=edited.description,
                expected_outcome=edited.expected_outcome,
                constraints=edited.constraints,
                non_goals=edited.non_goals,
            )
            return self._store.replace_subtasks(plan_id, edited.subtask_pairs())

    def record_marker_rejected(
        self, plan_id: int | None, kind: str, role: str, excerpt: str, reason: str = ""
    ) -> PlanEventRecord | MemoRecord:
        """Record a marker that changed nothing (wrong role, wrong phase, bad index).

        With a plan it becomes a ``marker_rejected`` plan event; outside any plan (e.g. a proposal
        pasted by the user in chat) there is no plan to attach an event to, so it is kept as a
        project-level memo of kind ``marker_rejected`` whose content is the same detail as JSON.
        The excerpt is cut to :data:`EXCERPT_LIMIT` characters.
        """
        excerpt = excerpt[:EXCERPT_LIMIT]
        if plan_id is None:
            detail = {"kind": kind, "role": role, "excerpt": excerpt, "reason": reason}
            return self._store.add_memo(MARKER_REJECTED_MEMO, json.dumps(detail, ensure_ascii=False))
        with self._store.transaction():
            self.apply(plan_id, MarkerRejected(kind=kind, role=role, excerpt=excerpt, reason=reason), actor=Actor.SYSTEM)
            return self._store.list_plan_events(plan_id)[-1]

    def mark_subtask_done(self, plan_id: int, index: int, actor: Actor = Actor.AGENT) -> PlanRecord:
        """Tick subtask ``index`` (1-based) on a plan in dev or rework.

        An index the plan does not have, or a plan not in development, is not an error: the marker is
        recorded as ``marker_rejected`` and the plan is returned unchanged.
        """
        with self._store.transaction():
            plan = self._plan(plan_id)
            count = len(plan.subtasks)
            excerpt = f"<!-- tunaflow:subtask-done:{index} -->"
            if not 1 <= index <= count:
                self.record_marker_rejected(
                    plan_id, "subtask-done", actor, excerpt, f"plan {plan_id} has no subtask {index} (it has {count})"
                )
                return self._plan(plan_id)
            try:
                self.apply(plan_id, SubtaskReported(index=index), actor=actor)
            except IllegalTransition as exc:
                self.record_marker_rejected(plan_id, "subtask-done", actor, excerpt, str(exc))
                return self._plan(plan_id)
            return self._store.set_subtask_status(plan_id, index, "done")
