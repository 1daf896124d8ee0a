"""A failed worktree setup in the integrated app: the question comes up, skip / retry / shell answer it."""

from __future__ import annotations

from app_harness import posted, screen_text, settle
from waiting import until

from tunaflow_tui.screens.worktree_setup_screen import WorktreeSetupScreen
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard

REQUEST = "Add a word frequency report"
FAILING_SETUP = "echo 'npm ERR! missing token' >&2; exit 3"


async def _armed(pilot, target) -> None:
    await until(pilot, lambda: target.is_armed, "the decision keys arming")


async def _setup_failed(pilot, app):
    # the app is open on the Architect's proposal (``at_approval``); the user goes to its card
    await settle(pilot, app)
    await pilot.press("f2")
    await settle(pilot, app)
    card = app.focused
    assert isinstance(card, PlanProposalCard)
    await _armed(pilot, card)
    await pilot.press("a")
    await settle(pilot, app)
    screen = app.screen
    assert isinstance(screen, WorktreeSetupScreen)
    await _armed(pilot, screen)
    return screen


async def test_failed_setup_asks_and_skip_starts_the_developer(open_app, at_approval) -> None:
    app, _controller, runtime = open_app(worktree_setup=FAILING_SETUP)
    async with app.run_test(size=(120, 40)) as pilot:
        await _setup_failed(pilot, app)
        text = screen_text(app)
        assert "Worktree setup failed" in text and "npm ERR! missing token" in text
        [plan] = runtime.store.list_plans()
        assert plan.pending_decision == "setup_failed" and plan.phase == "dev"
        assert not [m for m in runtime.store.list_messages(f"branch:{plan.impl_branch_id}") if m.role == "assistant"]
        await pilot.press("s")
        await settle(pilot, app)
        assert not isinstance(app.screen, WorktreeSetupScreen)
        verdict = app.focused
        assert isinstance(verdict, ReviewVerdictCard) and verdict.view.verdict == "pass"
        await until(pilot, lambda: "Ran with: tunaflow's own Python" in screen_text(app), "Ran with: tunaflow's own Python on screen")


async def test_escape_leaves_it_for_later_and_f2_brings_it_back(open_app, at_approval) -> None:
    app, _controller, runtime = open_app(worktree_setup=FAILING_SETUP)
    async with app.run_test(size=(120, 40)) as pilot:
        await _setup_failed(pilot, app)
        await pilot.press("escape")
        await settle(pilot, app)
        assert not isinstance(app.screen, WorktreeSetupScreen)
        await pilot.press("f2")
        await settle(pilot, app)
        assert isinstance(app.screen, WorktreeSetupScreen)
        assert runtime.store.list_plans()[0].pending_decision == "setup_failed"


async def test_open_a_shell_where_there_is_no_terminal_to_hand_over_says_so_and_asks_again(open_app, at_approval) -> None:
    app, _controller, runtime = open_app(worktree_setup=FAILING_SETUP)
    async with app.run_test(size=(120, 40)) as pilot:
        first = await _setup_failed(pilot, app)
        await pilot.press("o")
        await settle(pilot, app)
        assert any("Cannot open a shell here" in n.message for n in posted(app))
        assert isinstance(app.screen, WorktreeSetupScreen) and app.screen is not first
        assert runtime.store.list_plans()[0].pending_decision == "setup_failed", "nothing was decided"
