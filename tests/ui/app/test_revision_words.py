"""The Architect's words agree with the card: the revision it writes is the card's, and a redesign
chosen over a passing review never says the implementation failed."""

from __future__ import annotations

import re

import pytest
from app_harness import armed, screen_text, settle
from seeded_plans import reviewed, seat
from waiting import until

from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.runtime import role_prompts
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_redesign_after_a_pass_names_the_cards_revision_and_no_failure(open_app, size) -> None:
    app, controller, runtime = open_app()
    plan_id = reviewed(runtime.store, [seat("reviewer", "pass"), seat("verifier", "pass")])
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        controller.decisions.decide(plan_id, Decision.REDESIGN, feedback="use collections.Counter")
        await settle(pilot, app)
        [card] = [c for c in app.query(PlanProposalCard) if c.view.plan_id == plan_id]
        assert card.view.revision == 2
        await armed(pilot, app)
        await until(pilot, lambda: "revision 2" in screen_text(app), "revision 2 on screen")
        reply = [m for m in runtime.store.list_messages("main") if m.role == "assistant"][-1].content
        assert re.findall(r"Revision (\d+)", reply) == ["2", "2"]  # the intro and the constraint it adds
        assert "use collections.Counter" in reply
        assert "failed" not in reply.lower()


def test_the_redesign_prompt_says_what_the_review_said(open_app) -> None:
    _app, _controller, runtime = open_app()
    plan_id = reviewed(runtime.store, [seat("reviewer", "pass")])
    plan = runtime.store.get_plan(plan_id)
    passed = role_prompts.redesign_prompt(plan, [], "", "pass")
    assert "failed" not in passed and "passed review" in passed and "as revision 1" in passed
    failed = role_prompts.redesign_prompt(plan, ["no tests"], "", "fail")
    assert "the implementation failed review" in failed and "- no tests" in failed
    assert "as revision 1" in role_prompts.revision_prompt(plan, "shorter")
