"""The dock at 80×24: the one line that lists a decision's keys says what is true now."""

from __future__ import annotations

from app_harness import armed, screen_text, send, settle
from waiting import until

from tunaflow_tui.core.workflow.phases import Phase


async def test_after_approving_the_dock_no_longer_says_the_plan_waits(open_app, at_approval) -> None:
    app, _controller, runtime = open_app(delay=0.05)  # the Developer takes a while, as a real one does
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.decision_dock.card_for(1).focus()
        await armed(pilot, app)
        hint = app.decision_dock.query_one("#dock-hint")
        assert "Plan waiting" in str(hint.render())
        await pilot.press("a")
        await pilot.pause()
        await pilot.pause()
        plan = runtime.store.get_plan(1)
        assert plan is not None and plan.phase != Phase.DONE  # still in the moment the hint went stale
        assert not hint.display or "Plan waiting" not in str(hint.render()), str(hint.render())
        await settle(pilot, app)


async def test_the_demo_s_suggestion_goes_after_the_first_send(open_app) -> None:
    from tunaflow_tui.subcommands.demo import DEMO_NOTE

    app, _controller, _runtime = open_app(notes=(DEMO_NOTE,))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        assert "try: add a word frequency report" in screen_text(app)
        await send(pilot, app, "add a word frequency report")
        await until(pilot, lambda: "try: add a word" not in screen_text(app), "the suggestion gone")
        status = app.query_one("#status-line")
        assert not status.display or "try:" not in str(status.render())
