"""Workflow view: plans with phases, subtasks ticking, timeline, documents that open read-only."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from app_harness import notifications, screen_text
from textual.app import App, ComposeResult
from textual.message import Message
from textual.widgets import Markdown, OptionList
from waiting import until

from tunaflow_tui.screens.documents import DocumentScreen, read_document
from tunaflow_tui.screens.workflow import WorkflowScreen
from tunaflow_tui.textual_compat import FooterKey
from tunaflow_tui.viewmodels.plan_rows import EventView, PlanSummaryView, SubtaskView
from tunaflow_tui.widgets.workflow_view import WorkflowView

RATE = PlanSummaryView(
    plan_id=7, title="Add rate limiting", slug="add-rate-limiting", phase="dev",
    subtasks=(
        SubtaskView(1, "Token bucket middleware", status="done"),
        SubtaskView(2, "Configuration", status="pending"),
        SubtaskView(3, "Tests", status="failed"),
    ),
    events=(
        EventView("10:02", "proposal_received", "agent", "proposal received (revision 1, 3 subtasks)"),
        EventView("10:05", "approved", "user", "approved revision 1"),
        EventView("10:21", "subtask_done", "agent", "subtask 1 done"),
    ),
    documents=(("add-rate-limiting.md", "docs/plans/add-rate-limiting.md"),),
    usage_text="Architect 12.4k tokens · Developer 88.1k tokens · $0.42",
)
README = PlanSummaryView(
    plan_id=8, title="README 오타 수정", slug="plan-8", phase="approval", pending="plan approval",
)
DONE = PlanSummaryView(plan_id=5, title="Fix CI cache", slug="fix-ci-cache", phase="done", failures=1)
PLANS = (RATE, README, DONE)


class WorkflowApp(App[None]):
    def __init__(self, plans: tuple[PlanSummaryView, ...] = PLANS) -> None:
        super().__init__()
        self.plans = plans

    def compose(self) -> ComposeResult:
        yield WorkflowView(self.plans)

    def on_mount(self) -> None:
        self.query_one("#plan-list").focus()


def unique(messages: list[Message], kind: type[Message]) -> list[Message]:
    return list({id(m): m for m in messages if isinstance(m, kind)}.values())


async def test_the_board_opens_on_what_waits_for_you_and_shows_a_plans_details() -> None:
    app = WorkflowApp()
    async with app.run_test(size=(120, 40)) as pilot:
        text = screen_text(app)
        rows = [line.split("│")[1] for line in text.splitlines() if line.count("│") >= 2]
        assert [row.strip() for row in rows[:6]][0::2] == ["Waiting for you 1", "Dev 1", "Done 1"]
        assert "◆ #8" in rows[1] and "README 오타 수정" in rows[1] and "plan approval" in rows[1]
        assert "#7" in rows[3] and "dev 1/3" in rows[3]
        assert "waiting for you: plan approval" in text  # the first plan's details
        await pilot.press("down")
        await until(pilot, lambda: "✓  1. Token bucket middleware" in screen_text(app), "plan 7's details")
        text = screen_text(app)
        assert "·  2. Configuration" in text
        assert "✗  3. Tests" in text
        assert "10:05 user  approved revision 1" in text and "10:21" in text
        assert "subtask_done" not in text and "proposal_received" not in text  # sentences, not ids
        assert "Developer 88.1k tokens" in text


async def test_moving_the_cursor_shows_another_plan_and_enter_selects_it() -> None:
    seen: list[Message] = []
    app = WorkflowApp()
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await pilot.press("down")  # past the Dev heading, to plan 7
        await pilot.pause()
        await until(pilot, lambda: "Plan #7" in screen_text(app), "plan 7's details")
        await pilot.press("enter")
        await pilot.pause()
        assert [m.plan_id for m in unique(seen, WorkflowView.PlanSelected)] == [7]  # type: ignore[attr-defined]
        assert [m.plan_id for m in unique(seen, WorkflowView.PlanHighlighted)][-1] == 7  # type: ignore[attr-defined]


async def test_j_and_k_move_between_plans_over_the_group_headings() -> None:
    app = WorkflowApp()
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.query_one(WorkflowView)
        assert view.selected == README
        await pilot.press("j")
        assert view.selected == RATE
        await pilot.press("j")
        assert view.selected == DONE
        await pilot.press("k", "k")
        assert view.selected == README
        await pilot.press("k")
        assert view.selected == DONE  # round to the last plan, past every heading


async def test_update_plans_keeps_the_selection_and_refreshes_details() -> None:
    app = WorkflowApp()
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.query_one(WorkflowView)
        await pilot.press("down", "down")  # Fix CI cache
        assert view.selected == DONE
        ticked = replace(RATE, subtasks=tuple(replace(t, status="done") for t in RATE.subtasks))
        newer = PlanSummaryView(plan_id=9, title="New plan", slug="new-plan", phase="drafting")
        view.update_plans((newer, ticked, README, DONE))
        await pilot.pause()
        assert view.selected == DONE
        await pilot.press("up")
        await pilot.pause()
        assert view.selected == ticked
        await until(pilot, lambda: "✓  3. Tests" in screen_text(app), "✓  3. Tests on screen")
        await pilot.press("up")
        assert view.selected == newer  # a plan being drafted has its own group, above the work in progress


async def test_enter_on_a_document_opens_it_read_only(tmp_path: Path) -> None:
    doc = tmp_path / "add-rate-limiting.md"
    doc.write_text("# Add rate limiting\n\nUse a **token bucket** per key.\n", encoding="utf-8")
    plan = replace(RATE, documents=(("add-rate-limiting.md", str(doc)),))
    app = WorkflowApp((plan,))
    async with app.run_test(size=(120, 40)) as pilot:
        app.query_one("#documents", OptionList).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DocumentScreen)
        assert "token bucket" in app.screen.query_one(Markdown).source
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, DocumentScreen)


def test_read_document_is_size_capped_and_survives_missing_files(tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    big.write_text("x" * 5000, encoding="utf-8")
    text = read_document(str(big), limit=1024)
    assert text.startswith("x" * 1024) and "cut at 1 KiB" in text and "x" * 1025 not in text
    assert "Cannot open" in read_document(str(tmp_path / "missing.md"))


async def test_no_plans_says_so() -> None:
    app = WorkflowApp(())
    async with app.run_test(size=(80, 24)):
        assert "No plans yet" in screen_text(app)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_snapshot_workflow_view(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(WorkflowApp(), terminal_size=size)


LONG_NAME = "add-a-sentence-count-to-the-word-frequency-report-review-r2.md"


class WorkflowScreenApp(App[None]):
    """The workflow view as the app shows it: its own screen, with the footer."""

    def __init__(self, plans: tuple[PlanSummaryView, ...]) -> None:
        super().__init__()
        self.plans = plans

    def on_mount(self) -> None:
        self.push_screen(WorkflowScreen(self.plans))


def _footer_text(app: App[None]) -> str:
    return " ".join(str(key.render()) for key in app.screen.query(FooterKey))


async def test_o_opens_the_plans_document_from_the_plan_list_and_the_footer_says_so(tmp_path: Path) -> None:
    doc = tmp_path / "add-rate-limiting.md"
    doc.write_text("# Add rate limiting\n\nUse a **token bucket** per key.\n", encoding="utf-8")
    plan = replace(RATE, documents=(("add-rate-limiting.md", str(doc)),))
    app = WorkflowScreenApp((plan, README))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.focused, OptionList) and app.focused.id == "plan-list",
                    "the plan list focused")
        await until(pilot, lambda: "Go to plan" in _footer_text(app) and "Open document" in _footer_text(app),
                    "the footer naming enter and o")
        footer = _footer_text(app)
        assert "⏎ Go to plan" in footer or "enter Go to plan" in footer, footer
        assert "o Open document" in footer and "d Details" in footer, footer
        await pilot.press("o")  # README waits for you (it is listed first) and has no documents: nothing opens
        await until(pilot, lambda: any("has no documents yet" in str(n.message) for n in notifications(app)),
                    "the reason nothing opened")
        assert isinstance(app.screen, WorkflowScreen)
        await pilot.press("down", "o")
        await until(pilot, lambda: isinstance(app.screen, DocumentScreen), "the document, with one key")
        assert "token bucket" in app.screen.query_one(Markdown).source
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, WorkflowScreen), "back in the workflow view")


async def test_at_80_columns_the_board_is_a_list_and_the_details_are_one_key_away() -> None:
    app = WorkflowScreenApp(PLANS)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.screen.query_one(WorkflowView)
        await until(pilot, lambda: view.narrow, "the narrow layout")
        assert not view.query_one("#plan-detail").display
        assert "Token bucket middleware" not in screen_text(app)
        await pilot.press("j", "d")  # plan 7, its details
        await until(pilot, lambda: "✓  1. Token bucket middleware" in screen_text(app), "the details, in place")
        assert not view.query_one("#plan-list").display
        assert "Back to plans" in _footer_text(app)
        await pilot.press("escape")  # back to the board, not out of the view
        await until(pilot, lambda: view.query_one("#plan-list").display, "the board again")
        assert isinstance(app.screen, WorkflowScreen) and app.focused is view.query_one("#plan-list")
        assert view.selected == RATE
        await pilot.press("d", "d")  # d goes in and out too
        await until(pilot, lambda: app.focused is view.query_one("#plan-list"), "the board again")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, WorkflowScreen), "out of the view")


async def test_a_long_document_name_is_cut_in_the_middle_in_a_half_width_panel() -> None:
    plan = replace(RATE, documents=(("add-rate-limiting.md", "x.md"), (LONG_NAME, "y.md")))
    app = WorkflowScreenApp((plan,))
    async with app.run_test(size=(110, 30)) as pilot:  # board and details side by side
        await pilot.press("d")
        await until(pilot, lambda: "review-r2.md" in screen_text(app), "the documents in the details")
        app.screen.query_one("#documents").scroll_visible(animate=False)
        await pilot.pause()
        lines = screen_text(app).splitlines()
        [shown] = [line for line in lines if "review-r2.md" in line]
        assert "…" in shown and "add-a-sentence" in shown, shown
        assert not [line for line in lines if "report" in line and "review-r2.md" not in line], \
            "the name is never wrapped onto a second line"
