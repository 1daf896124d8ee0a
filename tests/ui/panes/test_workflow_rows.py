"""Workflow board: each plan is one row — id, title cut with an ellipsis, phase mark, cost — however long its title."""

from __future__ import annotations

from app_harness import screen_text
from textual.app import App, ComposeResult

from tunaflow_tui.viewmodels.plan_rows import PlanSummaryView, SubtaskView
from tunaflow_tui.widgets.plan_board import cut_title, row_text
from tunaflow_tui.widgets.workflow_view import PlanList, WorkflowView

LONG = "Add a word-frequency report to textstats with a very long title that goes on"
PLANS = (
    PlanSummaryView(plan_id=1, title=LONG, slug="add-a-word-frequency-report", phase="review", pending="review",
                    cost="$1.37"),
    PlanSummaryView(plan_id=2, title="Fix CI cache", slug="fix-ci-cache", phase="done", cost="12.4k tok"),
    PlanSummaryView(plan_id=3, title="Count sentences", slug="count-sentences", phase="dev", working=True,
                    subtasks=(SubtaskView(1, "a", status="done"), SubtaskView(2, "b"))),
)


class WorkflowApp(App[None]):
    def compose(self) -> ComposeResult:
        yield WorkflowView(PLANS)


async def test_plan_rows_are_single_lines_cut_with_an_ellipsis_and_keep_their_mark_and_cost() -> None:
    app = WorkflowApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        plan_list = app.query_one(PlanList)
        assert plan_list.virtual_size.height == len(PLANS) + 3, "one line per plan, one per group heading"
        rows = [line.strip("│ ") for line in screen_text(app).splitlines() if line.startswith("│")]
        assert rows[:6] == [rows[0], rows[1], "Dev 1", rows[3], "Done 1", rows[5]]
        assert rows[0] == "Waiting for you 1"
        first = rows[1]
        assert first.startswith("◆ #1   Add a word-frequency report") and "…" in first, first
        assert "very long title that goes on" not in screen_text(app), "the title stays on its line"
        assert first.split()[-2:] == ["verdict", "$1.37"], first
        assert rows[3].startswith("● #3   Count sentences") and "dev 1/2" in rows[3], rows[3]
        assert rows[5].split() == ["#2", "Fix", "CI", "cache", "done", "12.4k", "tok"], rows[5]
        raw = [line for line in screen_text(app).splitlines() if line.startswith("│")]
        columns = {row.index(mark) for row, mark in ((raw[1], "verdict"), (raw[3], "dev 1/2"), (raw[5], "done"))}
        assert len(columns) == 1, "the phase marks line up"


def test_a_title_is_cut_after_a_whole_word_where_it_can_be() -> None:
    assert cut_title("Add a word-frequency report", 40) == "Add a word-frequency report"
    assert cut_title("Add a word-frequency report to textstats", 30) == "Add a word-frequency report…"
    assert cut_title("Supercalifragilisticexpialidocious", 12) == "Supercalifr…"  # one long word: cut in it
    assert cut_title("README 오타 수정 and more", 14) == "README 오타…"  # wide characters count two cells


def test_a_narrow_row_drops_the_cost_then_the_mark_never_the_id() -> None:
    plan = PLANS[0]
    assert row_text(plan, 60).plain.endswith("$1.37")
    narrow = row_text(plan, 34).plain
    assert "verdict" in narrow and "$1.37" not in narrow
    tiny = row_text(plan, 16).plain
    assert tiny.startswith("◆ #1") and "verdict" not in tiny and tiny.rstrip().endswith("…")
    assert all(row_text(plan, width).cell_len <= width for width in range(8, 90))


class ManyPlansApp(App[None]):
    def compose(self) -> ComposeResult:
        phases = ("approval", "dev", "review", "done")
        yield WorkflowView(tuple(
            PlanSummaryView(plan_id=n, title=f"Plan number {n} with a title long enough to be cut at 80 columns wide",
                            slug=f"plan-{n}", phase=phases[n % 4], cost=f"${n / 100:.2f}")
            for n in range(1, 61)))

    def on_mount(self) -> None:
        self.query_one(PlanList).focus()


async def test_many_plans_scroll_and_the_cursor_stays_in_view() -> None:
    app = ManyPlansApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view = app.query_one(WorkflowView)
        last = view.plans[-1].plan_id  # the last done plan, at the bottom of the board
        assert f" #{last} " not in screen_text(app)
        await pilot.press("end")
        await pilot.pause()
        assert view.selected is not None and view.selected.plan_id == last
        rows = [line for line in screen_text(app).splitlines() if f" #{last} " in line]
        assert len(rows) == 1 and rows[0].rstrip(" │").endswith(f"${last / 100:.2f}"), rows
        assert all("…" in line for line in screen_text(app).splitlines() if "Plan number" in line)


def test_each_phase_has_its_group_and_mark() -> None:
    from tunaflow_tui.viewmodels.board import board_groups, row_mark

    def plan(n: int, phase: str, **more: object) -> PlanSummaryView:
        return PlanSummaryView(plan_id=n, title=f"plan {n}", slug=f"p{n}", phase=phase, **more)  # type: ignore[arg-type]

    plans = (
        plan(1, "done"), plan(2, "held", pending="approval"), plan(3, "rework", subtasks=PLANS[2].subtasks),
        plan(4, "drafting"), plan(5, "abandoned"), plan(6, "dev", column="queued"), plan(7, "review", review_round=2),
        plan(8, "escalated", pending="doom loop"), plan(9, "dev", waiting="interrupted", column="waiting"),
        plan(10, "done", waiting="merge"),
    )
    groups = {group.heading: [(p.plan_id, row_mark(p)) for p in group.plans] for group in board_groups(plans)}
    assert groups == {
        "Waiting for you": [(2, "held"), (8, "failing"), (9, "interrupted")],
        "Drafting": [(4, "drafting")],
        "Queued": [(6, "queued")],
        "Dev": [(3, "rework 1/2")],
        "Review": [(7, "review r2")],
        "Done": [(1, "done"), (5, "abandoned"), (10, "to merge")],
    }
