"""Honest gates in the app: deliberate acts are confirmed in the words of their way on, the record and
the cards say what happened, a held plan and a review to start are reachable by f2, and the plan the
user edits is the plan that is approved and written down."""

from __future__ import annotations

from pathlib import Path

from app_harness import notifications, screen_text, settle
from waiting import until

from tunaflow_tui.core.workflow import (
    Actor,
    Approve,
    Command,
    DevStalled,
    Hold,
    ImplementationReported,
    ProposalReceived,
    ReviewFinished,
    ReviewStarted,
    SeatResult,
    aggregate,
)
from tunaflow_tui.screens.confirm import ConfirmDecisionScreen
from tunaflow_tui.screens.decision_screen import DecisionScreen
from tunaflow_tui.screens.proposal_editor import ProposalEditorScreen
from tunaflow_tui.widgets.decision.done_card import DoneCard
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard
from tunaflow_tui.widgets.decision.way_card import WayCard

SUBTASKS = (("Count words", "in textstats/frequency.py"), ("Test the counts", "tests/test_frequency.py"))


def _seat(name: str, verdict: str | None) -> SeatResult:
    return SeatResult(seat=name, engine="demo", verdict=verdict,  # type: ignore[arg-type]
                      error=None if verdict else "exited with code 1: 401 Unauthorized", findings=("findings",))


def seed(runtime, *commands: Command, title: str = "Add a word frequency report") -> int:
    """A plan brought to a state through the workflow service, as the runtime would have written it."""
    plan = runtime.store.create_plan(title=title, slug="word-frequency", phase="chat", subtasks=SUBTASKS,
                                     description="Report the most frequent words.",
                                     expected_outcome="textstats prints the top words.")
    for command in commands:
        actor = Actor.USER if Actor.USER in type(command).actors else Actor.AGENT
        runtime.service.apply(plan.id, command, actor=actor)
    return plan.id


REVIEWED = (ProposalReceived(2), Approve(), ImplementationReported(), ReviewStarted())


async def _f2(pilot, app) -> None:
    await pilot.press("f2")
    await settle(pilot, app)


def _events(runtime, plan_id: int) -> list[str]:
    return [e.type for e in runtime.store.list_plan_events(plan_id)]


async def test_an_incomplete_review_says_1_of_2_seats_and_is_accepted_only_when_confirmed(open_app) -> None:
    app, _session, runtime = open_app()
    plan_id = seed(runtime, *REVIEWED, ReviewFinished(aggregate([_seat("reviewer", "pass"), _seat("verifier", None)])))
    async with app.run_test(size=(120, 40)) as pilot:
        await _f2(pilot, app)
        card = app.focused
        assert isinstance(card, ReviewVerdictCard)
        await until(pilot, lambda: "1 of 2 seats" in screen_text(app), "1 of 2 seats on screen")
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDecisionScreen)
        await until(pilot, lambda: "only 1 of 2 seats answered" in screen_text(app), "only 1 of 2 seats answered on screen")
        await pilot.press("escape")  # not confirmed: nothing happens
        await settle(pilot, app)
        assert runtime.get_plan(plan_id).phase == "review" and card.view.decision is None
        await pilot.press("a")
        await pilot.pause()
        await pilot.press(*"one pass is enough", "enter")
        await settle(pilot, app)
        assert runtime.get_plan(plan_id).phase == "done"
        assert "accepted_partial_review" in _events(runtime, plan_id) and "accepted" not in _events(runtime, plan_id)
        done = app.decision_dock.card_for(plan_id)
        assert isinstance(done, DoneCard)
        await until(pilot, lambda: "accepted with an incomplete review (1 of 2 seats)" in screen_text(app), "accepted with an incomplete review (1 of 2 seats) on screen")
        assert f"✔ Plan {plan_id} done" not in screen_text(app)


async def test_accepting_a_failed_review_is_an_override_that_is_confirmed_and_said(open_app) -> None:
    app, _session, runtime = open_app()
    plan_id = seed(runtime, *REVIEWED, ReviewFinished(aggregate([_seat("reviewer", "fail"), _seat("verifier", "pass")])))
    async with app.run_test(size=(120, 40)) as pilot:
        await _f2(pilot, app)
        assert isinstance(app.focused, ReviewVerdictCard)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDecisionScreen)
        await until(pilot, lambda: "the reviewers did not pass this work" in screen_text(app), "the reviewers did not pass this work on screen")
        assert runtime.get_plan(plan_id).phase == "review", "nothing is accepted before the confirmation"
        await pilot.press("enter")
        await settle(pilot, app)
        assert runtime.get_plan(plan_id).phase == "done"
        assert "accepted_over_failed_review" in _events(runtime, plan_id)
        said = f"⚠ Plan {plan_id} done — accepted over a failed review"  # the card names its plan
        await until(pilot, lambda: said in screen_text(app), f"{said} on screen")
        assert f"✔ Plan {plan_id} done" not in screen_text(app)


