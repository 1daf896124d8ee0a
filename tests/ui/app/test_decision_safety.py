"""A decision card or question never acts on keys typed for something else.

The real runtime with the demo engine: the user keeps typing while a proposal arrives, presses a
key just as a card takes the focus, or answers a question that popped up on its own.
"""

from __future__ import annotations

import pytest
from app_harness import ARMING_WAIT, FAILING_REVIEWS, posted, screen_text
from holding_engine import holding_factory
from textual.app import App, ComposeResult
from textual.widgets import TextArea
from waiting import HANG_LIMIT, until

from tunaflow_tui.controllers import conversation as conversation_module
from tunaflow_tui.screens.decision_screen import DecisionScreen, DevStalledScreen, dev_stalled_screen
from tunaflow_tui.screens.doom_loop import DoomLoopScreen
from tunaflow_tui.viewmodels.plan_rows import FailureView, SeatView, VerdictView
from tunaflow_tui.widgets.composer import ComposerInput
from tunaflow_tui.widgets.decision.arming import PRESS_AGAIN
from tunaflow_tui.widgets.decision.done_card import DoneCard
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard

REQUEST = "Add a word frequency report"


async def idle(pilot, app) -> None:
    """Wait for the agents and the screen, without waiting for any card's keys to arm."""
    await pilot.pause()
    await app.controller.wait_idle(HANG_LIMIT)
    await pilot.pause()
    await pilot.pause()


async def armed(pilot, target, clock) -> None:
    """Let the arming time pass on the hand-moved clock: the target's keys act from now on."""
    clock.advance(ARMING_WAIT)
    await pilot.pause()
    assert target.is_armed


def holding(engine, role: str) -> bool:
    """True once the engine exists (its first turn built it) and holds a turn of ``role``."""
    try:
        return engine().holding(role)
    except IndexError:
        return False


def notes(app) -> list[str]:
    return [n.message for n in posted(app)]


def phase_and_pending(runtime) -> tuple[str, str | None]:
    plan = runtime.store.list_plans()[0]
    return plan.phase, plan.pending_decision


async def proposal_in_focus(pilot, app) -> PlanProposalCard:
    """Send the request from the composer and wait until its proposal card took the focus."""
    app.composer.focus_input()
    app.composer.input.load_text(REQUEST)
    await pilot.press("enter")
    await idle(pilot, app)
    card = app.focused
    assert isinstance(card, PlanProposalCard) and card.is_pending
    return card


async def verdict_in_focus(pilot, app, clock) -> ReviewVerdictCard:
    """Approve the proposal (armed): the review's verdict arrives and takes the focus on its own, arming."""
    card = await proposal_in_focus(pilot, app)
    await armed(pilot, card, clock)
    await pilot.press("a")
    await idle(pilot, app)
    verdict = app.focused
    assert isinstance(verdict, ReviewVerdictCard) and not verdict.is_armed
    return verdict


# ---------------------------------------------------------------------------------- typing on


async def test_typing_on_while_the_proposal_arrives_never_approves_it(open_app, demo_project) -> None:
    # the Architect takes a moment, as a real one does: it is held mid-answer while the user types
    factory, engine = holding_factory("architect")
    app, _controller, runtime = open_app(engine_factory=factory)
    async with app.run_test(size=(80, 24)) as pilot:
        app.composer.focus_input()
        app.composer.input.load_text(REQUEST)
        await pilot.press("enter")
        await until(pilot, lambda: engine().holding("architect"), "the Architect writing")
        await pilot.press(*"thanks ")
        assert not list(app.query(PlanProposalCard)), "the proposal came before the typing"
        engine().release()
        await until(pilot, lambda: bool(list(app.query(PlanProposalCard))), "the proposal card")
        await idle(pilot, app)
        await pilot.press(*"also here")
        await idle(pilot, app)
        assert phase_and_pending(runtime) == ("approval", "approval")
        assert app.composer.text == "thanks also here"
        assert isinstance(app.focused, ComposerInput)
        await until(pilot, lambda: "Plan 1 waiting — f2 focuses it" in screen_text(app), "Plan 1 waiting — f2 focuses it on screen")  # the hint says how to reach it
        assert any("f2 focuses it" in n for n in notes(app))


