"""f4 is the user's act: what it stops records "cancelled by you", never an error of the agent."""

from __future__ import annotations

import pytest
from app_harness import armed, screen_text, settle
from holding_engine import holding_factory
from waiting import until

from tunaflow_tui.core.workflow.service import WorkflowService
from tunaflow_tui.screens.decision_screen import DecisionScreen

SIZES = [(80, 24), (120, 40)]


@pytest.mark.parametrize("size", SIZES)
async def test_f4_on_the_architect_says_cancelled_by_you(open_app, size) -> None:
    factory, engine = holding_factory("architect")  # the Architect stops mid-answer until cancelled
    app, _controller, runtime = open_app(engine_factory=factory)
    async with app.run_test(size=size) as pilot:
        app.composer.input.load_text("Add a word frequency report")
        await pilot.press("enter")
        await until(pilot, lambda: any(b.is_streaming and b.text for b in app.chat_view.blocks())
                    and engine().holding("architect"), "the Architect writing")
        await pilot.press("f4")
        await settle(pilot, app)
        [answer] = [m for m in runtime.store.list_messages("main") if m.role == "assistant"]
        assert (answer.status, answer.error_message) == ("interrupted", "cancelled by you")
        text = screen_text(app)
        assert "cancelled by you: the answer above is partial" in text
        assert "failed" not in text and "error" not in text.lower()


@pytest.mark.parametrize("size", SIZES)
async def test_f4_on_the_developer_is_recorded_as_cancelled_by_you(open_app, size) -> None:
    factory, engine = holding_factory("developer")  # the Developer stops mid-answer until cancelled
    app, _controller, runtime = open_app(engine_factory=factory)
    plan = WorkflowService(runtime.store).create_plan_from_proposal(
        title="Add a word frequency report", slug="word-frequency", subtasks=[("Count words", "")])
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await pilot.press("f2")
        await armed(pilot, app)
        await pilot.press("a")
        await until(pilot, lambda: any(c.startswith("branch:") for c in runtime.runner.running_conversations)
                    and engine().holding("developer"),
                    "the Developer writing")
        await pilot.press("f4")
        await settle(pilot, app)
        assert isinstance(app.screen, DecisionScreen)
        await until(pilot, lambda: "You cancelled the Developer" in screen_text(app), "You cancelled the Developer on screen")
        fresh = runtime.store.get_plan(plan.id)
        assert fresh.pending_detail["reason"] == "cancelled by you"
        finished = [e for e in runtime.store.list_plan_events(plan.id) if e.type == "agent_finished"]
        assert finished[-1].detail["status"] == "cancelled" and finished[-1].actor == "user"
        assert "error" not in str(fresh.pending_detail)
