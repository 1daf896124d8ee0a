"""A card the user can no longer see gives up the keys: scrolled out of the dock's view, its keys stop
acting, the footer stops listing them, the composer has the focus, and the dock's line says how to get
back (f2). Plans are seeded through the workflow service and the store: no agent turn runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from app_harness import armed, footers_current, screen_text, settle
from seeded_plans import reviewed, seat
from textual import events
from waiting import until

from tunaflow_tui.core.workflow import Accept
from tunaflow_tui.textual_compat import post_mouse_events
from tunaflow_tui.widgets.composer import ComposerInput
from tunaflow_tui.widgets.decision.done_card import DoneCard
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard

SIZES = [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")]

FINDINGS = tuple(f"Finding {n}: the sentence splitter misses case {n}" for n in range(1, 31))
"""Enough findings that a verdict card is taller than the dock's view, even at 120×40."""


def _done_with_worktree(runtime, project: Path) -> tuple[int, Path]:
    """Plan 1 accepted and not merged: its worktree is there to remove."""
    plan_id = reviewed(runtime.store, [seat("reviewer", "pass"), seat("verifier", "pass")], branches=False)
    tree = project.parent / "worktrees" / "word-frequency"
    subprocess.run(["git", "-C", str(project), "worktree", "add", "-q", "-b", "tunaflow/word-frequency", str(tree)],
                   check=True, capture_output=True)
    runtime.store.update_plan(plan_id, worktree_path=str(tree), git_branch="tunaflow/word-frequency",
                              base_branch="main")
    runtime.service.apply(plan_id, Accept(), actor="user")
    return plan_id, tree


def _long_verdict(runtime, title: str, slug: str) -> int:
    """A plan whose failed review lists :data:`FINDINGS`: its card is taller than the dock."""
    return reviewed(runtime.store, [seat("reviewer", "fail", *FINDINGS), seat("verifier", "fail")],
                    title=title, slug=slug)


async def _wheel(pilot, widget, *, up: bool, until_true, what: str) -> None:
    """Turn the mouse wheel over ``widget`` (as a user reads up or down the cards) until ``until_true()``."""
    kind = events.MouseScrollUp if up else events.MouseScrollDown
    for _turn in range(200):
        if until_true():
            return
        await post_mouse_events(pilot, [kind], widget, (2, 1))
    await until(pilot, until_true, what, limit=5)


def _footer(app) -> str:
    return screen_text(app).splitlines()[-1]


def _dock_line(app) -> str:
    hint = app.decision_dock.query_one("#dock-hint")
    return str(hint.render()) if hint.display else ""


@pytest.mark.parametrize("size", SIZES)
async def test_a_done_card_scrolled_out_of_view_gives_up_x(open_app, demo_project, size) -> None:
    """The reported case: plan 1's done card out of view while plan 2's verdict waits; x is typing."""
    app, _controller, runtime = open_app()
    done_id, tree = _done_with_worktree(runtime, demo_project)
    waiting_id = _long_verdict(runtime, "Add a sentence count", "sentence-count")
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        dock = app.decision_dock
        done = dock.card_for(done_id)
        assert isinstance(done, DoneCard) and isinstance(dock.card_for(waiting_id), ReviewVerdictCard)
        done.focus()  # the user moves to it (a click, tab)
        await armed(pilot, app)
        await until(pilot, lambda: dock.can_view_partial(done) and footers_current(app), "the done card in view")
        assert f"Plan {done_id} · m x Done" in _footer(app), _footer(app)

        await _wheel(pilot, dock, up=True, until_true=lambda: not done.has_focus,
                     what="the done card to give up the focus once out of view")
        assert not dock.can_view_partial(done)
        await until(pilot, lambda: isinstance(app.focused, ComposerInput), "the composer to have the focus")
        await until(pilot, lambda: footers_current(app) and "Plan 1" not in _footer(app), "the footer without plan 1")
        assert "Merge" not in _footer(app) and "worktree" not in _footer(app), _footer(app)
        line = _dock_line(app)
        assert line.startswith(f"Plan {waiting_id} review waiting — f2 focuses it"), line

        await pilot.press("x")  # writing now, not removing plan 1's worktree
        await pilot.pause()
        assert app.composer.text == "x"
        assert len(app.screen_stack) == 1, "a confirmation opened for a card out of view"
        assert tree.exists()
        plan = runtime.store.get_plan(done_id)
        assert plan is not None and plan.worktree_path == str(tree)


@pytest.mark.parametrize("size", SIZES)
async def test_a_waiting_card_scrolled_out_of_view_gives_up_its_keys_until_f2(open_app, size) -> None:
    app, _controller, runtime = open_app()
    first = _long_verdict(runtime, "Add a word frequency report", "word-frequency")
    second = _long_verdict(runtime, "Add a sentence count", "sentence-count")
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        dock = app.decision_dock
        await pilot.press("f2")  # the oldest first: plan 1's verdict
        await until(pilot, lambda: dock.card_for(first).has_focus, "plan 1's verdict focused")
        await pilot.press("f2")  # walks on: plan 2's verdict, at the bottom of the dock
        card = dock.card_for(second)
        await until(pilot, lambda: card.has_focus and dock.can_view_partial(card), "plan 2's verdict focused")
        await armed(pilot, app)
        await until(pilot, lambda: footers_current(app) and f"Plan {second} · a w d h Decide" in _footer(app),
                    "the footer naming plan 2")

        await _wheel(pilot, dock, up=True, until_true=lambda: not card.has_focus_within,
                     what="plan 2's verdict to give up the focus once out of view")
        assert not dock.can_view_partial(card)
        assert dock.can_view_partial(dock.card_for(first))
        await until(pilot, lambda: isinstance(app.focused, ComposerInput), "the composer to have the focus")
        await until(pilot, lambda: footers_current(app) and f"Plan {second}" not in _footer(app),
                    "the footer without plan 2's keys")
        assert _dock_line(app).startswith(f"2 decisions waiting — f2 focuses Plan {second}, then"), _dock_line(app)
        await pilot.press("w")  # rework would act on a card out of view: it is a letter for the composer
        await pilot.pause()
        assert app.composer.text == "w"
        assert runtime.store.get_plan(second).pending_decision == "review"

        await pilot.press("f2")  # back to the one it walked to: in view, with its keys
        await until(pilot, lambda: card.has_focus and dock.can_view_partial(card), "plan 2's verdict again")
        await until(pilot, lambda: footers_current(app) and f"Plan {second} · a w d h Decide" in _footer(app),
                    "the footer naming plan 2 again")
        assert card.has_focus, "the card gave up the focus f2 gave it"


async def test_f2_reaches_a_finished_plan_when_nothing_waits(open_app, demo_project) -> None:
    app, _controller, runtime = open_app()
    done_id, _tree = _done_with_worktree(runtime, demo_project)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await until(pilot, lambda: _dock_line(app).startswith(f"Plan {done_id} done — f2 focuses it, then m merge"),
                    "the dock line saying how to reach the done card")
        await pilot.press("f2")
        done = app.decision_dock.card_for(done_id)
        await until(pilot, lambda: done.has_focus, "the done card focused")
        await until(pilot, lambda: _dock_line(app).startswith(f"Plan {done_id} done: m merge"), "its keys")
