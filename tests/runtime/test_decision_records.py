"""A decision's record is written once, in the plan's conversation, when the decision is taken; a stop
between the decision and its record is made good on the next start, and older history is left as it was."""

from __future__ import annotations

from runtime_harness import Harness

from tunaflow_tui.core.workflow import Approve, Hold, ImplementationReported, RequestRevision
from tunaflow_tui.core.workflow.phases import Actor
from tunaflow_tui.runtime import record_writer
from tunaflow_tui.runtime.events import MessageAdded, RuntimeEvent
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _runtime(h: Harness, events: list[RuntimeEvent]) -> WorkflowRuntime:
    return WorkflowRuntime(h.project, h.settings(), observer=events.append)


def _records(rt: WorkflowRuntime) -> list[str]:
    return [m.content.splitlines()[0] for m in rt.store.list_messages("main") if m.meta.get("kind") == "decision"]


def _plan(rt: WorkflowRuntime) -> int:
    source = rt.store.add_message("main", "assistant", "a proposal", persona="architect")
    slug = f"add-mul-{source.id}"
    return rt.service.create_plan_from_proposal(title="Add mul", slug=slug, subtasks=[("Add mul", "")],
                                                source_message_id=source.id).id


def test_a_decision_writes_its_record_once(harness: Harness) -> None:
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan_id = _plan(rt)
        rt.apply(plan_id, RequestRevision(feedback="Also divide."), Actor.USER)
        assert _records(rt) == ["**↻ You asked for a revision of plan 1 “Add mul”: “Also divide.” · "
                                + _records(rt)[0].rsplit("· ", 1)[1]]
        [record] = [m for m in rt.store.list_messages("main") if m.meta]
        assert record.role == "system" and record.meta["feedback"] == "Also divide."
        assert dict(record.meta["proposal"]) == {"title": "Add mul", "revision": 1, "subtasks": ("Add mul",)}
        assert MessageAdded("main", record.id, "system") in events
        # a retry of the same writing (or a recovery) adds nothing
        assert record_writer.write_records(rt, plan_id, 0) == []
        assert rt.catch_up_records() == 0
        assert len(_records(rt)) == 1
    finally:
        rt.close()


def test_only_the_users_decisions_are_recorded(harness: Harness) -> None:
    rt = _runtime(harness, [])
    try:
        plan_id = _plan(rt)
        rt.apply(plan_id, Approve(), Actor.USER)
        rt.apply(plan_id, ImplementationReported(), Actor.AGENT)
        [line] = _records(rt)
        assert line.startswith("**✓ You approved plan 1 “Add mul” (revision 1)")
    finally:
        rt.close()


def test_a_decision_a_stop_left_unrecorded_is_recorded_on_the_next_start(harness: Harness) -> None:
    rt = _runtime(harness, [])
    try:
        old = _plan(rt)
        rt.service.apply(old, Approve(), actor=Actor.USER)  # history from before records existed …
        rt.store.add_message("main", "user", "later message")  # … followed by more conversation
        plan_id = _plan(rt)
        rt.service.apply(plan_id, Hold(), actor=Actor.USER)  # decided, then the process stopped
        assert _records(rt) == []
    finally:
        rt.close()
    again = _runtime(harness, [])
    try:
        assert again.catch_up_records() == 1
        [line] = _records(again)
        assert line.startswith("**⏸ You put plan 2 “Add mul” on hold")
        assert again.catch_up_records() == 0
    finally:
        again.close()
