"""What the screen shows follows the plan at once: archived branches, the done card's keys, the sidebar's width."""

from __future__ import annotations

import pytest
from app_harness import armed, screen_text, settle
from seeded_plans import reviewed, seat

from tunaflow_tui.widgets.sidebar import Sidebar

SIZES = [(80, 24), (120, 40)]


def _section_labels(app, attr: str) -> list[str]:
    sections = app.query_one(Sidebar).sections
    return [item.label for item in getattr(sections, attr)]


@pytest.mark.parametrize("size", SIZES)
async def test_accepting_a_review_moves_the_plans_branches_to_the_archive_at_once(open_app, size) -> None:
    app, _controller, runtime = open_app()
    plan_id = reviewed(runtime.store, [seat("reviewer", "pass"), seat("verifier", "pass")])
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        if size[0] < 100:
            await pilot.press("ctrl+b")  # the sidebar starts hidden on a narrow terminal
        await pilot.pause()
        assert sorted(_section_labels(app, "branches")) == ["Implement: word-frequency", "Review: word-frequency"]
        await pilot.press("f2")  # to the verdict card
        await armed(pilot, app)
        await pilot.press("a")
        await settle(pilot, app)
        assert runtime.store.get_plan(plan_id).phase == "done"
        assert _section_labels(app, "branches") == []
        assert sorted(_section_labels(app, "archive")) == ["Implement: word-frequency", "Review: word-frequency"]
        text = screen_text(app)
        assert "Archive 2" in text and "Branches" in text
