"""The workflow board follows a plan while the Developer writes: it moves to Dev, marked as worked on, and
ticks its subtasks as they are reported, not when the turn ends."""

from __future__ import annotations

import re

from app_harness import screen_text, settle
from holding_engine import holding_factory
from waiting import until

from tunaflow_tui.screens.workflow import WorkflowScreen

REQUEST = "Add a word frequency report"


def _ticks(text: str) -> list[str]:
    """The glyph in front of each numbered subtask line of the workflow view, in order."""
    return re.findall(r"([✓·✗])\s+\d\. ", text)


async def test_open_workflow_view_ticks_subtasks_live(open_app, at_approval) -> None:
    # the Developer reports its first subtask done, then is still writing until released
    factory, engine = holding_factory("developer", after="<!-- tunaflow:subtask-done:1 -->\n\n")
    app, _controller, runtime = open_app(engine_factory=factory)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)  # the Architect's proposal waits (``at_approval``: its turn ran once, headless)
        [plan] = runtime.store.list_plans()
        approving = app.run_worker(runtime.decide(plan.id, "approve"), exit_on_error=False)
        app.action_open_workflow()
        await pilot.pause()
        assert isinstance(app.screen, WorkflowScreen)

        def partly_ticked() -> bool:
            ticks = _ticks(screen_text(app))
            return ticks.count("✓") not in (0, len(ticks))

        await until(pilot, partly_ticked, "a partly ticked subtask list on screen")
        assert engine().holding("developer") and not approving.is_finished
        assert _ticks(screen_text(app)) == ["✓", "·", "·"]
        # it left "Waiting for you" for "Dev" while the board was open, marked as worked on
        rows = screen_text(app).splitlines()
        [row] = [line for line in rows if re.search(rf"[●◆ ] #{plan.id} ", line)]
        assert "Waiting for you" not in screen_text(app)
        assert any(line.strip("│ ").startswith("Dev 1") for line in rows[:rows.index(row)])
        assert f"● #{plan.id}" in row and "dev 1/3" in row, row
        engine().release()
        await approving.wait()
        await settle(pilot, app)
        assert _ticks(screen_text(app)) == ["✓", "✓", "✓"]
