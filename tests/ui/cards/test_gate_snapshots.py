"""Snapshots, at 80×24 and 120×40, of the honest gates' cards and dialogs: a review a seat gave no
verdict on, a plan done over a failed review, a review waiting to be started, a held question, the
confirmation a deliberate act asks for, and the plan editor naming the line it cannot read."""

from __future__ import annotations

import pytest
from card_views import RATE_LIMITING
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Label

from tunaflow_tui.core.proposal_editing import proposal_to_editable_text
from tunaflow_tui.screens.confirm import ConfirmDecisionScreen
from tunaflow_tui.screens.proposal_editor import ProposalEditorScreen
from tunaflow_tui.viewmodels.plan_rows import SeatView, VerdictView, WayView
from tunaflow_tui.widgets.decision.done_card import DoneCard, DoneView
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard
from tunaflow_tui.widgets.decision.way_card import WayCard

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]

INCOMPLETE = VerdictView(
    plan_id=7, round_no=1, verdict="pass",
    seats=(SeatView("Reviewer", "claude", "pass", scores=(("correctness", 8),)),
           SeatView("Verifier", "codex", error="exited with code 1: 401 Unauthorized")),
    test_summary="42 passed", test_status="passed", answered="1 of 2 seats",
    decisions=("retry", "accept_partial", "rework", "redesign", "hold", "abandon"),
    confirm=("accept_partial", "abandon"),
)
FAILED = VerdictView(
    plan_id=7, round_no=2, verdict="fail",
    seats=(SeatView("Reviewer", "claude", "fail", findings=("Retry-After header missing on 429",)),
           SeatView("Verifier", "codex", "pass")),
    findings=("Retry-After header missing on 429",), test_summary="41 passed, 1 failed", test_status="failed",
    decisions=("rework", "redesign", "accept_override", "hold", "abandon"), confirm=("accept_override", "abandon"),
)
OVERRIDDEN = DoneView(7, "Add rate limiting to the public API", git_branch="tunaflow/add-rate-limiting",
                      base_branch="main", has_worktree=True, outcome="accepted over a failed review")
START_REVIEW = WayView(7, "Add rate limiting to the public API", "implementation complete: start the review",
                       ("start_review", "abandon"), ("abandon",))
HELD_STALLED = WayView(7, "Add rate limiting to the public API",
                       "on hold — the Developer stopped: continue, mark complete, or abandon",
                       ("continue", "complete", "resume", "abandon"), ("abandon",), held=True)
ABANDON_TEXT = ("Abandon the plan: it stops here for good and cannot be resumed. Its branch "
                "tunaflow/add-rate-limiting and worktree stay until you remove them. The record says "
                "“abandoned” with your reason.")


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


class DialogApp(App[None]):
    """A dialog over a plain screen."""

    def __init__(self, dialog: object) -> None:
        super().__init__()
        self.dialog = dialog

    def compose(self) -> ComposeResult:
        yield Label("main screen")

    def on_mount(self) -> None:
        self.push_screen(self.dialog)  # type: ignore[arg-type]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("card", [
    pytest.param(lambda: ReviewVerdictCard(INCOMPLETE), id="incomplete-review"),
    pytest.param(lambda: ReviewVerdictCard(FAILED), id="failed-review"),
    pytest.param(lambda: DoneCard(OVERRIDDEN), id="done-over-a-failed-review"),
    pytest.param(lambda: WayCard(START_REVIEW), id="start-review"),
    pytest.param(lambda: WayCard(HELD_STALLED), id="held-question"),
])
def test_gate_card(snap_compare, card, size: tuple[int, int]) -> None:
    assert snap_compare(CardApp(card()), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_abandon_confirmation(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(DialogApp(ConfirmDecisionScreen("Abandon?", ABANDON_TEXT, "Abandon")), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_plan_editor_names_the_line_it_cannot_read(snap_compare, size: tuple[int, int]) -> None:
    text = proposal_to_editable_text(_proposal()).replace("## Description\n", "## Description\n", 1)
    text = text.replace("## Subtasks\n", "stray words\n## Subtasks\n", 1)

    async def save(pilot) -> None:
        await pilot.press("ctrl+s")
        await pilot.pause()

    assert snap_compare(DialogApp(ProposalEditorScreen(text)), terminal_size=size, run_before=save)


def _proposal():
    from tunaflow_tui.core.proposal_editing import EditedProposal, EditedSubtask

    view = RATE_LIMITING
    return EditedProposal(view.title, tuple(EditedSubtask(s.title, s.details) for s in view.subtasks),
                          view.description, view.expected_outcome, view.constraints, view.non_goals)
