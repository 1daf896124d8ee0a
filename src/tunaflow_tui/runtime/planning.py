"""Chat and drafting: turn the Architect's proposals into plans waiting for approval."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tunaflow_tui.core import gitops
from tunaflow_tui.core.markers import ParseResult, PlanProposal, parse_markers
from tunaflow_tui.core.plandocs import make_slug
from tunaflow_tui.core.storage.records import MessageRecord, PlanRecord
from tunaflow_tui.core.workflow.phases import Actor, Phase, PlanEventType
from tunaflow_tui.runtime.agent_turn import TurnResult
from tunaflow_tui.runtime.events import MessageAdded, NoticeRaised

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import ProjectData, StepContext

EXCERPT_CHARS = 200
MAX_PLAN_SUBTASKS = 100
"""The most subtasks a plan may have: each is a task document, a tracked step and a line of every prompt."""


def active_plan(rt: ProjectData) -> PlanRecord | None:
    """The newest plan that still moves (the one chat turns are about)."""
    return rt.store.newest_plan(excluding=[phase for phase in Phase if phase.is_terminal])


def plan_in_drafting(rt: ProjectData) -> PlanRecord | None:
    """The newest plan waiting for the Architect's revised proposal."""
    return rt.store.newest_plan(phases=[Phase.DRAFTING])


def record_rejections(rt: StepContext, parsed: ParseResult, role: str, plan_id: int | None) -> None:
    """Record every marker the role may not emit as ``marker_rejected`` (it changes nothing)."""
    for marker in parsed.markers:
        if marker.accepted:
            continue
        excerpt = marker.raw[:EXCERPT_CHARS]
        rt.service.record_marker_rejected(plan_id, marker.kind, role, excerpt)
        rt.emit(NoticeRaised(f"Ignored a {marker.kind} marker from the {role}: that role may not emit it.", "warning"))


def record_user_markers(rt: StepContext, message: MessageRecord) -> None:
    """A user pasting markers changes nothing; the attempt is recorded."""
    parsed = parse_markers(message.content, "user")
    plan = active_plan(rt)
    record_rejections(rt, parsed, "user", plan.id if plan else None)


def _plan_branches(rt: StepContext) -> frozenset[str]:
    """The ``tunaflow/…`` git branches that exist (left from earlier work, or other plans')."""
    return gitops.local_branches(rt.project_dir, "tunaflow/") if rt.is_git else frozenset()


async def retitle_slug(rt: StepContext, plan: PlanRecord) -> PlanRecord:
    """Give a plan whose title changed before development the slug of its new title.

    Once development started, the slug names a git branch and documents, and it stays.
    """
    if plan.impl_branch_id is not None or plan.git_branch:
        return plan
    branches = await asyncio.to_thread(_plan_branches, rt)

    def taken(candidate: str) -> bool:
        return candidate != plan.slug and (rt.store.slug_taken(candidate) or f"tunaflow/{candidate}" in branches)

    slug = make_slug(plan.title, plan_id=plan.id, taken=taken)
    return plan if slug == plan.slug else rt.store.update_plan(plan.id, slug=slug)


def _subtasks(proposal: PlanProposal) -> list[tuple[str, str]]:
    return [(s.title, s.details) for s in proposal.subtasks]


def refuse_oversized(rt: StepContext, proposal: PlanProposal, revising: PlanRecord | None) -> None:
    """Create no plan from a proposal with too many subtasks; say so to the user and to the Architect.

    The note is a system message in the main conversation, so the user sees it where the proposal
    is, and the Architect's next turn reads it among the recent turns.
    """
    count = len(proposal.subtasks)
    kept = (f" Plan {revising.id} keeps its current version and waits for a proposal it can track."
            if revising is not None else " No plan was created.")
    note = (f"This proposal has {count:,} subtasks; a plan can have at most {MAX_PLAN_SUBTASKS}.{kept} "
            f"Architect: propose a smaller plan — group the work into at most {MAX_PLAN_SUBTASKS} subtasks, "
            "or propose the first part now and the rest as later plans.")
    message = rt.store.add_message("main", "system", note, status="done")
    rt.emit(MessageAdded("main", message.id, "system"))
    if revising is not None:
        rt.service.record(revising.id, PlanEventType.PROPOSAL_REFUSED, Actor.SYSTEM,
                                {"subtasks": count, "limit": MAX_PLAN_SUBTASKS, "message_id": message.id})
    rt.emit(NoticeRaised(f"The Architect proposed {count:,} subtasks; a plan can have at most "
                         f"{MAX_PLAN_SUBTASKS}. No plan was created from it; the Architect is asked for a "
                         "smaller one when you write to it next.", "warning"))


async def handle_architect_reply(rt: StepContext, result: TurnResult, *, revising: PlanRecord | None) -> None:
    """Create a plan (or update the one being revised) from the first accepted proposal."""
    target = revising or active_plan(rt)
    record_rejections(rt, result.parse, "architect", target.id if target else None)
    proposals = [m for m in result.parse.markers if isinstance(m, PlanProposal) and m.accepted]
    if not proposals:
        return
    proposal = proposals[0]
    if len(proposal.subtasks) > MAX_PLAN_SUBTASKS:
        refuse_oversized(rt, proposal, revising)
        return
    if len(proposals) > 1:
        rt.emit(NoticeRaised("The Architect proposed more than one plan; only the first is tracked.", "warning"))
    fields = rt.proposal_to_plan_fields(proposal)
    if revising is not None:
        plan = rt.service.receive_reproposal(revising.id, subtasks=_subtasks(proposal), **fields)
        rt.plan_changed(plan)
        rt.progress(f"Revised plan {plan.id} “{plan.title}” is waiting for approval.")
        return
    # git is asked before the transaction: nothing holds the database's writer while git runs
    branches = await asyncio.to_thread(_plan_branches, rt)

    def taken(candidate: str) -> bool:
        return rt.store.slug_taken(candidate) or f"tunaflow/{candidate}" in branches

    with rt.store.transaction():
        plan = rt.service.create_plan_from_proposal(
            title=str(fields["title"]),
            slug=f"pending-{result.message.id}",
            description=proposal.description,
            expected_outcome=proposal.expected_outcome,
            constraints=proposal.constraints,
            non_goals=proposal.non_goals,
            subtasks=_subtasks(proposal),
            source_message_id=result.message.id,
        )
        slug = make_slug(plan.title, plan_id=plan.id, taken=taken)
        plan = rt.store.update_plan(plan.id, slug=slug)
    rt.plan_changed(plan)
    rt.progress(f"Plan {plan.id} “{plan.title}” is waiting for approval.")
