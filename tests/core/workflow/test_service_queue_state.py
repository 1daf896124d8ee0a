"""What the service reads of a plan waiting in the queue, a plan read already, and a done plan's merge question."""

from __future__ import annotations

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import (
    Abandon,
    Accept,
    Approve,
    Hold,
    ImplementationReported,
    MergeConflicted,
    PlanEventType,
    ReviewFinished,
    ReviewStarted,
    SeatResult,
    Waiting,
    aggregate,
)
from tunaflow_tui.core.workflow.service import WorkflowService


def _queued(service: WorkflowService, title: str) -> int:
    plan_id = service.create_plan_from_proposal(title=title, slug=title.lower().replace(" ", "-")).id
    service.apply(plan_id, Approve(), actor="user")
    service.record(plan_id, PlanEventType.PLAN_QUEUED, "system", {"working": 3, "limit": 3})
    return plan_id


def test_a_plan_waiting_for_a_slot_reads_as_queued_until_held_or_abandoned(store: Store) -> None:
    service = WorkflowService(store)
    waiting, held, abandoned = (_queued(service, title) for title in ("Add mul", "Add div", "Add pow"))
    service.apply(held, Hold(), actor="user")
    service.apply(abandoned, Abandon(), actor="user")
    assert [service.state(plan).queued for plan in (waiting, held, abandoned)] == [True, False, False]
    way = service.way_on(waiting)
    assert way.waiting is Waiting.WORKING and way.summary.startswith("queued: starts by itself"), way
    service.record(waiting, PlanEventType.QUEUE_LEFT, "system", {})
    assert not service.state(waiting).queued, "out of the queue once its step starts"


def test_the_way_of_a_plan_read_already_is_its_way_on_and_reads_nothing_again(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = service.create_plan_from_proposal(title="Interrupted", slug="interrupted").id
    service.apply(plan_id, Approve(), actor="user")
    service.record(plan_id, PlanEventType.AGENT_STARTED, "system", {"role": "developer"})
    plan, events = store.get_plan(plan_id), store.list_plan_events(plan_id)
    assert plan is not None
    way = service.way_of(plan, events)
    assert way == service.way_on(plan_id)
    assert way.waiting is Waiting.INTERRUPTED, "nothing runs it: offered to the user, not taken as at work"
    assert service.way_of(plan, events, running=True).waiting is Waiting.WORKING


def _done(service: WorkflowService, title: str) -> int:
    plan_id = service.create_plan_from_proposal(title=title, slug=title.lower().replace(" ", "-")).id
    service.apply(plan_id, Approve(), actor="user")
    service.apply(plan_id, ImplementationReported(), actor="agent")
    service.apply(plan_id, ReviewStarted(), actor="system")
    service.apply(plan_id, ReviewFinished(aggregate([SeatResult(seat="critic", engine="demo", verdict="pass")])),
                  actor="agent")
    service.apply(plan_id, Accept(), actor="user")
    return plan_id


def test_a_done_plan_is_listed_only_while_its_merge_conflict_asks(store: Store) -> None:
    service = WorkflowService(store)
    merged, conflicted = _done(service, "Merged"), _done(service, "Conflicted")
    service.apply(conflicted, MergeConflicted("main", ("calc.py",)), actor="user")
    assert [waiting.plan_id for waiting in service.pending_decisions()] == [conflicted], merged


def test_pending_decisions_read_no_plan_s_events_the_caller_gave(store: Store, monkeypatch) -> None:
    service = WorkflowService(store)
    first, second = _queued(service, "First"), _done(service, "Second")
    service.apply(second, MergeConflicted("main", ("calc.py",)), actor="user")
    given = {plan: store.list_plan_events(plan) for plan in (first, second)}
    read: list[int] = []
    real = store.list_plan_events
    monkeypatch.setattr(store, "list_plan_events", lambda plan_id: read.append(plan_id) or real(plan_id))
    with_given = service.pending_decisions(events_of=given)
    assert read == [], "every plan's events were given"
    assert with_given == service.pending_decisions() and read, "the same list as read from the store"
