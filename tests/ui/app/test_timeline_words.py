"""The workflow view's timeline reads as sentences — the same ones `tunaflow status` and `export` print."""

from __future__ import annotations

import pytest
from app_harness import screen_text
from seeded_plans import reviewed, seat
from waiting import until

from tunaflow_tui.core.exporting import export_plan
from tunaflow_tui.core.workflow import Rework
from tunaflow_tui.screens.workflow import WorkflowScreen
from tunaflow_tui.subcommands.status_command import collect, render_text

IDS = ("review_finished", "review_failed", "rework_requested", "subtask_done", "proposal_received")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_timeline_says_what_happened_in_words(open_app, demo_project, size: tuple[int, int]) -> None:
    app, _controller, runtime = open_app()
    plan_id = reviewed(runtime.store, [seat("reviewer", "fail", "No test for empty input"), seat("verifier", "pass")])
    runtime.service.apply(plan_id, Rework(feedback="Add the test"), actor="user")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("f3")
        for _ in range(100):
            if isinstance(app.screen, WorkflowScreen):
                break
            await pilot.pause(0.05)
        if size[0] < 100:
            await pilot.press("d")  # at 80 columns the board is a list: the plan's details are one key away
        await until(pilot, lambda: "1 failed review" in " ".join(screen_text(app).replace("│", " ").split()),
                    "the plan's details, as read across a wrapped line")
        events = app.screen.query_one("#events")
        events.scroll_visible(animate=False, top=True)
        await pilot.pause()
        text = " ".join(screen_text(app).replace("│", " ").split())
        assert "review round 1: fail" in text and "approved revision 1" in text
        assert not [word for word in IDS if word in text]
    # the same words outside the app
    document, _pending = collect(demo_project)
    assert "last: rework requested after review round 1: Add the test" in render_text(document)
    exported = export_plan(runtime.store, str(plan_id))
    assert "· user · rework requested after review round 1: Add the test" in exported
    assert "· agent · review round 1: fail" in exported
