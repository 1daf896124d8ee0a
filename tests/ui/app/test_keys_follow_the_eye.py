"""Keys go where the user looks: a decision key acts only on the card the user can see and that names
it, a card that is superseded gives up the focus to the composer, destructive keys confirm, and a
printable key nothing takes is writing."""

from __future__ import annotations

from pathlib import Path

from app_harness import armed, footers_current, screen_text, settle
from waiting import until

from tunaflow_tui.screens.branch_dialogs import ConfirmBranchScreen
from tunaflow_tui.widgets.composer import ComposerInput
from tunaflow_tui.widgets.decision.done_card import DoneCard
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard


async def _type(pilot, text: str) -> None:
    for key in text:
        await pilot.press("space" if key == " " else key)


async def _plan_one_done(pilot, app, runtime) -> Path:
    await settle(pilot, app)
    app.decision_dock.card_for(1).focus()
    await armed(pilot, app)
    await pilot.press("a")  # plan 1 accepted: done, not merged
    await settle(pilot, app)
    assert isinstance(app.decision_dock.card_for(1), DoneCard)
    first = runtime.store.get_plan(1)
    assert first is not None and first.worktree_path
    return Path(first.worktree_path)


async def test_a_second_plan_never_hands_its_focus_to_the_first_plan_s_done_card(open_app, at_review) -> None:
    app, _controller, runtime = open_app(project=at_review)
    async with app.run_test(size=(120, 40)) as pilot:
        tree = await _plan_one_done(pilot, app, runtime)
        await pilot.press("i")
        await _type(pilot, "add a sentence count")
        await pilot.press("enter")
        await settle(pilot, app)
        focused: list[object] = []
        app.screen.watch(app.screen, "focused", lambda widget: focused.append(widget), init=False)
        await pilot.press("f2")
        await settle(pilot, app)
        await pilot.press("a")  # plan 2 approved: its card goes, the Developer works, the reviewers pass it
        await settle(pilot, app)
        await until(pilot, lambda: isinstance(app.decision_dock.card_for(2), ReviewVerdictCard), "plan 2's verdict")
        done = app.decision_dock.card_for(1)
        assert done not in focused, "plan 1's done card (out of view) took the keys"
        assert not done.has_focus
        await pilot.press("x")  # on plan 2's verdict: abandon asks first; plan 1's worktree is untouched
        await settle(pilot, app)
        assert tree.exists()


async def test_x_on_a_done_card_asks_before_removing_the_worktree(open_app, at_review) -> None:
    app, _controller, runtime = open_app(project=at_review)
    async with app.run_test(size=(120, 40)) as pilot:
        tree = await _plan_one_done(pilot, app, runtime)
        app.decision_dock.card_for(1).focus()
        await armed(pilot, app)
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, ConfirmBranchScreen), "the confirmation")
        assert "Plan 1 “Add a word-frequency report" in app.screen.query_one("#what").render().plain
        await pilot.press("escape")
        await settle(pilot, app)
        assert tree.exists(), "escape removed the worktree"
        app.decision_dock.card_for(1).focus()
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, ConfirmBranchScreen), "the confirmation")
        await pilot.press("y")
        await until(pilot, lambda: not tree.exists(), "the worktree removed once confirmed")


async def test_typing_on_the_done_card_writes_in_the_composer(open_app, at_review) -> None:
    app, _controller, runtime = open_app(project=at_review)
    async with app.run_test(size=(120, 40)) as pilot:
        await _plan_one_done(pilot, app, runtime)
        assert isinstance(app.focused, DoneCard)
        await _type(pilot, "add a sentence count")
        await until(pilot, lambda: app.composer.text == "add a sentence count", "the request in the composer")
        assert isinstance(app.focused, ComposerInput)


async def test_the_footer_names_the_plan_whose_card_has_the_keys(open_app, at_review) -> None:
    app, _controller, _runtime = open_app(project=at_review)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.decision_dock.card_for(1).focus()
        await armed(pilot, app)
        await pilot.pause()
        await until(pilot, lambda: footers_current(app), "the footer")
        footer = screen_text(app).splitlines()[-1]
        assert "Plan 1 · a w d h Decide" in footer, footer
        await pilot.press("i")
        await until(pilot, lambda: footers_current(app) and "Plan 1" not in screen_text(app).splitlines()[-1],
                    "the footer without the card's name once the composer has the keys")


async def test_the_footer_names_no_plan_once_its_card_has_no_keys_left(open_app, at_review) -> None:
    app, _controller, runtime = open_app(project=at_review)
    async with app.run_test(size=(80, 24)) as pilot:
        await _plan_one_done(pilot, app, runtime)
        app.decision_dock.card_for(1).focus()
        await armed(pilot, app)
        await pilot.press("m")  # merged: the done card keeps the focus and has no key left
        await until(pilot, lambda: "Merged into" in screen_text(app), "the merge on the card")
        await until(pilot, lambda: footers_current(app), "the footer")
        assert isinstance(app.focused, DoneCard)
        footer = screen_text(app).splitlines()[-1]
        assert "Plan 1" not in footer, f"the footer names plan 1 before keys that are not its own: {footer}"


async def test_the_abandon_question_names_the_plan_it_abandons(open_app, at_review) -> None:
    from tunaflow_tui.screens.confirm import ConfirmDecisionScreen

    app, _controller, _runtime = open_app(project=at_review)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.decision_dock.card_for(1).focus()
        await armed(pilot, app)
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDecisionScreen), "the confirmation")
        await until(pilot, lambda: "Plan 1 “Add a word-frequency report" in screen_text(app), "the plan named",
                    limit=20)
        await pilot.press("escape")