async def test_a_key_just_typed_in_the_empty_composer_keeps_the_focus(open_app, monkeypatch, arming_clock) -> None:
    # the Developer is held mid-answer, so the keys are typed before the review's verdict arrives
    factory, engine = holding_factory("developer")
    app, controller, runtime = open_app(engine_factory=factory)
    async with app.run_test(size=(120, 40)) as pilot:
        card = await proposal_in_focus(pilot, app)
        await armed(pilot, card, arming_clock)
        await pilot.press("a")  # approved: development and review run
        await until(pilot, lambda: engine().holding("developer"), "the Developer writing")
        app.composer.focus_input()
        await until(pilot, lambda: isinstance(app.focused, ComposerInput), "the composer focused")
        await pilot.press("x", "backspace")  # typed and rubbed out: the composer is empty again
        monkeypatch.setattr(conversation_module, "TYPING_PAUSE", 600.0)  # however long the review takes
        engine().release()
        await idle(pilot, app)
        assert phase_and_pending(runtime) == ("review", "review")
        assert isinstance(app.focused, ComposerInput)
        await until(pilot, lambda: "Plan 1 review waiting — f2 focuses it" in screen_text(app), "Plan 1 review waiting — f2 focuses it on screen")
        assert controller.conversation.user_is_typing()
        monkeypatch.setattr(conversation_module, "TYPING_PAUSE", 0.0)
        assert not controller.conversation.user_is_typing()  # after the pause the next card takes the focus again


# ---------------------------------------------------------------------------------- arming


async def test_a_key_pressed_as_the_card_takes_the_focus_decides_nothing(open_app) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        card = await proposal_in_focus(pilot, app)
        assert not card.is_armed
        await pilot.press(*"also")
        await idle(pilot, app)
        assert phase_and_pending(runtime) == ("approval", "approval")
        assert card.view.decision is None
        # what was typed is kept where it was typed, and so is the rest of the word
        assert app.composer.text == "also"
        assert isinstance(app.focused, ComposerInput)
        assert any("appeared while you were typing" in n for n in notes(app))


async def test_once_armed_a_approves(open_app, arming_clock) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        card = await proposal_in_focus(pilot, app)
        await armed(pilot, card, arming_clock)
        await pilot.press("a")
        await idle(pilot, app)
        assert card.view.decision == "approve"
        assert phase_and_pending(runtime) == ("review", "review")


async def test_f2_focuses_the_card_with_its_keys_armed_at_once(open_app) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        card = await proposal_in_focus(pilot, app)
        await pilot.press("h")  # too soon: back to the composer
        await pilot.pause()
        assert isinstance(app.focused, ComposerInput) and app.composer.text == "h"
        await pilot.press("f2")
        await pilot.pause()
        assert app.focused is card and card.is_armed
        await pilot.press("a")
        await idle(pilot, app)
        assert card.view.decision == "approve"
        assert phase_and_pending(runtime) == ("review", "review")


async def test_a_remapped_decision_key_in_the_arming_time_asks_to_press_again(open_app, arming_clock) -> None:
    app, _controller, runtime = open_app()
    app.set_keymap({"plan.approve": "f12"})
    async with app.run_test(size=(120, 40)) as pilot:
        card = await proposal_in_focus(pilot, app)
        await pilot.press("f12")
        await idle(pilot, app)
        assert card.view.decision is None and PRESS_AGAIN in notes(app)
        await armed(pilot, card, arming_clock)
        await pilot.press("f12")
        await idle(pilot, app)
        assert phase_and_pending(runtime) == ("review", "review")


