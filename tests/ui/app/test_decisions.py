"""The gates in the integrated app, on the real runtime with the demo engine: keys on cards and modals."""

from __future__ import annotations

from app_harness import FAILING_REVIEWS, posted, screen_text, send, settle
from app_harness import armed as harness_armed
from waiting import until

from tunaflow_tui.screens.decision_screen import DecisionScreen
from tunaflow_tui.screens.doom_loop import DoomLoopScreen
from tunaflow_tui.screens.feedback import FeedbackScreen
from tunaflow_tui.widgets.decision.done_card import DoneCard
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard

REQUEST = "Add a word frequency report"


async def armed(pilot, app) -> None:
    """Let the moment pass in which a card or question that came up on its own ignores its keys."""
    target = app.screen if isinstance(app.screen, DecisionScreen) else app.focused
    if not target.is_armed:
        await harness_armed(pilot, app)
    assert target.is_armed


async def test_approve_then_accept_reaches_done(open_app) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, REQUEST)
        card = app.focused
        assert isinstance(card, PlanProposalCard) and card.is_pending
        await until(pilot, lambda: "Add a word-frequency report to textstats" in screen_text(app), "Add a word-frequency report to textstats on screen")
        assert "<!--" not in screen_text(app)

        await armed(pilot, app)
        await pilot.press("a")
        await settle(pilot, app)
        assert card.view.decision == "approve"
        verdict = app.focused
        assert isinstance(verdict, ReviewVerdictCard) and verdict.view.verdict == "pass"
        assert "PASS" in screen_text(app) and "Tests: PASSED" in screen_text(app)
        [plan] = runtime.store.list_plans()
        assert [s.status for s in plan.subtasks] == ["done", "done", "done"]

        await armed(pilot, app)
        await pilot.press("a")
        await settle(pilot, app)
        assert runtime.store.list_plans()[0].phase == "done"
        assert isinstance(app.focused, DoneCard)
        await until(pilot, lambda: "ready to merge into main" in screen_text(app), "ready to merge into main on screen")
        await until(pilot, lambda: "[done]" in screen_text(app), "[done] on screen")  # the sidebar's plan badge

        await armed(pilot, app)
        await pilot.press("m")
        await settle(pilot, app)
        assert "def word_frequencies" in (runtime.project_dir / "textstats" / "frequency.py").read_text()
        await until(pilot, lambda: "Merged into main" in screen_text(app), "Merged into main on screen")


async def test_decided_card_ignores_its_keys(open_app) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, REQUEST)
        card = app.focused
        assert isinstance(card, PlanProposalCard)
        await armed(pilot, app)
        await pilot.press("h")
        await settle(pilot, app)
        assert runtime.store.list_plans()[0].phase == "held"
        card = app.decision_dock.card_for(1)  # the plan's card in its held state
        card.focus()
        await harness_armed(pilot, app)
        await pilot.press("h")  # already held: nothing new happens
        await settle(pilot, app)
        held_events = [e for e in runtime.store.list_plan_events(1) if e.type == "held"]
        assert len(held_events) == 1
        assert card.check_action("decide", ("approve",)) is True  # a held plan can still be approved
        await pilot.press("a")
        await settle(pilot, app)
        plan = runtime.store.list_plans()[0]
        assert plan.pending_decision == "review"
        card.focus()
        await pilot.press("r")
        await pilot.pause()
        assert not isinstance(app.screen, FeedbackScreen)  # approved: the card's keys are off
        assert card.check_action("request_revision", ()) is False


async def test_revise_with_feedback_brings_a_revised_card(open_app) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, REQUEST)
        await armed(pilot, app)
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, FeedbackScreen)
        app.screen.query_one("TextArea").load_text("Please keep the report to three words.")
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        card = app.focused
        assert isinstance(card, PlanProposalCard) and card.is_pending
        assert card.view.revision == 2
        await until(pilot, lambda: "revision 2" in screen_text(app), "revision 2 on screen")
        events = [e.type for e in runtime.store.list_plan_events(1)]
        assert "revision_requested" in events


async def test_rework_after_a_failed_review_then_pass(open_app) -> None:
    app, _controller, runtime = open_app(fail_reviews=1)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, REQUEST)
        await armed(pilot, app)
        await pilot.press("a")
        await settle(pilot, app)
        verdict = app.focused
        assert isinstance(verdict, ReviewVerdictCard) and verdict.view.verdict == "fail"
        await until(pilot, lambda: "FAIL" in screen_text(app), "FAIL on screen")
        await armed(pilot, app)
        await pilot.press("w")
        await settle(pilot, app)
        again = app.focused
        assert isinstance(again, ReviewVerdictCard)
        assert again.view.round_no == 2 and again.view.verdict == "pass"
        assert runtime.store.list_plans()[0].phase == "review"


async def test_redesign_from_the_verdict_goes_back_to_the_architect(open_app) -> None:
    app, _controller, runtime = open_app(fail_reviews=1)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, REQUEST)
        await armed(pilot, app)
        await pilot.press("a")
        await settle(pilot, app)
        await armed(pilot, app)
        await pilot.press("d")
        await settle(pilot, app)
        card = app.focused
        assert isinstance(card, PlanProposalCard) and card.is_pending
        assert card.view.revision == 2
        assert runtime.store.list_plans()[0].phase == "approval"


async def test_doom_loop_modal_after_three_failed_reviews(open_app, at_second_failure) -> None:
    # two reviews failed already, with a rework between them (seeded: those turns ran once, headless)
    app, _controller, runtime = open_app(project=at_second_failure, fail_reviews=FAILING_REVIEWS)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("f2")
        await settle(pilot, app)
        verdict = app.focused
        assert isinstance(verdict, ReviewVerdictCard)
        assert (verdict.view.round_no, verdict.view.verdict) == (2, "fail")
        await armed(pilot, app)
        await pilot.press("w")  # the third round fails too
        await settle(pilot, app)
        assert isinstance(app.screen, DoomLoopScreen)
        text = screen_text(app)
        assert "Review keeps failing" in text and "Round 3 · FAIL" in text
        assert "Plan 1 · Review keeps failing" in text, "the question names the plan it decides on"
        await pilot.press("escape")  # decide later …
        await pilot.pause()
        assert not isinstance(app.screen, DoomLoopScreen)
        await pilot.press("f2")  # … and come back to it
        await settle(pilot, app)
        assert isinstance(app.screen, DoomLoopScreen)
        await pilot.press("r")
        await settle(pilot, app)
        card = app.focused
        assert isinstance(card, PlanProposalCard) and card.is_pending
        assert runtime.store.list_plans()[0].phase == "approval"


async def test_jump_key_focuses_the_pending_card_from_the_composer(open_app) -> None:
    app, _controller, _runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        assert "Nothing is waiting for you." in [n.message for n in posted(app)]
        await send(pilot, app, REQUEST)
        app.composer.focus_input()
        await pilot.press("ctrl+g")
        await settle(pilot, app)
        assert isinstance(app.focused, PlanProposalCard)
