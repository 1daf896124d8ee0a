"""Decision records: what the user decided stays in the conversation, once, with what it was about.

When a decision of the user's lands in a plan's history (approve, revise, hold, rework, redesign,
accept, abandon, merge…), :func:`write_records` adds a system message to the plan's conversation
whose ``meta`` says what was decided, by whom, when, with the feedback and a copy of the proposal or
the review round it was about (:mod:`tunaflow_tui.core.decision_records` words it). Each record is
keyed by its plan event: writing again (a retry, recovery after a crash, :func:`catch_up` on start)
finds it and adds nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from tunaflow_tui.core.decision_records import DECISION_KIND, RECORDED_EVENTS, record_markdown
from tunaflow_tui.core.storage.records import MessageRecord, PlanEventRecord, PlanRecord
from tunaflow_tui.core.storage.storebase import MAIN_CONVERSATION_ID
from tunaflow_tui.core.workflow.event_text import event_files, shown_revision
from tunaflow_tui.core.workflow.phases import PendingDecision, PlanEventType
from tunaflow_tui.runtime.events import MessageAdded

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import ProjectData, RecordingContext

_ABOUT_A_VERDICT = frozenset({
    PlanEventType.ACCEPTED, PlanEventType.ACCEPTED_PARTIAL_REVIEW, PlanEventType.ACCEPTED_OVER_FAILED_REVIEW,
    PlanEventType.REWORK_REQUESTED, PlanEventType.REDESIGN_REQUESTED,
})
_ABOUT_A_PROPOSAL = frozenset({PlanEventType.APPROVED, PlanEventType.REVISION_REQUESTED, PlanEventType.PLAN_EDITED})
_REVIEW_QUESTIONS = frozenset({PendingDecision.REVIEW, PendingDecision.REVIEW_ERROR, PendingDecision.DOOM_LOOP})
_MERGES = frozenset({PlanEventType.MERGED, PlanEventType.MERGE_CONFLICT, PlanEventType.CONFLICT_RESOLUTION_REQUESTED,
                     PlanEventType.CONFLICT_LEFT})
_MERGE_WORDS = {"fast-forward": "fast-forward", "merge-commit": "merge commit", "up-to-date": "already up to date"}


def conversation_of(rt: ProjectData, plan: PlanRecord) -> str:
    """The conversation a plan was proposed in (the main conversation when that is not known)."""
    if plan.source_message_id is not None:
        source = rt.store.get_message(plan.source_message_id)
        if source is not None:
            return source.conversation_id
    return MAIN_CONVERSATION_ID


def last_event_id(rt: ProjectData, plan_id: int) -> int:
    """The id of the plan's newest event (0 without any): what :func:`write_records` looks past."""
    events = rt.store.list_plan_events(plan_id)
    return events[-1].id if events else 0


def _proposal(plan: PlanRecord) -> dict[str, object]:
    return {"title": plan.title, "revision": shown_revision(plan.revision),
            "subtasks": [subtask.title for subtask in plan.subtasks]}


def _verdict(event: PlanEventRecord, history: Sequence[PlanEventRecord]) -> dict[str, object] | None:
    """The review round the decision settled: the last one finished before it."""
    finished = [e for e in history if e.type == PlanEventType.REVIEW_FINISHED and e.id < event.id]
    if not finished:
        return None
    detail = finished[-1].detail
    aggregate = detail.get("aggregate")
    aggregate = aggregate if isinstance(aggregate, Mapping) else {}
    seats = [{"seat": seat.get("seat"), "engine": seat.get("engine"), "verdict": seat.get("verdict"),
              "scores": dict(seat.get("scores") or {}), "error": seat.get("error")}
             for seat in aggregate.get("seats") or () if isinstance(seat, Mapping)]
    return {"round": detail.get("round"), "verdict": detail.get("verdict") or aggregate.get("verdict"),
            "seats": seats, "findings": list(aggregate.get("findings") or ())[:20]}


def decision_meta(event: PlanEventRecord, plan: PlanRecord, history: Sequence[PlanEventRecord],
                  *, before: PlanRecord | None = None) -> dict[str, object]:
    """The record's data for the decision ``event`` on ``plan`` (``before``: the plan as it was decided on)."""
    shown = before or plan
    meta: dict[str, object] = {
        "kind": DECISION_KIND, "event_id": event.id, "event": event.type, "plan_id": plan.id,
        "plan_title": shown.title, "by": "you", "at": event.created_at.isoformat(),
        "feedback": str(event.detail.get("feedback") or ""), "reason": str(event.detail.get("reason") or ""),
    }
    if event.type == PlanEventType.PLAN_EDITED:
        meta["proposal"] = _proposal(plan)  # the proposal as edited
    elif event.type in _ABOUT_A_PROPOSAL or (before is not None and before.pending_decision == PendingDecision.APPROVAL):
        meta["proposal"] = _proposal(shown)
    if event.type in _ABOUT_A_VERDICT or (before is not None and before.pending_decision in _REVIEW_QUESTIONS):
        verdict = _verdict(event, history)
        if verdict is not None:
            meta["verdict"] = verdict
    if event.type in _MERGES:
        kind = str(event.detail.get("kind") or "")
        conflicted = list(event_files(event.detail))
        meta["merge"] = {
            "branch": plan.git_branch, "base": plan.base_branch, "how": _MERGE_WORDS.get(kind, ""),
            "sha": event.detail.get("sha"),
            "message": ("conflicts in " + ", ".join(conflicted[:10])) if conflicted else "",
        }
    return meta


def write_records(rt: RecordingContext, plan_id: int, since: int, *, before: PlanRecord | None = None,
                  ) -> list[MessageRecord]:
    """Record every decision of the user's on the plan after event ``since`` that has no record yet.

    ``before`` is the plan as the user saw it when deciding (the proposal, the pending verdict).
    Returns the records written; each one is announced to the screen.
    """
    plan = rt.store.get_plan(plan_id)
    if plan is None:
        return []
    history = rt.store.list_plan_events(plan_id)
    conversation_id = conversation_of(rt, plan)
    written: list[MessageRecord] = []
    for event in history:
        if event.id <= since or event.actor != "user" or event.type not in RECORDED_EVENTS:
            continue
        if rt.store.find_record(conversation_id, DECISION_KIND, "event_id", event.id) is not None:
            continue
        meta = decision_meta(event, plan, history, before=before)
        record = rt.store.add_message(conversation_id, "system", record_markdown(meta), meta=meta)
        rt.emit(MessageAdded(conversation_id, record.id, "system"))
        written.append(record)
    return written


def catch_up(rt: RecordingContext) -> int:
    """On start: record the decisions a stop left unrecorded (taken after the conversation's last message).

    Older decisions (from before records existed) are not written now: they would land after
    messages that came later. Returns how many records were written.
    """
    count = 0
    for plan in rt.store.list_plans():
        conversation_id = conversation_of(rt, plan)
        newest = rt.store.list_messages(conversation_id, limit=1)
        since_time = newest[-1].created_at if newest else None
        history = rt.store.list_plan_events(plan.id)
        late = [e for e in history if since_time is None or e.created_at >= since_time]
        if late:
            count += len(write_records(rt, plan.id, late[0].id - 1))
    return count