async def test_verdict_and_done_cards_ignore_keys_while_arming(open_app, arming_clock) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        verdict = await verdict_in_focus(pilot, app, arming_clock)
        await pilot.press("w")
        await idle(pilot, app)
        assert verdict.view.decision is None and phase_and_pending(runtime) == ("review", "review")
        assert "Retry seat" not in screen_text(app)  # no seat failed: the retry key is not offered
        await pilot.press("f2")  # the user asks for the decision: its keys act at once
        await idle(pilot, app)
        await pilot.press("a")
        await idle(pilot, app)
        done = app.focused
        assert isinstance(done, DoneCard) and not done.is_armed
        await pilot.press("m")
        await idle(pilot, app)
        assert "Merged into" not in screen_text(app)
        assert not any(n.startswith("Merged") for n in notes(app))


async def test_i_while_a_card_arms_moves_to_the_composer_and_decides_nothing(open_app, arming_clock) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        verdict = await verdict_in_focus(pilot, app, arming_clock)
        await pilot.press("i")  # the user, on the proposal a moment ago, goes to write: not a decision key
        await idle(pilot, app)
        assert isinstance(app.focused, ComposerInput)
        assert app.composer.text == ""
        assert verdict.view.decision is None and phase_and_pending(runtime) == ("review", "review")
        assert PRESS_AGAIN not in notes(app)
        assert not any("appeared while you were typing" in n for n in notes(app))


async def test_i_on_the_done_card_that_followed_the_verdict_leaves_the_composer_empty(open_app) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await proposal_in_focus(pilot, app)
        await pilot.press("f2")  # armed at once
        await pilot.press("a")
        await idle(pilot, app)
        await pilot.press("f2")
        await pilot.press("a")  # accepted: the same plan's done card takes the verdict's place, and the keys
        await idle(pilot, app)
        done = app.focused
        assert isinstance(done, DoneCard) and not done.is_armed
        await pilot.press("i")  # the user was on the verdict, not typing: the key is not text for the composer
        await idle(pilot, app)
        assert isinstance(app.focused, ComposerInput)
        assert app.composer.text == ""
        assert runtime.store.list_plans()[0].phase == "done"


async def test_a_card_arriving_just_after_i_leaves_the_cursor_in_the_composer(open_app, arming_clock) -> None:
    factory, engine = holding_factory("developer")
    app, _controller, runtime = open_app(engine_factory=factory)
    async with app.run_test(size=(120, 40)) as pilot:
        card = await proposal_in_focus(pilot, app)
        await armed(pilot, card, arming_clock)
        await pilot.press("a")
        await until(pilot, lambda: engine().holding("developer"), "the Developer writing")
        app.action_focus_chat()
        await until(pilot, lambda: not isinstance(app.focused, ComposerInput), "the focus off the composer")
        await pilot.press("i")  # to write something; nothing typed yet when the verdict arrives
        await until(pilot, lambda: isinstance(app.focused, ComposerInput), "the composer focused")
        engine().release()
        await idle(pilot, app)
        assert phase_and_pending(runtime) == ("review", "review")
        assert isinstance(app.focused, ComposerInput), f"the verdict took the keys: {app.focused!r}"
        await until(pilot, lambda: "Plan 1 review waiting — f2 focuses it" in screen_text(app),
                    "Plan 1 review waiting — f2 focuses it on screen")


def test_retry_key_is_hidden_not_dimmed_when_no_seat_failed() -> None:
    passed = VerdictView(plan_id=1, round_no=1, verdict="pass", seats=(SeatView("Reviewer", "demo", "pass"),))
    errored = VerdictView(plan_id=1, round_no=1, verdict=None, seats=(SeatView("Verifier", "demo", error="x"),))
    assert ReviewVerdictCard(passed).check_action("retry", ()) is False
    assert ReviewVerdictCard(errored).check_action("retry", ()) is True


# ---------------------------------------------------------------------------------- questions


