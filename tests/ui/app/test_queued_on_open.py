"""A plan left queued for a slot by an earlier run starts by itself when the app opens the project."""

from __future__ import annotations

from app_harness import demo_settings, posted
from waiting import until

from tunaflow_tui.core.workflow import Approve
from tunaflow_tui.core.workflow.phases import Actor, PlanEventType
from tunaflow_tui.runtime.runtime import WorkflowRuntime


async def test_a_plan_left_queued_starts_by_itself_when_the_app_opens(open_app, at_approval) -> None:
    # what an earlier run leaves: the plan approved over the cap, queued, its Developer never started
    runtime = WorkflowRuntime(at_approval, demo_settings(at_approval))
    plan = runtime.store.list_plans()[0]
    runtime.apply(plan.id, Approve(), Actor.USER)
    runtime.service.record(plan.id, PlanEventType.PLAN_QUEUED, Actor.SYSTEM, {"working": 3, "limit": 3})
    runtime.close()
    app, _controller, runtime2 = open_app(project=at_approval)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: runtime2.store.get_plan(plan.id).pending_decision == "review",  # type: ignore[union-attr]
                    "the queued plan to be developed and reviewed without a key pressed")
        messages = [n.message for n in posted(app)]
        assert any("1 queued plan will start in approval order" in m for m in messages), messages
        assert not any("interrupted" in m for m in messages), "a queued plan is not offered as interrupted"
    assert runtime2.queued_plans() == ()
