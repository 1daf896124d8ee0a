"""Workflow view: each plan is one row, cut with an ellipsis, however long its title."""

from __future__ import annotations

from app_harness import screen_text
from textual.app import App, ComposeResult
from textual.widgets import OptionList

from tunaflow_tui.viewmodels.plan_rows import PlanSummaryView
from tunaflow_tui.widgets.workflow_view import WorkflowView

PLANS = (
    PlanSummaryView(plan_id=1, title="Add a word-frequency report to textstats with a very long title",
                    slug="add-a-word-frequency-report", phase="review", pending="review"),
    PlanSummaryView(plan_id=2, title="Fix CI cache", slug="fix-ci-cache", phase="done"),
)


class WorkflowApp(App[None]):
    def compose(self) -> ComposeResult:
        yield WorkflowView(PLANS)


async def test_plan_rows_are_single_lines_with_an_ellipsis() -> None:
    app = WorkflowApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        plan_list = app.query_one("#plan-list", OptionList)
        assert plan_list.virtual_size.height == len(PLANS)
        left = plan_list.region.right
        rows = [line[:left] for line in screen_text(app).splitlines()]
        first = next(i for i, line in enumerate(rows) if "Add a" in line)
        assert rows[first].rstrip(" │").endswith("…")
        assert "Fix CI cache" in rows[first + 1]
