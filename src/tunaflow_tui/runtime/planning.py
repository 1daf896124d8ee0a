"""Chat and drafting: turn the Architect's proposals into plans waiting for approval.

Several plans can be in flight. A proposal is a new version of an existing plan when it says so
(``<!-- tunaflow:plan-proposal revises: #N -->``), when the turn was about that plan (the user's
``#N …`` message, or the revision the user asked for), when its title is the title of a plan the user
sent back for a revision (``r``), or when exactly one plan waits for the Architect's revised proposal;
otherwise it is a new plan — a plain message's proposal titled as a plan waiting for approval too: only
the user sends a plan back from its gate. A plan takes a revision while it is a proposal (drafting, or
waiting for approval); a revision of a plan that cannot take one now (developing, in review, done) is
refused with a note to the user and the Architect, and nothing changes.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tunaflow_tui.core import gitops
from tunaflow_tui.core.markers import ParseResult, PlanProposal, parse_markers
from tunaflow_tui.core.plandocs import make_slug
from tunaflow_tui.core.storage.records import MessageRecord, PlanRecord
from tunaflow_tui.core.workflow.commands import RequestRevision
from tunaflow_tui.core.workflow.machine import IllegalTransition
from tunaflow_tui.core.workflow.phases import Actor, PendingDecision, Phase, PlanEventType
from tunaflow_tui.runtime.agent_turn import TurnResult
from tunaflow_tui.runtime.events import MessageAdded, NoticeRaised
from tunaflow_tui.runtime.plans_in_flight import plans_in_flight

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import ProjectData, StepContext

EXCERPT_CHARS = 200
MAX_PLAN_SUBTASKS = 100
"""The most subtasks a plan may have: each is a task document, a tracked step and a line of every prompt."""


def active_plan(rt: ProjectData) -> PlanRecord | None:
    """The newest plan that still moves (what a chat turn's pack shows when the message names no plan)."""
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


def record_user_markers(rt: StepContext, message: MessageRecord, about: PlanRecord | None = None) -> None:
    """A user pasting markers changes nothing; the attempt is recorded (on ``about``, the plan the message
    is about, or the newest plan that still moves)."""
    parsed = parse_markers(message.content, "user")
    plan = about or active_plan(rt)
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


#: Phases in which a plan is still a proposal the Architect can replace without a decision of the user's.
_DRAFTED = frozenset({Phase.CHAT, Phase.DRAFTING})
_WHY_NOT = {
    Phase.DEV: "its Developer is at work on it",
    Phase.REWORK: "its Developer is reworking it after review",
    Phase.REVIEW: "it is in review",
    Phase.ESCALATED: "it stopped after repeated review failures",
    Phase.HELD: "it is on hold",
    Phase.DONE: "it is done",
    Phase.ABANDONED: "it was abandoned",
}
_REDESIGN = {PendingDecision.REVIEW, PendingDecision.DOOM_LOOP}


def why_not_revisable(rt: StepContext, plan: PlanRecord) -> str | None:
    """Why the Architect cannot revise ``plan`` now, or None when it can (drafting, or at the approval gate)."""
    if plan.phase in _DRAFTED:
        return None
    try:
        rt.service.check(plan.id, RequestRevision(), actor=Actor.USER)
        return None
    except IllegalTransition:
        pass
    why = _WHY_NOT.get(Phase(plan.phase), f"it is in {plan.phase}")
    if plan.pending_decision in _REDESIGN:
        why += " (choose redesign on its card to send it back to the Architect)"
    return why


def _same_title(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def revision_target(rt: StepContext, proposal: PlanProposal,
                    about: PlanRecord | None) -> tuple[PlanRecord | None, str | None]:
    """The plan ``proposal`` revises (None: a new plan), or why the plan it names cannot take it.

    ``about`` is the plan the turn was about (the user's ``#N`` message, a requested revision). A plan
    named by the marker or by the turn must take it now; otherwise only a plan the user sent back for a
    revision (drafting) takes it: the one with its title, or the only one.
    """
    if proposal.revises is not None:
        named = rt.store.get_plan(proposal.revises)
        if named is None:
            return None, f"there is no plan {proposal.revises}"
        return named, why_not_revisable(rt, named)
    if about is not None:  # as it stands now: another process may have moved it while the Architect wrote
        now = rt.store.get_plan(about.id)
        return (None, "it no longer exists") if now is None else (now, why_not_revisable(rt, now))
    # a plain message asked for no revision: only a plan the user sent back (``r``: drafting again) is
    # waiting for one; a plan at the approval gate keeps its version and the proposal is a new plan
    in_flight = plans_in_flight(rt.store)
    titled = [p for p in in_flight if p.phase in _DRAFTED and _same_title(p.title, proposal.title)]
    if titled:
        return titled[-1], None
    drafting = [p for p in in_flight if p.phase == Phase.DRAFTING]
    return (drafting[0], None) if len(drafting) == 1 else (None, None)


def refuse_revision(rt: StepContext, number: int | None, plan: PlanRecord | None, why: str) -> None:
    """Apply nothing from a proposal whose plan cannot take it now; say so to the user and the Architect.

    The proposal stays in the Architect's message; the note is a system message in the main
    conversation, which the Architect's next turn reads.
    """
    named = f"plan {plan.id} “{plan.title}”" if plan is not None else f"plan {number}" if number else "its plan"
    kept = ("Nothing was created." if plan is None
            else f"Plan {plan.id} keeps its current version; nothing was changed.")
    note = (f"This proposal revises {named}, but {why}: it was not applied. {kept} The proposal stays in "
            f"the message above. Architect: propose it again once {named} can take a revision, or as a new "
            "plan (without `revises`).")
    message = rt.store.add_message("main", "system", note, status="done")
    rt.emit(MessageAdded("main", message.id, "system"))
    if plan is not None:
        rt.service.record(plan.id, PlanEventType.PROPOSAL_REFUSED, Actor.SYSTEM,
                          {"revises": plan.id, "reason": why, "message_id": message.id})
    rt.emit(NoticeRaised(f"The Architect's proposal revises {named}, but {why}: nothing was changed.",
                         "warning"))


async def handle_architect_reply(rt: StepContext, result: TurnResult, *, revising: PlanRecord | None,
                                 feedback: str = "") -> None:
    """Create a plan, or a new version of the plan it revises, from the reply's first accepted proposal.

    ``revising`` is the plan the turn was about (see :func:`revision_target`); ``feedback`` the user's
    words that asked for the new version (recorded when a plan at the approval gate is sent back).
    """
    record_rejections(rt, result.parse, "architect", revising.id if revising else None)
    proposals = [m for m in result.parse.markers if isinstance(m, PlanProposal) and m.accepted]
    if not proposals:
        return
    proposal = proposals[0]
    target, why = revision_target(rt, proposal, revising)
    if why is not None:
        refuse_revision(rt, proposal.revises or (revising.id if revising else None), target, why)
        return
    if len(proposal.subtasks) > MAX_PLAN_SUBTASKS:
        refuse_oversized(rt, proposal, target)
        return
    if len(proposals) > 1:
        rt.emit(NoticeRaised("The Architect proposed more than one plan; only the first is tracked.", "warning"))
    fields = rt.proposal_to_plan_fields(proposal)
    if target is not None:
        try:
            if target.phase not in _DRAFTED:  # at the approval gate: the user's message asked for this version
                rt.apply(target.id, RequestRevision(feedback=feedback), Actor.USER)
            plan = rt.service.receive_reproposal(target.id, subtasks=_subtasks(proposal), **fields)
        except IllegalTransition:  # another process moved the plan on while the Architect wrote
            now = rt.get_plan(target.id)
            refuse_revision(rt, now.id, now, why_not_revisable(rt, now) or "it moved on meanwhile")
            return
        rt.plan_changed(plan)
        rt.progress(f"Revised plan {plan.id} “{plan.title}” is waiting for approval.")
        return
    await _create_plan(rt, result, proposal, fields)


async def _create_plan(rt: StepContext, result: TurnResult, proposal: PlanProposal,
                       fields: dict[str, object]) -> None:
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
