"""The workflow board on a project with plans in every phase (seeded in the database, no agent turn runs):
where each plan stands, the board's keys, and the board and sidebar following plans that move — in
this process and in another one."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_harness import quiet, screen_rows, screen_text, settle
from board_seeds import Board, seed_board
from other_process import idle_holder
from waiting import until

from tunaflow_tui.controllers import plan_views
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.leases import LeaseHolder
from tunaflow_tui.core.workflow.service import WorkflowService
from tunaflow_tui.screens.workflow import WorkflowScreen
from tunaflow_tui.widgets.composer import Composer
from tunaflow_tui.widgets.workflow_view import PlanList, WorkflowView

AT_WORK = 2
"""The seeded board has two plans at work in another process: every place taken, its queued plan stays queued."""


@pytest.fixture
def holder() -> Iterator[LeaseHolder]:
    """A live process holding the leases of the plans at work (as `tunaflow run` in another terminal)."""
    with idle_holder() as other:
        yield other


def board(app) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """The board as the screen shows it: each group's heading → its rows (mark, id, title, phase, cost)."""
    plan_list = app.screen.query_one(PlanList)
    region = plan_list.content_region
    groups: dict[str, list[str]] = {}
    rows = screen_rows(app)[region.y:region.bottom]
    current: list[str] = []
    for row in rows:
        text = row[region.x:region.right].rstrip()
        if not text:
            continue
        if not text.startswith(("●", "◆", " ")):  # a heading: "Waiting for you 3"
            current = groups.setdefault(text.rsplit(" ", 1)[0], [])
        else:
            current.append(text)
    return groups


async def open_board(pilot, app) -> None:  # type: ignore[no-untyped-def]
    """f3, and wait until the board lists its plans."""
    await pilot.press("f3")
    await until(pilot, lambda: isinstance(app.screen, WorkflowScreen) and board(app), "the board")


def row_of(app, plan_id: int) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """(group heading, row) of a plan on the board."""
    for heading, rows in board(app).items():
        for row in rows:
            if f"#{plan_id} " in row:
                return heading, row
    raise AssertionError(f"plan {plan_id} is not on the board:\n{screen_text(app)}")


def test_every_plan_stands_in_the_group_of_its_phase(tmp_path: Path, holder: LeaseHolder) -> None:
    with Store.open(tmp_path) as store:
        ids = seed_board(store, holder)
        views = {v.plan_id: v for v in plan_views.board_summaries(store, WorkflowService(store), tmp_path)}
    columns = {name: views[getattr(ids, name)].column for name in Board.__dataclass_fields__}
    assert columns == {"approval": "waiting", "verdict": "waiting", "held": "waiting", "queued": "queued",
                       "dev": "dev", "review": "review", "done": "done", "abandoned": "done"}
    assert [v.plan_id for v in views.values() if v.working] == [ids.dev, ids.review], "their leases are live"
    verdict = views[ids.verdict]
    assert verdict.cost == "$0.38" and verdict.tests == "tests failed: 1 failed, 13 passed in 0.61s"
    assert verdict.verdict == "review round 1: fail" and verdict.findings == ("The empty file case crashes",)
    assert views[ids.dev].cost == "$0.07" and views[ids.queued].cost == ""


async def test_the_board_lists_every_plan_by_group_and_follows_one_that_moves(open_app, demo_project,
                                                                              holder: LeaseHolder) -> None:
    app, _session, runtime = open_app(max_parallel_plans=AT_WORK)
    ids = seed_board(runtime.store, holder)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        await open_board(pilot, app)
        groups = board(app)
        assert list(groups) == ["Waiting for you", "Queued", "Dev", "Review", "Done"]
        assert [len(rows) for rows in groups.values()] == [3, 1, 1, 1, 2]
        assert row_of(app, ids.dev)[1].startswith("● ") and "dev 1/3" in row_of(app, ids.dev)[1]
        assert row_of(app, ids.review)[1].startswith("● ") and "review r1" in row_of(app, ids.review)[1]
        assert row_of(app, ids.verdict)[1].startswith("◆ ") and row_of(app, ids.verdict)[1].endswith("$0.38")
        assert "held" in row_of(app, ids.held)[1] and "abandoned" in row_of(app, ids.abandoned)[1]
        # the Review verdict's plan: waiting for you, its tests, verdict and cost beside the board
        view = app.screen.query_one(WorkflowView)
        while view.selected is None or view.selected.plan_id != ids.verdict:
            await pilot.press("j")
        await until(pilot, lambda: "The empty file case crashes" in screen_text(app), "its verdict's findings")
        text = screen_text(app)
        assert "tests failed: 1 failed, 13 passed in 0.61s" in text and "review round 1: fail" in text
        assert "$0.38" in text

        await runtime.decide(ids.verdict, "abandon", reason="the crash is someone else's")  # a plan moves
        await until(pilot, lambda: row_of(app, ids.verdict)[0] == "Done", "the plan under Done, without a key")
        assert "abandoned" in row_of(app, ids.verdict)[1] and not row_of(app, ids.verdict)[1].startswith("◆")
        assert view.selected is not None and view.selected.plan_id == ids.verdict, "the cursor went with it"


