"""Subtasks tick while the Developer is still writing, not all at once when its turn ends.

Read from the order of what the runtime reported, not from the clock: each time the views are
told a plan changed, the test notes which subtasks were done and what the Developer had shown.
"""

from __future__ import annotations

from runtime_harness import PROPOSAL, Harness, dev_turn, verdict

from tunaflow_tui.runtime.events import (
    MessageDelta,
    MessageFinished,
    MessageStarted,
    PlanChanged,
    RuntimeEvent,
)
from tunaflow_tui.runtime.runtime import WorkflowRuntime

LIVE_DEV = (
    "Adding mul first.\n\n<!-- tunaflow:subtask-done:1 -->\n\n"
    "The protocol I follow looks like this:\n\n```\n<!-- tunaflow:subtask-done:2 -->\n"
    "```\n\nNow the test is written too.\n\n<!-- tunaflow:subtask-done:2 -->\n<!-- tunaflow:impl-complete -->\n"
)


async def test_subtasks_tick_as_the_developer_reports_them(harness: Harness) -> None:
    harness.set_script(
        architect=[{"text": PROPOSAL}],
        developer=[dev_turn(text=LIVE_DEV)],
        reviewer=[{"text": verdict("pass")}],
        verifier=[{"text": verdict("pass")}],
    )
    seen: list[tuple[str, object]] = []  # ("event", event) and ("ticks", statuses) in the order they happened
    rt: WorkflowRuntime

    def observe(event: RuntimeEvent) -> None:
        seen.append(("event", event))
        if isinstance(event, PlanChanged):
            seen.append(("ticks", [s.status for s in rt.store.get_plan(event.plan_id).subtasks]))

    rt = WorkflowRuntime(harness.project, harness.settings(), observer=observe)
    try:
        await rt.send_user_message("Please add multiplication")
        [plan] = rt.store.list_plans()
        plan = await rt.decide(plan.id, "approve")
        ticks = [e.detail for e in rt.store.list_plan_events(plan.id) if e.type == "subtask_done"]
    finally:
        rt.close()

    assert [s.status for s in plan.subtasks] == ["done", "done"]
    [started] = [e for kind, e in seen if kind == "event" and isinstance(e, MessageStarted) and e.role == "developer"]
    dev = started.message_id
    first = seen.index(("event", started))
    [finish] = [i for i, (kind, e) in enumerate(seen)
                if kind == "event" and isinstance(e, MessageFinished) and e.message_id == dev]

    def first_tick(n: int) -> int:
        return next(i for i, (kind, v) in enumerate(seen) if kind == "ticks" and v[n] == "done")  # type: ignore[index]

    def shown_before(index: int) -> str:
        return "".join(e.text for kind, e in seen[:index]
                       if kind == "event" and isinstance(e, MessageDelta) and e.message_id == dev)

    one, two = first_tick(0), first_tick(1)
    assert first < one < finish, "subtask 1 ticks while the Developer is still writing"
    assert "Now the test is written too" not in shown_before(one)
    assert "Now the test is written too" in shown_before(two), \
        "the marker quoted in a code block ticked nothing; only the real report did"
    assert len(ticks) == 2, ticks  # ticked once each, the end of the turn adds none