async def test_abandoning_after_the_developer_stopped_is_confirmed_and_the_card_says_abandoned(open_app) -> None:
    app, session, runtime = open_app()
    plan_id = seed(runtime, ProposalReceived(2))
    async with app.run_test(size=(120, 40)) as pilot:
        await _f2(pilot, app)
        assert isinstance(app.focused, PlanProposalCard)
        # approved, and the Developer stopped without finishing
        runtime.service.apply(plan_id, Approve(), actor=Actor.USER)
        runtime.service.apply(plan_id, DevStalled("stopped"), actor=Actor.AGENT)
        await session.decisions.plan_changed(runtime.get_plan(plan_id))
        await settle(pilot, app)
        assert app.decision_dock.card_for(plan_id).view.decision == "approve"
        assert isinstance(app.screen, DecisionScreen) and "The Developer stopped" in screen_text(app)
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDecisionScreen)
        await until(pilot, lambda: "Abandon the plan: it stops here for good" in screen_text(app), "Abandon the plan: it stops here for good on screen")
        await pilot.press(*"wrong idea", "enter")
        await settle(pilot, app)
        assert runtime.get_plan(plan_id).phase == "abandoned"
        [event] = [e for e in runtime.store.list_plan_events(plan_id) if e.type == "abandoned"]
        assert event.detail["reason"] == "wrong idea"
        card = app.decision_dock.card_for(plan_id)
        assert isinstance(card, PlanProposalCard)
        assert card.view.decision == "abandon"
        assert "abandoned" in screen_text(app) and "approved" not in screen_text(app)


async def test_a_held_plan_is_reached_by_f2_and_shows_its_whole_proposal(open_app) -> None:
    app, _session, runtime = open_app()
    plan_id = seed(runtime, ProposalReceived(2), Hold())
    async with app.run_test(size=(120, 40)) as pilot:
        await _f2(pilot, app)
        assert not any("Nothing is waiting" in n.message for n in notifications(app))
        card = app.focused
        assert isinstance(card, PlanProposalCard) and card.view.plan_id == plan_id
        text = screen_text(app)
        for shown in ("Add a word frequency report", "Count words", "Test the counts",
                      "Report the most frequent words.", "textstats prints the top words."):
            assert shown in text, shown
        await pilot.press("a")
        await settle(pilot, app)
        assert "approved" in _events(runtime, plan_id)


async def test_with_automatic_review_off_the_review_is_started_from_its_card(open_app) -> None:
    app, _session, runtime = open_app(auto_review=False)
    plan_id = seed(runtime, ProposalReceived(2), Approve(), ImplementationReported())
    async with app.run_test(size=(120, 40)) as pilot:
        await _f2(pilot, app)
        card = app.focused
        assert isinstance(card, WayCard) and card.view.plan_id == plan_id
        await until(pilot, lambda: "s start review" in screen_text(app), "s start review on screen")
        await pilot.press("s")
        await settle(pilot, app)
        plan = runtime.get_plan(plan_id)
        assert plan.pending_decision == "review" and "review_started" in _events(runtime, plan_id)


EDITED = """# Word frequency report

## Subtasks
1. Test the counts
   tests/test_frequency.py, including an empty text
2. Count words with collections.Counter
3. Print the top ten words

## Description
Report the most frequent words.

## Expected outcome
textstats prints the top ten words.
"""


async def test_the_edited_plan_is_approved_and_written_to_the_plan_documents(open_app) -> None:
    app, _session, runtime = open_app()
    plan_id = seed(runtime, ProposalReceived(2))
    async with app.run_test(size=(120, 40)) as pilot:
        await _f2(pilot, app)
        assert isinstance(app.focused, PlanProposalCard)
        await pilot.press("e")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, ProposalEditorScreen)
        assert "1. Count words" in editor.text
        broken = "# Word frequency report\nstray words before any heading\n"
        editor.query_one("TextArea").load_text(broken)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is editor, "a text that cannot be read is not saved"
        assert "line 2:" in screen_text(app) and editor.text == broken
        editor.query_one("TextArea").load_text(EDITED)
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        card = app.focused
        assert isinstance(card, PlanProposalCard) and card.is_pending
        await until(pilot, lambda: "Print the top ten words" in screen_text(app), "Print the top ten words on screen")
        assert "plan_edited" in _events(runtime, plan_id) and "approved" not in _events(runtime, plan_id)
        await pilot.press("a")
        await settle(pilot, app)
        plan = runtime.get_plan(plan_id)
        root = Path(plan.worktree_path or runtime.project_dir) / "docs" / "plans"
        assert "# Word frequency report" in (root / f"{plan.slug}.md").read_text()
        assert "Print the top ten words" in (root / f"{plan.slug}-task-03.md").read_text()
        assert _events(runtime, plan_id)[:3] == ["proposal_received", "plan_edited", "approved"]


async def test_help_and_panes_promise_only_what_works(open_app) -> None:
    app, _session, _runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "Roundtables" not in screen_text(app)
        await pilot.press("f1")
        await pilot.pause()
        from tunaflow_tui.screens.help import help_markdown

        text = help_markdown(app.screen.sections)
        for works in ("`message.branch`", "`branch.adopt`", "Next branch"):
            assert works in text, works  # branches are forked and adopted from the app
        assert "edit the plan first" in text
    from tunaflow_tui.widgets.branch_pane import EMPTY_TEXT

    assert "roundtable" not in EMPTY_TEXT.lower()


async def test_the_palette_takes_the_same_deliberate_acts_with_the_same_confirmation(open_app) -> None:
    from tunaflow_tui.core.workflow import Decision

    app, session, runtime = open_app()
    plan_id = seed(runtime, *REVIEWED, ReviewFinished(aggregate([_seat("reviewer", "fail"), _seat("verifier", "pass")])))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        session.decisions.decide_by_name(Decision.ACCEPT)  # a plain accept: no plan offers it
        await settle(pilot, app)
        assert any("No plan waits for “Accept”" in n.message for n in notifications(app))
        session.decisions.decide_by_name(Decision.ACCEPT_OVERRIDE)
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmDecisionScreen)
        await pilot.press("escape")
        await settle(pilot, app)
        assert runtime.get_plan(plan_id).phase == "review" and "accepted_over_failed_review" not in _events(
            runtime, plan_id)
