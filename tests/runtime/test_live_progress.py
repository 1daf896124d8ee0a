"""Subtasks tick while the Developer is still writing, not all at once when its turn ends."""

from __future__ import annotations

import asyncio
import contextlib
import time

from runtime_harness import PROPOSAL, Harness, dev_turn, verdict

from tunaflow_tui.runtime.events import MessageStarted, PlanChanged, RuntimeEvent
from tunaflow_tui.runtime.runtime import WorkflowRuntime

LIVE_DEV = (
    "Adding mul first.\n\n<!-- tunaflow:subtask-done:1 -->\n\n"
    "The protocol I follow looks like this:\n\n```\n<!-- tunaflow:subtask-done:2 -->\n"
    "```\n\nNow the test is written too.\n\n<!-- tunaflow:subtask-done:2 -->\n<!-- tunaflow:impl-complete -->\n"
)


async def _until(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_subtasks_tick_as_the_developer_reports_them(harness: Harness) -> None:
    harness.set_script(
        architect=[{"text": PROPOSAL}],
        developer=[dev_turn(text=LIVE_DEV, pause_after={
            "subtask-done:1 -->": 1.5,  # subtask 1 reported, the turn goes on
            "```\n<!-- tunaflow:subtask-done:2 -->": 1.5,  # quoted inside a code block: not a report
        })],
        reviewer=[{"text": verdict("pass")}],
        verifier=[{"text": verdict("pass")}],
    )
    events: list[RuntimeEvent] = []
    rt = WorkflowRuntime(harness.project, harness.settings(), observer=events.append)
    try:
        await rt.send_user_message("Please add multiplication")
        [plan] = rt.store.list_plans()
        deciding = asyncio.create_task(rt.decide(plan.id, "approve"))

        def statuses() -> list[str]:
            return [s.status for s in rt.store.get_plan(plan.id).subtasks]

        await _until(lambda: statuses()[0] == "done" or deciding.done())
        [started] = [e for e in events if isinstance(e, MessageStarted) and e.role == "developer"]
        assert statuses() == ["done", "pending"]
        assert rt.store.get_message(started.message_id).status == "streaming"
        since_start = events[events.index(started):]
        assert any(isinstance(e, PlanChanged) and e.plan_id == plan.id for e in since_start), \
            "the views were told about the tick while the Developer was writing"
        # the marker quoted in the code block arrives during the second pause: still pending
        await _until(lambda: "```\n<!-- tunaflow:subtask-done:2 -->" in rt.store.get_message(started.message_id).content
                     or deciding.done())
        await asyncio.sleep(0.5)
        if not deciding.done():
            assert statuses() == ["done", "pending"]

        plan = await deciding
        assert [s.status for s in plan.subtasks] == ["done", "done"]
        ticks = [e.detail for e in rt.store.list_plan_events(plan.id) if e.type == "subtask_done"]
        assert len(ticks) == 2, ticks  # ticked once each, the end of the turn adds none
    finally:
        if "deciding" in locals() and not deciding.done():  # a failed check must not leave the cycle running
            deciding.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await deciding
        rt.close()
