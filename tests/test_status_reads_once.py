"""`tunaflow status` reads each plan's events once: its status, its place in the queue and the decisions
waiting all come from that one read (a project with many plans and long histories stays quick)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import Approve, Hold
from tunaflow_tui.core.workflow.phases import Actor, PlanEventType
from tunaflow_tui.core.workflow.service import WorkflowService


def test_status_reads_each_plans_events_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tunaflow_tui.subcommands.status_command import collect

    with Store.open(tmp_path) as store:
        service = WorkflowService(store)
        waiting = service.create_plan_from_proposal(title="Waits for you", slug="waits").id
        queued = service.create_plan_from_proposal(title="Queued", slug="queued").id
        service.apply(queued, Approve(), actor=Actor.USER)
        service.record(queued, PlanEventType.PLAN_QUEUED, Actor.SYSTEM, {"working": 3, "limit": 3})
        held = service.create_plan_from_proposal(title="Held", slug="held").id
        service.apply(held, Hold(), actor=Actor.USER)
    reads: Counter[int] = Counter()
    original = Store.list_plan_events

    def counted(self: Store, plan_id: int):  # type: ignore[no-untyped-def]
        reads[plan_id] += 1
        return original(self, plan_id)

    monkeypatch.setattr(Store, "list_plan_events", counted)
    document, pending = collect(tmp_path)
    assert dict(reads) == {waiting: 1, queued: 1, held: 1}
    plans = {plan["id"]: plan for plan in document["plans"]}
    assert plans[queued]["queued"] == 1 and plans[waiting]["queued"] is None
    assert [p.plan_id for p in pending] == [waiting, held], "the decisions waiting, from the same read"