ELSEWHERE = """
import sys
from pathlib import Path
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import Approve
from tunaflow_tui.core.workflow.phases import PlanEventType
from tunaflow_tui.core.workflow.service import WorkflowService
with Store.open(Path(sys.argv[1])) as store:
    service = WorkflowService(store)
    service.apply(int(sys.argv[2]), Approve(), actor="user")
    # every place taken there: its runtime queues it, as plan_slots does
    service.record(int(sys.argv[2]), PlanEventType.PLAN_QUEUED, "system", {"working": 3, "limit": 3})
"""


async def test_a_plan_another_process_moves_moves_on_the_board_and_in_the_sidebar(open_app, demo_project,
                                                                                  holder: LeaseHolder) -> None:
    app, _session, runtime = open_app(max_parallel_plans=AT_WORK)
    ids = seed_board(runtime.store, holder)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await until(pilot, lambda: "[approval] ◆ Add OAu" in screen_text(app), "the sidebar's waiting-for-you mark",
                    limit=30)
        assert "[dev] ● Count sent" in screen_text(app), "the other process's Developer is at work on it"
        assert "[queued] Cache th" in screen_text(app), "queued for a free place: no mark"
        await open_board(pilot, app)
        assert row_of(app, ids.approval)[0] == "Waiting for you"
        done = subprocess.run([sys.executable, "-c", ELSEWHERE, str(demo_project), str(ids.approval)],
                              capture_output=True, text=True, timeout=120, env=os.environ.copy())
        assert done.returncode == 0, done.stderr
        # approved there and queued (the other process has no free place)
        await until(pilot, lambda: row_of(app, ids.approval)[0] == "Queued", "the plan moved to Queued", limit=60)
        assert "queued" in row_of(app, ids.approval)[1]
        await pilot.press("escape")
        await until(pilot, lambda: "[queued] Add OA" in screen_text(app), "the sidebar following, unmarked",
                    limit=30)
        assert "◆ Add OA" not in screen_text(app)


async def test_at_80_columns_the_board_is_a_list_with_the_details_one_key_away(open_app, demo_project,
                                                                               holder: LeaseHolder) -> None:
    app, _session, runtime = open_app(max_parallel_plans=AT_WORK)
    ids = seed_board(runtime.store, holder)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await open_board(pilot, app)
        view = app.screen.query_one(WorkflowView)
        assert view.narrow and not view.query_one("#plan-detail").display
        rows = [row for group in board(app).values() for row in group]
        assert all(len(row) <= 76 for row in rows)
        oauth = row_of(app, ids.approval)[1]
        assert "Add OAuth login with GitHub" in oauth and "…" in oauth and "approve" in oauth, oauth
        assert "dashboard" not in screen_text(app), "a long title is cut on its row, never wrapped"
        while view.selected is None or view.selected.plan_id != ids.done:
            await pilot.press("j")
        await pilot.press("d")
        await until(pilot, lambda: "tests passed: 14 passed in 0.52s" in screen_text(app), "the plan's details")
        assert "review round 1: pass" in screen_text(app) and "$0.38" in screen_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: board(app) and view.query_one(PlanList).has_focus, "back on the board")
        assert view.selected is not None and view.selected.plan_id == ids.done


async def test_hash_on_a_plan_goes_back_to_the_chat_with_its_pointer_in_the_composer(open_app, demo_project,
                                                                                     holder: LeaseHolder) -> None:
    app, _session, runtime = open_app(max_parallel_plans=AT_WORK)
    ids = seed_board(runtime.store, holder)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press(*"#9 keep it short")  # a draft, pointed at another plan
        await open_board(pilot, app)
        view = app.screen.query_one(WorkflowView)
        while view.selected is None or view.selected.plan_id != ids.review:
            await pilot.press("j")
        await pilot.press("number_sign")
        await until(pilot, lambda: not isinstance(app.screen, WorkflowScreen), "back in the chat")
        composer = app.query_one("#composer", Composer)
        assert composer.text == f"#{ids.review} keep it short", "the draft kept, pointed at the chosen plan"
        assert composer.input.has_focus
        await pilot.press(*" and clear")
        assert composer.text == f"#{ids.review} keep it short and clear", "the cursor at the end of the draft"


@pytest.fixture
def board_app(steady_app, holder: LeaseHolder):  # type: ignore[no-untyped-def]
    app = steady_app("tunaflow-board-snapshots", max_parallel_plans=AT_WORK)
    seed_board(app.controller.store, holder)
    return app


async def _board(pilot) -> None:  # type: ignore[no-untyped-def]
    await quiet(pilot)
    await pilot.press("f3")
    await quiet(pilot)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_snapshot_board(snap_compare, board_app, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(board_app, terminal_size=size, run_before=_board)
