"""Snapshots, at 80×24 and 120×40, of the card and question states the other card tests leave out.

A held and a sent-back proposal; a finished plan ready to merge, merged, and done in place; a review
with no verdict because its seats errored; a verdict sent back for rework; the git-init question and
the question about an empty repository's initial commit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from card_views import RATE_LIMITING
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Label

from tunaflow_tui.screens.git_init import git_init_screen, initial_commit_screen
from tunaflow_tui.viewmodels.plan_rows import ProposalView, SeatView, VerdictView
from tunaflow_tui.widgets.decision.done_card import DoneCard, DoneView
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]

PROPOSAL = RATE_LIMITING

READY = DoneView(7, "Add rate limiting to the public API", git_branch="tunaflow/add-rate-limiting",
                 base_branch="main", has_worktree=True)
MERGED = replace(READY, merged="fast-forward")
IN_PLACE = DoneView(8, "Fix the README typo")

NO_VERDICT = VerdictView(
    plan_id=7, round_no=1, verdict=None,
    seats=(SeatView("Reviewer", "claude", error="exited with code 1: API key missing"),
           SeatView("Verifier", "gemini", error="timed out after 600 s")),
    test_summary="42 passed in 3.1 s", test_status="passed",
)
REWORK = VerdictView(
    plan_id=7, round_no=2, verdict="fail",
    seats=(SeatView("Reviewer", "claude", "fail", scores=(("correctness", 4), ("tests", 5)),
                    findings=("Retry-After header missing on 429",)),),
    findings=("Retry-After header missing on 429",), scores=(("correctness", 4.0, 0.0), ("tests", 5.0, 0.0)),
    test_summary="41 passed, 1 failed", test_status="failed", decision="rework",
)


class CardApp(App[None]):
    """One card in a scrolling column, focused as when the user moves to it."""

    def __init__(self, card: Widget) -> None:
        super().__init__()
        self.card = card

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield self.card

    def on_mount(self) -> None:
        self.card.focus()


class QuestionApp(App[None]):
    """A git question over a plain screen, as the app asks it when a project opens."""

    def __init__(self, question: Callable[[str], Screen[Any]] = git_init_screen) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        yield Label("main screen")

    def on_mount(self) -> None:
        self.push_screen(self.question("textstats"))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(
    "view",
    [replace(PROPOSAL, decision="hold"), replace(PROPOSAL, decision="revise", revision=2)],
    ids=["held", "revision-requested"],
)
def test_proposal_card(snap_compare, view: ProposalView, size: tuple[int, int]) -> None:
    assert snap_compare(CardApp(PlanProposalCard(view)), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("view", [READY, MERGED, IN_PLACE], ids=["ready-to-merge", "merged", "in-place"])
def test_done_card(snap_compare, view: DoneView, size: tuple[int, int]) -> None:
    assert snap_compare(CardApp(DoneCard(view)), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("view", [NO_VERDICT, REWORK], ids=["review-error-no-verdict", "decided-rework"])
def test_verdict_card(snap_compare, view: VerdictView, size: tuple[int, int]) -> None:
    assert snap_compare(CardApp(ReviewVerdictCard(view)), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_git_init_question(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(QuestionApp(), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_initial_commit_question(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(QuestionApp(initial_commit_screen), terminal_size=size)
