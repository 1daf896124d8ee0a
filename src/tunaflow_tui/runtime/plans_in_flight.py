"""The plans that still move, as the Architect's pack and ``tunaflow status`` name them.

Several plans can be in flight at once: one waits for approval, another's Developer works, a third
waits for a review verdict. The Architect is told which (id, title, phase, what each waits on) so it
can say which plan a proposal revises, and the user can point a message at one (``#3 …``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.core.workflow.phases import PendingDecision, Phase

if TYPE_CHECKING:
    from tunaflow_tui.core.storage import Store

SECTION_TITLE = "Plans in flight"
#: ``#N`` opening a message: the message is about plan N (1–999999, followed by a blank or nothing).
_POINTER = re.compile(r"#([0-9]{1,6})(?=\s|$)")
_WORKING = {
    Phase.CHAT: "the Architect's proposal",
    Phase.DRAFTING: "the Architect's revised proposal",
    Phase.DEV: "the Developer at work",
    Phase.REWORK: "the Developer reworking it after review",
    Phase.REVIEW: "the reviewers",
}


def plans_in_flight(store: Store) -> tuple[PlanRecord, ...]:
    """Every plan that is neither done nor abandoned, oldest first."""
    return tuple(plan for plan in store.list_plans() if not Phase(plan.phase).is_terminal)


def waits_on(plan: PlanRecord) -> str:
    """What the plan waits on, in a few words: the user's decision, or who works on it now."""
    if plan.phase == Phase.HELD:
        return "you: it is on hold"
    if plan.pending_decision:
        return f"you: {PendingDecision(plan.pending_decision).question}"
    return _WORKING.get(Phase(plan.phase), "nothing")


def plan_line(plan: PlanRecord) -> str:
    """``- #3 “Add mul” — phase dev, waits on the Developer at work``."""
    title = neutralize(plan.title).replace("\n", " ")
    return f"- #{plan.id} “{title}” — phase {plan.phase}, waits on {waits_on(plan)}"


def in_flight_text(store: Store) -> str:
    """The pack's "Plans in flight" section: one line per plan that still moves ("" when none does)."""
    lines = [plan_line(plan) for plan in plans_in_flight(store)]
    if not lines:
        return ""
    return "\n".join([*lines, "", "A proposal that changes one of these names it in its opening marker "
                      "(`<!-- tunaflow:plan-proposal revises: #N -->`); any other proposal is a new plan."])


def plan_pointer(text: str) -> int | None:
    """The plan a message points at with ``#N`` at its very start (``#3 make it faster``), if it does."""
    found = _POINTER.match(text.lstrip())
    return int(found.group(1)) if found else None


def pointed_at(text: str, plan_id: int) -> str:
    """``text`` pointed at plan ``plan_id``: a pointer it opened with is replaced, the rest of it kept."""
    found = _POINTER.match(text.lstrip())
    rest = text.lstrip()[found.end():].lstrip() if found else text
    return f"#{plan_id} {rest}"


def plan_to_name(store: Store, *, conversation_id: str | None = None, plan_id: int | None = None) -> int | None:
    """The plan a status line is about when it must say which one: more than one plan is in flight.

    ``plan_id`` when the caller knows it (a test run), else the plan whose implementation or review
    branch ``conversation_id`` is; None with a single plan in flight (the line needs no name), or for a
    conversation that is no plan's (the main chat, a branch of the user's).
    """
    if len(plans_in_flight(store)) < 2:
        return None
    if plan_id is not None:
        return plan_id
    branch = (conversation_id or "").removeprefix("branch:")
    if not branch.isdigit() or conversation_id == branch:
        return None
    return next((plan.id for plan in store.list_plans() if int(branch) in (plan.impl_branch_id, plan.review_branch_id)),
                None)
