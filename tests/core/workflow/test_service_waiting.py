"""What a plan waits on, as the service reads it from the store: its way on, whether another process works
on it, and since when it has waited (what f2 and ``tunaflow status`` list, and in which order)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import datetime
from pathlib import Path

from other_process import idle_holder
from seeded_plans import with_branches

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import (
    Abandon,
    Approve,
    Decision,
    ImplementationReported,
    PlanEventType,
    RequestRevision,
    Waiting,
)
from tunaflow_tui.core.workflow.service import WorkflowService


def _seed_times(store: Store, plan_id: int, updated_at: str, *event_times: str) -> None:
    """Date the plan's last change and its events (oldest first), as if they had happened at those times."""
    with closing(sqlite3.connect(store.path)) as db, db:
        db.execute("UPDATE plans SET updated_at = ? WHERE id = ?", (updated_at, plan_id))
        ids = [row[0] for row in db.execute("SELECT id FROM plan_events WHERE plan_id = ? ORDER BY id", (plan_id,))]
        assert len(ids) == len(event_times), "one time per event"
        db.executemany("UPDATE plan_events SET created_at = ? WHERE id = ?", zip(event_times, ids, strict=True))


def _at(minute: int) -> str:
    return f"2026-03-01T10:{minute:02d}:00.000000+00:00"


def test_the_way_on_of_a_plan_read_from_the_store(store: Store) -> None:
    service = WorkflowService(store)
    proposed = service.create_plan_from_proposal(title="Proposed", slug="proposed").id
    way = service.way_on(proposed)
    assert way.waiting is Waiting.APPROVAL and way.primary is Decision.APPROVE
    interrupted = service.create_plan_from_proposal(title="Interrupted", slug="interrupted").id
    service.apply(interrupted, Approve(), actor="user")
    assert service.way_on(interrupted).primary is Decision.RETRY_STEP, "the Developer never started: start it"
    service.record(interrupted, PlanEventType.AGENT_STARTED, "system", {"role": "developer"})
    way = service.way_on(interrupted)
    assert way.waiting is Waiting.INTERRUPTED and way.primary is Decision.RESUME_STEP
    assert "the step of the Developer was interrupted" in way.summary
    working = service.way_on(interrupted, running=True)
    assert working.waiting is Waiting.WORKING and working.decisions == ()


def test_a_plan_whose_conversation_another_process_holds_is_worked_on(store: Store) -> None:
    service = WorkflowService(store)
    dev = service.create_plan_from_proposal(title="In development", slug="in-dev").id
    impl, _review = with_branches(store, dev, "in-dev")
    service.apply(dev, Approve(), actor="user")
    drafting = service.create_plan_from_proposal(title="Being redrafted", slug="redraft").id
    service.apply(drafting, RequestRevision("split it"), actor="user")
    assert (service.way_on(dev).waiting, service.way_on(drafting).waiting) == (Waiting.INTERRUPTED, Waiting.REVISION)
    with idle_holder() as other:
        lease = store.acquire_lease(f"branch:{impl}", role="developer", holder=other)
        assert service.way_on(dev).waiting is Waiting.WORKING, "the other process's Developer is at work"
        assert service.way_on(drafting).waiting is Waiting.REVISION, "a lease on another conversation"
        assert [d.plan_id for d in service.pending_decisions()] == [drafting]
        store.release_lease(lease)
        store.acquire_lease("main", role="architect", holder=other)
        assert service.way_on(drafting).waiting is Waiting.WORKING, "the Architect redrafts in main"
        assert service.way_on(dev).waiting is Waiting.INTERRUPTED, "main is not where the Developer works"
    assert service.way_on(drafting).waiting is Waiting.REVISION, "its process ended: the lease is free"


def test_in_a_process_that_does_not_own_the_project_a_plan_without_question_is_worked_on(store: Store) -> None:
    service = WorkflowService(store)
    dev = service.create_plan_from_proposal(title="In development", slug="in-dev").id
    service.apply(dev, Approve(), actor="user")
    proposed = service.create_plan_from_proposal(title="Proposed", slug="proposed").id
    with Store.open(Path(store.project.path)) as second:
        assert not second.is_owner
        seen = WorkflowService(second)
        assert seen.way_on(dev).waiting is Waiting.WORKING, "the owner's step is live"
        assert seen.way_on(proposed).waiting is Waiting.APPROVAL, "a question still asks the user"
    assert service.way_on(dev).waiting is Waiting.INTERRUPTED


def test_a_question_waits_since_the_event_that_asked_it(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = service.create_plan_from_proposal(title="Add OAuth", slug="add-oauth").id
    service.record_marker_rejected(plan_id, "review-verdict", "architect", "verdict: pass")
    _seed_times(store, plan_id, _at(10), _at(0), _at(5))
    (waiting,) = service.pending_decisions()
    assert waiting.kind is Waiting.APPROVAL
    assert waiting.since == datetime.fromisoformat(_at(0)), "asked by the proposal, not by a later refused marker"


def test_a_plan_without_question_waits_since_its_last_event(store: Store) -> None:
    service = WorkflowService(store)
    plan_id = service.create_plan_from_proposal(title="Add OAuth", slug="add-oauth").id
    service.apply(plan_id, Approve(), actor="user")
    service.apply(plan_id, ImplementationReported(), actor="agent")
    _seed_times(store, plan_id, _at(10), _at(0), _at(1), _at(1), _at(2))
    (waiting,) = service.pending_decisions()
    assert waiting.kind is Waiting.START_REVIEW
    assert waiting.since == datetime.fromisoformat(_at(2)), "since the implementation was reported complete"
    unrecorded = store.create_plan(title="No history yet", slug="no-history", phase="review")
    found = {d.plan_id: d for d in service.pending_decisions()}
    assert found[unrecorded.id].since == unrecorded.updated_at, "no event yet: its last change dates it"


def test_finished_and_busy_plans_are_skipped_not_the_end_of_the_list(store: Store) -> None:
    service = WorkflowService(store)
    first = service.create_plan_from_proposal(title="First", slug="first").id
    abandoned = service.create_plan_from_proposal(title="Abandoned", slug="abandoned").id
    service.apply(abandoned, Abandon("not needed"), actor="user")
    busy = service.create_plan_from_proposal(title="Busy", slug="busy").id
    service.apply(busy, Approve(), actor="user")
    last = service.create_plan_from_proposal(title="Last", slug="last").id
    assert {d.plan_id for d in service.pending_decisions(busy={busy})} == {first, last}
