"""The workflow view ticks subtasks while the Developer writes, not when its turn ends."""

from __future__ import annotations

import asyncio
import re
import time

from app_harness import screen_text, send, settle

from tunaflow_tui.screens.workflow import WorkflowScreen

REQUEST = "Add a word frequency report"


def _ticks(text: str) -> list[str]:
    """The glyph in front of each numbered subtask line of the workflow view, in order."""
    return re.findall(r"([✓·✗])\s+\d\. ", text)


async def test_open_workflow_view_ticks_subtasks_live(open_app) -> None:
    app, _controller, runtime = open_app(delay=0.02)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, REQUEST)
        [plan] = runtime.store.list_plans()
        approving = app.run_worker(runtime.decide(plan.id, "approve"), exit_on_error=False)
        app.action_open_workflow()
        await pilot.pause()
        assert isinstance(app.screen, WorkflowScreen)

        seen: list[list[str]] = []
        deadline = time.monotonic() + 30
        while not approving.is_finished and time.monotonic() < deadline:
            ticks = _ticks(screen_text(app))
            if ticks and (not seen or ticks != seen[-1]):
                seen.append(ticks)
            await asyncio.sleep(0.01)
        await settle(pilot, app)
        assert any(t.count("✓") not in (0, len(t)) for t in seen), (
            f"no partly ticked state was ever on screen: {seen}")
        assert _ticks(screen_text(app)) == ["✓", "✓", "✓"]
