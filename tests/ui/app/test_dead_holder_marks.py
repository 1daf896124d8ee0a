"""A plan another process works on loses its ● (working) mark when that process dies, even though the
dying process writes nothing: the sidebar and the board follow the liveness of the lease holder.

The other process is a real one that holds the leases of two seeded plans (a Developer's and the
reviewers'); the test kills it with SIGKILL, as a crash would, and writes nothing to the database.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from app_harness import screen_rows, screen_text, settle
from board_seeds import seed_board
from waiting import until, until_sync

from tunaflow_tui.core.processes import start_ticks
from tunaflow_tui.core.storage.leases import LeaseHolder
from tunaflow_tui.core.workflow import Abandon
from tunaflow_tui.core.workflow.phases import Actor
from tunaflow_tui.screens.workflow import WorkflowScreen
from tunaflow_tui.widgets.workflow_view import PlanList

AT_WORK = 2


@pytest.fixture
def other() -> Iterator[subprocess.Popen[bytes]]:
    """Another live process (it only waits); killed and reaped by the test or at the end."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        until_sync(lambda: start_ticks(proc.pid) is not None, "the other process to start")
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _holder(proc: subprocess.Popen[bytes]) -> LeaseHolder:
    here = LeaseHolder.this_process()
    return LeaseHolder(here.host, here.boot_id, proc.pid, start_ticks(proc.pid))


def _board_row(app, plan_id: int) -> str:  # type: ignore[no-untyped-def]
    plan_list = app.screen.query_one(PlanList)
    region = plan_list.content_region
    for row in screen_rows(app)[region.y:region.bottom]:
        text = row[region.x:region.right].rstrip()
        if f"#{plan_id} " in text:
            return text
    raise AssertionError(f"plan {plan_id} is not on the board:\n{screen_text(app)}")


async def test_the_working_mark_goes_when_the_process_holding_the_plan_dies_without_a_write(
        open_app, demo_project, other: subprocess.Popen[bytes]) -> None:
    app, _session, runtime = open_app(max_parallel_plans=AT_WORK)
    ids = seed_board(runtime.store, _holder(other))
    # the board's queued plan would start here once the slots free, and that write would refresh the screen
    runtime.service.apply(ids.queued, Abandon(reason="not this one"), actor=Actor.USER)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        await until(pilot, lambda: "[dev] ● Count sent" in screen_text(app), "the sidebar's working mark", limit=30)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, WorkflowScreen) and _board_row(app, ids.dev), "the board")
        assert _board_row(app, ids.dev).startswith("●") and _board_row(app, ids.review).startswith("●")
        version = runtime.store.data_version()
        last = max(e.id for p in runtime.store.list_plans() for e in runtime.store.list_plan_events(p.id))

        other.kill()  # a crash: nothing written
        other.wait()
        await until(pilot, lambda: not _board_row(app, ids.dev).startswith("●")
                    and not _board_row(app, ids.review).startswith("●"), "the board's marks gone", limit=30)
        await pilot.press("escape")
        await until(pilot, lambda: "[dev] Count sent" in screen_text(app) or "◆ Count sent" in screen_text(app),
                    "the sidebar's mark gone", limit=30)
        assert "● Count sent" not in screen_text(app) and "● Add a word" not in screen_text(app)
        assert runtime.store.data_version() == version, "no other process wrote to the database meanwhile"
        assert max(e.id for p in runtime.store.list_plans() for e in runtime.store.list_plan_events(p.id)) == last, \
            "nor did this one"
