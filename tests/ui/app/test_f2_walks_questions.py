"""f2 walks every plan's pending decision and every agent's open permission question in one queue,
oldest first, one per press, round again after the last.

The plan waits at approval (seeded); the questions are asked through the runtime's permission desk,
as an ACP engine asks them during a turn (the agent itself is the edge a test stands in for).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from app_harness import settle
from waiting import until

from tunaflow_tui.agents.permissions import PermissionAnswer, PermissionRequest
from tunaflow_tui.widgets.decision.decision_dock import card_plan_id
from tunaflow_tui.widgets.permission.permission_card import PermissionCard


def _request(title: str, path: Path) -> PermissionRequest:
    return PermissionRequest(engine="claude-acp", role="architect", session_id="s1", tool_call_id=title,
                             title=title, kind="edit", paths=(str(path),))


def _on(app: Any) -> str:
    """What has the keys: ``plan N``, ``question <title>``, or what else is focused."""
    focused = app.focused
    card = next((n for n in focused.ancestors_with_self if isinstance(n, PermissionCard)), None) if focused else None
    if card is not None:
        return f"question {card.view.title}"
    decision = app.decision_dock.focused_card()
    if decision is not None:
        return f"plan {card_plan_id(decision)}"
    return type(focused).__name__


async def test_f2_walks_decisions_and_permission_questions_together_oldest_first(open_app, demo_project) -> None:
    app, _session, runtime = open_app()
    plan = runtime.service.create_plan_from_proposal(title="Add mul", slug="add-mul", subtasks=[("Mul", "")])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        conversation = app.conversation_id
        asks = [asyncio.create_task(runtime.permissions.ask(conversation, _request("Write a.txt", demo_project / "a")))]
        await until(pilot, lambda: len(app.query(PermissionCard)) == 1, "the first question's card")
        asks.append(asyncio.create_task(runtime.permissions.ask(conversation, _request("Write b.txt",
                                                                                       demo_project / "b"))))
        await until(pilot, lambda: len(app.query(PermissionCard)) == 2, "the second question's card")
        app.composer.focus_input()
        await until(pilot, lambda: _on(app) not in (f"plan {plan.id}", "question Write a.txt"), "keys elsewhere")
        walked = []
        for _ in range(4):
            before = _on(app)
            await pilot.press("f2")
            await until(pilot, lambda: _on(app) != before, "f2 to move the keys", limit=30)  # noqa: B023
            walked.append(_on(app))
        assert walked == [f"plan {plan.id}", "question Write a.txt", "question Write b.txt", f"plan {plan.id}"]
        for ask in asks:
            ask.cancel()


def _dock_line(app: Any) -> str:
    """The decision dock's line of keys, whole (before it is cut to the width it is drawn at)."""
    hint = app.decision_dock.query_one("#dock-hint")
    return str(hint.text) if hint.display else ""


async def test_the_docks_line_names_the_question_f2_reaches_before_a_newer_plan(open_app, demo_project) -> None:
    app, _session, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        ask = asyncio.create_task(runtime.permissions.ask(app.conversation_id, _request("Write a.txt",
                                                                                        demo_project / "a")))
        await until(pilot, lambda: len(app.query(PermissionCard)) == 1, "the question's card")
        plan = runtime.service.create_plan_from_proposal(title="Add mul", slug="add-mul", subtasks=[("Mul", "")])
        runtime.plan_changed(plan)  # as the runtime announces a new proposal
        await until(pilot, lambda: app.decision_dock.card_for(plan.id) is not None, "the plan's card")
        app.composer.focus_input()
        await until(pilot, lambda: _on(app) not in (f"plan {plan.id}", "question Write a.txt"), "keys elsewhere")
        expected = (f"2 decisions waiting — f2 focuses the Architect's question, then walks on, oldest first: "
                    f"the Architect's question, Plan {plan.id}")
        await until(pilot, lambda: _dock_line(app) == expected, f"the dock's line to say {expected!r}")

        await pilot.press("f2")  # the line named what f2 reaches
        await until(pilot, lambda: _on(app) == "question Write a.txt", "f2 on the question")
        await until(pilot, lambda: f"f2 moves on to Plan {plan.id}" in _dock_line(app), "the line naming the plan next")
        await pilot.press("f2")
        await until(pilot, lambda: _on(app) == f"plan {plan.id}", "f2 on the plan")

        await pilot.press("f2")  # round again, to the question: denied, it leaves the queue
        await until(pilot, lambda: _on(app) == "question Write a.txt", "f2 on the question again")
        await pilot.press("d")
        assert await asyncio.wait_for(ask, 30) is PermissionAnswer.DENY
        await until(pilot, lambda: _dock_line(app).startswith(f"Plan {plan.id} waiting"),
                    "the line back to the plan alone once the question is answered")
