"""A plain message's answer that proposes a plan titled as one waiting for approval: a new plan beside it. Only
the user sends a plan back from its gate — `r` on its card, or a message pointed at it with `#N`.

The waiting plan comes from the approval template (the demo Architect's proposal, its turn run once headless);
the demo Architect proposes the same title again to any message.
"""

from __future__ import annotations

import pytest
from app_harness import quiet, screen_text, send, settle
from waiting import until

from tunaflow_tui.agents.demo import sample
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard


def _cards(app) -> list[tuple[int | None, int, str | None]]:  # type: ignore[no-untyped-def]
    """(plan, revision, decision) of every proposal card in the dock, oldest first."""
    return [(card.view.plan_id, card.view.revision, card.view.decision) for card in app.query(PlanProposalCard)]


async def test_a_plain_messages_proposal_with_a_waiting_plans_title_is_a_new_plan(open_app, at_approval) -> None:
    app, _session, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        [waiting] = runtime.store.list_plans()
        assert waiting.title == sample.PLAN_TITLE and waiting.pending_decision == "approval"
        before = [e.type for e in runtime.store.list_plan_events(waiting.id)]

        await send(pilot, app, "Could the report also count sentences?")  # a plain message: no #N, no r
        await until(pilot, lambda: len(runtime.store.list_plans()) == 2, "the answer's proposal as a plan")
        first, second = runtime.store.list_plans()
        assert first.id == waiting.id and (first.revision, first.pending_decision) == (0, "approval")
        assert [e.type for e in runtime.store.list_plan_events(waiting.id)] == before, "nothing sent it back"
        assert second.title == sample.PLAN_TITLE and second.pending_decision == "approval"
        await until(pilot, lambda: [plan for plan, _revision, decision in _cards(app) if decision is None]
                    == [first.id, second.id], "both proposals waiting on their cards")
        await until(pilot, lambda: f"Plan {second.id} proposal" in screen_text(app), "the new plan's card")


@pytest.fixture
def snap_app(steady_app):
    return steady_app("tunaflow-plain-message-snapshots")


async def _two_proposals(pilot) -> None:
    await send(pilot, pilot.app, "Add a word frequency report")
    await quiet(pilot)
    await send(pilot, pilot.app, "Could the report also count sentences?")
    await quiet(pilot)


@pytest.mark.parametrize("size", [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")])
def test_snapshot_a_plain_messages_proposal_beside_the_waiting_plan(snap_compare, snap_app, size) -> None:
    assert snap_compare(snap_app, terminal_size=size, run_before=_two_proposals)
