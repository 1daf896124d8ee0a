"""Progress you can trust: a line per running agent — each review seat its own — and one for the test
run, each with its elapsed time; what stops leaves at once, and no toast outlives the agent it was about."""

from __future__ import annotations

import asyncio

import pytest
from app_harness import notifications, refreshes_of, screen_text, settle
from hand_clock import HandClock
from seeded_plans import PLAN_TITLE, with_branches
from waiting import until

from tunaflow_tui.controllers import status_controller
from tunaflow_tui.core.workflow.service import WorkflowService
from tunaflow_tui.runtime.events import MessageFinished, MessageStarted, ProjectTestsRunning


def _status_lines(app) -> list[str]:
    line = app.query_one("#status-line")
    return [text.strip() for text in str(line.content).splitlines() if text.strip()] if line.display else []


LIMIT_S = 5.0
"""How long a status line may take to show what it should (its ticks are driven by a hand clock)."""


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_each_seat_and_the_test_run_have_a_line_with_elapsed_time(open_app, monkeypatch, size) -> None:
    clock = HandClock()
    monkeypatch.setattr(status_controller, "now", clock)
    app, controller, runtime = open_app()
    store = runtime.store
    plan = WorkflowService(store).create_plan_from_proposal(title=PLAN_TITLE, slug="word-frequency",
                                                           subtasks=[("Count words", "")])
    _impl, review = with_branches(store, plan.id, "word-frequency")
    seats = f"branch:{review}"
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        gate = asyncio.Event()
        controller.workers.run_agent(gate.wait(), "review")  # the review round at work
        runtime.emit(ProjectTestsRunning(plan.id, "python -m pytest -q", running=True))
        await until(pilot, lambda: _status_lines(app) == ["⟳ tests: python -m pytest -q 0s"], "the test run's line at 0s", limit=LIMIT_S)
        clock.advance(3)
        await until(pilot, lambda: _status_lines(app) == ["⟳ tests: python -m pytest -q 3s"], "the test run's line at 3s", limit=LIMIT_S)  # it ticks
        runtime.emit(ProjectTestsRunning(plan.id, "python -m pytest -q", running=False))
        ids = [store.add_message(seats, "assistant", "", persona=role, engine=engine, status="streaming").id
               for role, engine in (("reviewer", "claude"), ("verifier", "codex"))]
        runtime.emit(MessageStarted(seats, ids[0], "reviewer", "claude", ""))
        runtime.emit(MessageStarted(seats, ids[1], "verifier", "codex", ""))
        await until(pilot, lambda: len(_status_lines(app)) == 2, "two status lines", limit=LIMIT_S)
        clock.advance(12)
        await until(pilot, lambda: "12s" in screen_text(app), "12s on screen", limit=LIMIT_S)
        assert _status_lines(app) == ["⟳ reviewer (claude) is working… 12s — f6 shows it live",
                                      "⟳ verifier (codex) is working… 12s — f6 shows it live"]
        await until(pilot, lambda: "⟳ verifier (codex) is working… 12s" in screen_text(app),
                    "the verifier's line on screen", limit=LIMIT_S)
        store.update_message(ids[0], status="done")
        runtime.emit(MessageFinished(seats, ids[0], "done"))
        await until(pilot, lambda: len(_status_lines(app)) == 1, "one status line", limit=LIMIT_S)
        assert _status_lines(app) == ["⟳ verifier (codex) is working… 12s — f6 shows it live"]
        store.update_message(ids[1], status="done")
        runtime.emit(MessageFinished(seats, ids[1], "done"))
        gate.set()
        await settle(pilot, app)
        assert "is working" not in screen_text(app) and "shows it live" not in screen_text(app)
        assert not [n for n in notifications(app) if "working in a branch" in n.message]


@pytest.mark.parametrize(("seconds", "shown"), [(0, "0s"), (59.9, "59s"), (65, "1m 05s"), (3725, "1h 02m")])
def test_elapsed_time_reads_short(seconds: float, shown: str) -> None:
    assert status_controller.elapsed(seconds) == shown


async def test_a_tick_redraws_the_status_line_and_only_a_new_line_lays_the_screen_out(open_app, monkeypatch) -> None:
    # a layout redoes the whole screen (a key typed meanwhile waits for it): the seconds ticking must not
    # (two plans are in flight: each test run's line names its plan)
    clock = HandClock()
    monkeypatch.setattr(status_controller, "now", clock)
    app, controller, runtime = open_app()
    service = WorkflowService(runtime.store)
    first, second = (service.create_plan_from_proposal(title=f"{PLAN_TITLE} {n}", slug=f"plan-{n}",
                                                       subtasks=[("Count words", "")]) for n in (1, 2))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        gate = asyncio.Event()
        controller.workers.run_agent(gate.wait(), "review")  # the review round at work
        runtime.emit(ProjectTestsRunning(first.id, "python -m pytest -q", running=True))
        await until(pilot, lambda: f"⟳ plan {first.id}: tests: python -m pytest -q 0s" in screen_text(app), "the test run's line at 0s on screen", limit=LIMIT_S)
        line = app.query_one("#status-line")
        layouts = refreshes_of(line, monkeypatch)
        clock.advance(3)
        await until(pilot, lambda: f"⟳ plan {first.id}: tests: python -m pytest -q 3s" in screen_text(app), "the test run's line at 3s on screen", limit=LIMIT_S)
        assert layouts and not any(layouts)
        runtime.emit(ProjectTestsRunning(second.id, "make check", running=True))  # a second line: the status grows
        await until(pilot, lambda: f"⟳ plan {second.id}: tests: make check 0s" in screen_text(app), "the second test run's line on screen", limit=LIMIT_S)
        assert any(layouts) and line.size.height == 2
        await until(pilot, lambda: f"⟳ plan {first.id}: tests: python -m pytest -q 3s" in screen_text(app),
                    "the first test run's line still on screen", limit=LIMIT_S)
        gate.set()
