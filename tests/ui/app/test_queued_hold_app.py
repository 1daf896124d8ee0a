"""Holding a queued plan from the app: from its row on the board to its card, `h` takes it out of the
queue (held on the board, in the sidebar and on its card); `u` puts it back in the queue.

The seeded board has every slot taken by plans another live process works on, so the queued plan
never starts by itself here: what moves it is the user's key.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_harness import run_from_palette, screen_rows, screen_text, settle
from board_seeds import seed_board
from other_process import idle_holder
from waiting import until

from tunaflow_tui.core.storage.leases import LeaseHolder
from tunaflow_tui.core.workflow.phases import PlanEventType
from tunaflow_tui.screens.workflow import WorkflowScreen
from tunaflow_tui.widgets.decision.way_card import WayCard
from tunaflow_tui.widgets.workflow_view import PlanList, WorkflowView

AT_WORK = 2
"""Two plans of the seeded board are at work in the other process: every slot is taken."""

SUPPORT = Path(__file__).resolve().parents[2] / "support"

# A second tunaflow process holding a plan (argv: the support folder, the project, the plan id): it prints the
# plan's phase after the hold.
OTHER_HOLDS = """
import asyncio, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from app_harness import demo_settings
from tunaflow_tui.runtime.runtime import WorkflowRuntime

project = Path(sys.argv[2])


async def main() -> None:
    rt = WorkflowRuntime(project, demo_settings(project, max_parallel_plans=2))
    try:
        print((await rt.decide(int(sys.argv[3]), "hold")).phase, flush=True)
    finally:
        rt.close()


asyncio.run(main())
"""


@pytest.fixture
def holder() -> Iterator[LeaseHolder]:
    with idle_holder() as other:
        yield other


def board_group_of(app, plan_id: int) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """(group heading, row) of a plan on the board, as the screen shows it."""
    plan_list = app.screen.query_one(PlanList)
    region = plan_list.content_region
    heading = ""
    for row in screen_rows(app)[region.y:region.bottom]:
        text = row[region.x:region.right].rstrip()
        if text and not text.startswith(("●", "◆", " ")):
            heading = text.rsplit(" ", 1)[0]
        elif f"#{plan_id} " in text:
            return heading, text
    raise AssertionError(f"plan {plan_id} is not on the board:\n{screen_text(app)}")


async def go_to_plan_on_board(pilot, app, plan_id: int) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("f3")
    await until(pilot, lambda: isinstance(app.screen, WorkflowScreen), "the board")
    view = app.screen.query_one(WorkflowView)
    await until(pilot, lambda: view.selected is not None, "the board's plans")
    while view.selected is None or view.selected.plan_id != plan_id:
        await pilot.press("j")


def card_of(app, plan_id: int) -> WayCard | None:  # type: ignore[no-untyped-def]
    return next((card for card in app.query(WayCard) if card.view.plan_id == plan_id), None)


async def test_h_on_a_queued_plans_card_holds_it_and_u_puts_it_back_in_the_queue(open_app, demo_project,
                                                                                holder: LeaseHolder) -> None:
    app, _session, runtime = open_app(max_parallel_plans=AT_WORK)
    ids = seed_board(runtime.store, holder)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        await go_to_plan_on_board(pilot, app, ids.queued)
        assert board_group_of(app, ids.queued)[0] == "Queued"
        await pilot.press("enter")  # to the plan: a queued plan's card says where it stands, with its keys
        await until(pilot, lambda: card_of(app, ids.queued) is not None and card_of(app, ids.queued).has_focus,
                    "the queued plan's card, focused")
        card = card_of(app, ids.queued)
        assert card is not None
        await until(pilot, lambda: "queued (number 1 in line)" in screen_text(app).lower(), "where it stands")
        assert "h hold" in screen_text(app).lower(), screen_text(app)

        await pilot.press("h")
        await until(pilot, lambda: runtime.store.get_plan(ids.queued).phase == "held",  # type: ignore[union-attr]
                    "the plan held")
        await until(pilot, lambda: "on hold" in str(card_of(app, ids.queued).border_title), "its card on hold")
        assert runtime.queued_plans() == (), "out of the queue"
        await until(pilot, lambda: "[held] ◆ Cache th" in screen_text(app), "the sidebar's held plan, waiting for you")
        await go_to_plan_on_board(pilot, app, ids.queued)
        heading, row = board_group_of(app, ids.queued)
        assert heading == "Waiting for you" and "held" in row, row

        await pilot.press("enter")
        await until(pilot, lambda: card_of(app, ids.queued) is not None and card_of(app, ids.queued).has_focus,
                    "the held plan's card, focused")
        await pilot.press("u")  # every slot is still taken: back in the queue
        await until(pilot, lambda: [q.plan_id for q in runtime.queued_plans()] == [ids.queued], "queued again",
                    limit=60)
        await until(pilot, lambda: "[queued] Cache th" in screen_text(app), "the sidebar's queued plan")
        await go_to_plan_on_board(pilot, app, ids.queued)
        await until(pilot, lambda: board_group_of(app, ids.queued)[0] == "Queued", "the plan under Queued again")


def _holds_and_resumes(runtime, plan_id: int) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(e.type, e.actor) for e in runtime.store.list_plan_events(plan_id)
            if e.type in (PlanEventType.HELD, PlanEventType.RESUMED)]


async def test_the_palettes_hold_and_resume_reach_a_queued_plan_as_its_card_does(open_app, demo_project,
                                                                                holder: LeaseHolder) -> None:
    app, _session, runtime = open_app(max_parallel_plans=AT_WORK)
    ids = seed_board(runtime.store, holder)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        await go_to_plan_on_board(pilot, app, ids.queued)
        await pilot.press("enter")  # on the queued plan's card (h hold): the palette's Hold means this plan
        await until(pilot, lambda: card_of(app, ids.queued) is not None and card_of(app, ids.queued).has_focus,
                    "the queued plan's card, focused")
        other = subprocess.run([sys.executable, "-c", OTHER_HOLDS, str(SUPPORT), str(demo_project), str(ids.queued)],
                               capture_output=True, text=True, timeout=120)
        assert other.stdout.strip() == "held", other.stderr  # another tunaflow held it meanwhile
        await until(pilot, lambda: "on hold" in str(card_of(app, ids.queued).border_title),
                    "its card following the other process", limit=60)

        await run_from_palette(pilot, app, "Resume held plan")  # every slot is still taken: back in the queue
        await until(pilot, lambda: [q.plan_id for q in runtime.queued_plans()] == [ids.queued], "queued again",
                    limit=60)
        await go_to_plan_on_board(pilot, app, ids.queued)
        await until(pilot, lambda: board_group_of(app, ids.queued)[0] == "Queued", "the plan under Queued again")
        await pilot.press("enter")
        await until(pilot, lambda: card_of(app, ids.queued) is not None and card_of(app, ids.queued).has_focus,
                    "its card, queued again and focused")

        await run_from_palette(pilot, app, "Hold plan")
        await until(pilot, lambda: runtime.store.get_plan(ids.queued).phase == "held",  # type: ignore[union-attr]
                    "the queued plan held from the palette", limit=60)
        assert runtime.queued_plans() == (), "out of the queue"
        approval = runtime.store.get_plan(ids.approval)
        assert approval is not None and approval.phase == "approval", "the plan waiting for approval is untouched"
        await until(pilot, lambda: "on hold" in str(card_of(app, ids.queued).border_title), "its card on hold")
        assert _holds_and_resumes(runtime, ids.queued) == [
            (PlanEventType.HELD, "user"), (PlanEventType.RESUMED, "user"), (PlanEventType.HELD, "user")]
