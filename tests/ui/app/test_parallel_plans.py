"""Several plans at once, from the app: the user approves plan A, keeps talking to the Architect while A's
Developer works, approves plan B, whose Developer starts at once; both reach review and their verdicts,
and every decision is taken through f2 and the card's keys.

The agents are the demo engine with a hand brake (``holding_engine``): a Developer stops mid-answer
until the test lets it go on, so "A still works while B starts" is a state the test holds, not a race.
"""

from __future__ import annotations

import pytest
from app_harness import armed, screen_text
from holding_engine import holding_factory
from waiting import until

from tunaflow_tui.widgets.decision.decision_card import DecisionCard
from tunaflow_tui.widgets.decision.decision_dock import card_plan_id

ASKS = ("Now plan a sentence count report", "And plan a line length report")
"""What the user asks the Architect for while the first plan's Developer works."""


def _focused_plan(app) -> int | None:
    focused = app.focused
    return card_plan_id(focused) if isinstance(focused, DecisionCard) else None


def _writing_developers(engine) -> int:
    """How many Developer turns are mid-answer, held by the hand brake (none before the engine's first turn)."""
    try:
        made = engine()
    except IndexError:
        return 0
    return sum(1 for turn in made.turns if turn.waiting and turn.request.role == "developer")


async def _decide_with_f2(pilot, app, plan_id: int, key: str) -> None:
    """Walk the queue with f2 until the plan's card has the keys, then press ``key`` on it."""
    for _press in range(8):
        if _focused_plan(app) == plan_id:
            break
        before = _focused_plan(app)
        await pilot.press("f2")
        await until(pilot, lambda before=before: _focused_plan(app) not in (None, before), "f2 to reach the next card")
    assert _focused_plan(app) == plan_id, f"f2 never reached plan {plan_id}"
    await armed(pilot, app)
    await pilot.press(key)


async def _ask_architect(pilot, app, runtime, text: str) -> None:
    app.composer.focus_input()
    app.composer.input.load_text(text)
    await pilot.press("enter")

    def answered() -> bool:
        main = runtime.store.list_messages("main")
        return main[-1].role == "assistant" and main[-1].status == "done" and main[-2].content == text

    await until(pilot, answered, "the Architect's answer in the main chat")


@pytest.mark.parametrize("plans", [pytest.param(2, id="two-plans"), pytest.param(3, id="three-plans")])
async def test_plans_develop_in_parallel_from_the_app(open_app, at_approval, plans) -> None:
    factory, engine = holding_factory("developer")
    app, _controller, runtime = open_app(engine_factory=factory)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.decision_dock.card_for(1) is not None, "plan A's proposal card")
        [first] = runtime.store.list_plans()
        await _decide_with_f2(pilot, app, first.id, "a")
        await until(pilot, lambda: _writing_developers(engine) == 1, "A's Developer writing")

        approved = [first.id]
        for number, ask in enumerate(ASKS[: plans - 1], start=2):
            await _ask_architect(pilot, app, runtime, ask)  # while the Developers already approved work
            assert _writing_developers(engine) == len(approved), "a Developer finished while held"

            def proposed() -> list:
                return [p for p in runtime.store.list_plans() if p.pending_decision == "approval"]

            await until(pilot, proposed, "the Architect's proposal stored as a plan")
            [proposal] = proposed()
            assert proposal.id not in approved, "the proposal revised a plan in flight instead of starting one"
            await _decide_with_f2(pilot, app, proposal.id, "a")
            approved.append(proposal.id)
            await until(pilot, lambda n=number: _writing_developers(engine) == n,
                        f"{number} Developers writing at once")
            assert all(runtime.store.get_plan(p).phase == "dev" for p in approved), "a plan left dev while held"

        trees = {runtime.store.get_plan(p).worktree_path for p in approved}
        assert len(trees) == plans and None not in trees, "each plan works in its own worktree"

        engine().release()  # every Developer finishes; each plan's tests and review run on their own
        await until(pilot, lambda: all(runtime.store.get_plan(p).pending_decision == "review" for p in approved),
                    "every plan's review verdict")
        for plan_id in approved:
            await until(pilot, lambda p=plan_id: app.decision_dock.card_for(p) is not None
                        and app.decision_dock.card_for(p).DOCK_KIND == "verdict", f"plan {plan_id}'s verdict card")
        assert f"{plans} decisions waiting" in app.decision_dock.hint_text()[0]

        for plan_id in approved:  # accepted one after the other, each reached with f2
            await _decide_with_f2(pilot, app, plan_id, "a")
            await until(pilot, lambda p=plan_id: runtime.store.get_plan(p).phase == "done", f"plan {plan_id} done")
        assert "decisions waiting" not in screen_text(app)