async def test_doom_loop_question_arms_and_its_choices_are_remappable(open_app, at_second_failure,
                                                                      arming_clock) -> None:
    # two reviews failed already, with a rework between them (seeded: those turns ran once, headless)
    factory, engine = holding_factory("developer")
    app, _controller, runtime = open_app(project=at_second_failure, fail_reviews=FAILING_REVIEWS,
                                         engine_factory=factory)
    app.set_keymap({"doom.redesign": "e"})
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot, app)
        await pilot.press("f2")
        await idle(pilot, app)
        verdict = app.focused
        assert isinstance(verdict, ReviewVerdictCard) and verdict.view.verdict == "fail"
        await armed(pilot, verdict, arming_clock)
        await pilot.press("w")  # the third round fails too: the question comes up on its own
        await until(pilot, lambda: holding(engine, "developer"), "the Developer reworking")
        app.action_focus_chat()  # the user reads the chat meanwhile (not typing anywhere)
        await until(pilot, lambda: not isinstance(app.focused, ComposerInput | ReviewVerdictCard), "the chat")
        engine().release()
        await until(pilot, lambda: isinstance(app.screen, DoomLoopScreen), "the doom-loop question")
        screen = app.screen
        assert isinstance(screen, DoomLoopScreen) and not screen.is_armed
        await pilot.pause()  # drawn
        await until(pilot, lambda: "Architect redesigns (e)" in screen_text(app), "Architect redesigns (e) on screen")  # the button shows the key in use
        await pilot.press("e")  # too soon: nothing is decided
        await pilot.pause()
        assert app.screen is screen and PRESS_AGAIN in notes(app)
        await armed(pilot, screen, arming_clock)
        await pilot.press("r")  # the old key no longer answers
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("e")
        await idle(pilot, app)
        assert not isinstance(app.screen, DoomLoopScreen)
        assert phase_and_pending(runtime) == ("approval", "approval")


class QuestionApp(App[None]):
    def __init__(self, screen: DecisionScreen, keymap: dict[str, str] | None = None) -> None:
        super().__init__()
        self.question = screen
        self.result: object = "unanswered"
        if keymap:
            self.set_keymap(keymap)

    def compose(self) -> ComposeResult:
        yield TextArea(id="draft")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()
        self.push_screen(self.question, self._answered)

    def _answered(self, value: str | None) -> None:
        self.result = value


@pytest.mark.parametrize(("binding_id", "value"), [("stalled.continue", "continue"),
                                                    ("stalled.complete", "complete"),
                                                    ("stalled.abandon", "abandon")])
async def test_developer_stopped_choices_are_bindings_that_can_be_remapped(binding_id: str, value: str) -> None:
    app = QuestionApp(dev_stalled_screen("Add rate limiting"), keymap={binding_id: "z"})
    async with app.run_test(size=(100, 30)) as pilot:
        assert isinstance(app.screen, DevStalledScreen)
        old_key = {"continue": "c", "complete": "m", "abandon": "x"}[value]
        await pilot.press(old_key)
        await pilot.pause()
        assert app.result == "unanswered"
        await pilot.press("z")
        await pilot.pause()
        assert app.result == value


async def test_a_question_that_came_up_while_typing_keeps_the_typing(arming_clock) -> None:
    app = QuestionApp(DevStalledScreen("The Developer stopped", "…", (("c", "Continue", "continue"),
                                                                       ("x", "Abandon", "abandon")),
                                       arming=2.0))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"excellent", "space", "enter")
        await pilot.pause()
        assert app.result == "unanswered"  # neither x nor c nor enter on the focused button answered
        assert app.query_one("#draft", TextArea).text == "excellent "
        assert any("your keys went to the composer" in n for n in notes(app))
        await armed(pilot, app.screen, arming_clock)
        await pilot.press("x")
        await pilot.pause()
        assert app.result == "abandon"


async def test_a_click_answers_at_once() -> None:
    app = QuestionApp(DoomLoopScreen((FailureView(1, "fail", ("flaky",)),), 3, arming=5.0))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.click("#choice-1")
        await pilot.pause()
        assert app.result == "continue"
