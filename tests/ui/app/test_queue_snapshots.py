"""Snapshot of the decision queue with an agent's permission question older than a plan's proposal: the
dock's line names the question first — what f2 reaches — then the plan, at 80×24 and 120×40.

The question is asked through the runtime's permission desk, as an ACP engine asks it during a turn (the
agent is the edge a test stands in for); the plan is seeded through the workflow service.
"""

from __future__ import annotations

import asyncio

import pytest
from app_harness import quiet
from waiting import until

from tunaflow_tui.agents.permissions import PermissionRequest
from tunaflow_tui.widgets.permission.permission_card import PermissionCard

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


@pytest.fixture
def snap_app(steady_app):
    return steady_app("tunaflow-queue-snapshots")


async def _question_then_plan(pilot) -> None:
    app = pilot.app
    runtime = app.controller.session.runtime
    await quiet(pilot)
    request = PermissionRequest(engine="claude-acp", role="architect", session_id="s1", tool_call_id="t1",
                                title="Write notes.txt", kind="edit", paths=("notes.txt",))
    app.question = asyncio.create_task(runtime.permissions.ask(app.conversation_id, request))  # kept until the end
    await until(pilot, lambda: len(app.query(PermissionCard)) == 1, "the question's card")
    plan = runtime.service.create_plan_from_proposal(title="Add a word frequency report", slug="word-frequency",
                                                     subtasks=[("Count words", ""), ("Format the report", "")])
    runtime.plan_changed(plan)
    await until(pilot, lambda: app.decision_dock.card_for(plan.id) is not None, "the plan's card")
    app.composer.focus_input()
    await until(pilot, lambda: "focuses the Architect's question" in app.decision_dock.query_one("#dock-hint").text,
                "the dock's line naming the question")
    await quiet(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_question_older_than_a_plan(snap_compare, snap_app, size) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_question_then_plan)
