"""The status line above the composer says which plan an agent or a test run works for, once more than
one plan is in flight ("plan 2: developer (claude) is working…"); with a single plan it reads as before.

Plans are seeded through the workflow service; the runtime's events are emitted as its turns emit them.
"""

from __future__ import annotations

import asyncio

from app_harness import settle
from hand_clock import HandClock
from seeded_plans import with_branches
from waiting import until

from tunaflow_tui.controllers import status_controller
from tunaflow_tui.core.workflow import Abandon
from tunaflow_tui.core.workflow.phases import Actor
from tunaflow_tui.core.workflow.service import WorkflowService
from tunaflow_tui.runtime.events import MessageFinished, MessageStarted, ProjectTestsRunning

LIMIT_S = 5.0


def _status_lines(app) -> list[str]:  # type: ignore[no-untyped-def]
    line = app.query_one("#status-line")
    return [text.strip() for text in str(line.content).splitlines() if text.strip()] if line.display else []


async def test_with_two_plans_in_flight_each_line_names_its_plan_and_with_one_it_does_not(open_app,
                                                                                         monkeypatch) -> None:
    monkeypatch.setattr(status_controller, "now", HandClock())
    app, controller, runtime = open_app()
    store = runtime.store
    service = WorkflowService(store)
    first = service.create_plan_from_proposal(title="Count words", slug="count-words", subtasks=[("Count", "")])
    second = service.create_plan_from_proposal(title="Count lines", slug="count-lines", subtasks=[("Count", "")])
    _impl1, _review1 = with_branches(store, first.id, "count-words")
    impl2, _review2 = with_branches(store, second.id, "count-lines")
    developer = f"branch:{impl2}"
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        gate = asyncio.Event()
        controller.workers.run_agent(gate.wait(), "develop")  # plan work in progress
        message = store.add_message(developer, "assistant", "", persona="developer", engine="claude",
                                    status="streaming").id
        runtime.emit(MessageStarted(developer, message, "developer", "claude", ""))
        runtime.emit(ProjectTestsRunning(first.id, "python -m pytest -q", running=True))
        await until(pilot, lambda: len(_status_lines(app)) == 2, "two status lines", limit=LIMIT_S)
        lines = _status_lines(app)
        assert lines[0].startswith(f"⟳ plan {second.id}: developer (claude) is working… 0s"), lines
        assert lines[1] == f"⟳ plan {first.id}: tests: python -m pytest -q 0s", lines
        store.update_message(message, status="done")
        runtime.emit(MessageFinished(developer, message, "done"))
        runtime.emit(ProjectTestsRunning(first.id, "python -m pytest -q", running=False))
        await until(pilot, lambda: not _status_lines(app) or "working" not in _status_lines(app)[0],
                    "the lines gone", limit=LIMIT_S)

        service.apply(first.id, Abandon(reason="one is enough"), actor=Actor.USER)  # one plan left in flight
        again = store.add_message(developer, "assistant", "", persona="developer", engine="claude",
                                  status="streaming").id
        runtime.emit(MessageStarted(developer, again, "developer", "claude", ""))
        await until(pilot, lambda: any("is working" in line for line in _status_lines(app)), "the line", limit=LIMIT_S)
        assert _status_lines(app)[0].startswith("⟳ developer (claude) is working… 0s"), _status_lines(app)
        store.update_message(again, status="done")
        runtime.emit(MessageFinished(developer, again, "done"))
        gate.set()
        await settle(pilot, app)
