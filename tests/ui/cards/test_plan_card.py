"""The plan proposal card: approval gate keys, revision feedback, decided state, and looks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from app_harness import screen_rows, screen_text
from card_views import RATE_LIMITING
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import TextArea

from tunaflow_tui.screens.feedback import FeedbackScreen, edit_text_externally, editor_argv
from tunaflow_tui.viewmodels.plan_rows import ProposalView, SubtaskView
from tunaflow_tui.widgets.decision.decision_card import DecisionRequested
from tunaflow_tui.widgets.decision.plan_card import NO_SUBTASKS, PlanProposalCard

PROPOSAL = replace(RATE_LIMITING, non_goals=("Distributed limits across hosts",))
SINGLE = ProposalView(plan_id=8, message_id=43, title="README 오타 수정", description="한 번에 끝나는 작업입니다.")


class CardApp(App[None]):
    def __init__(self, view: ProposalView) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield PlanProposalCard(self.view, id="card")

    def on_mount(self) -> None:
        self.query_one(PlanProposalCard).focus()


def decided(messages: list[Message]) -> list[DecisionRequested]:
    # the hook sees a message once per node it bubbles through; keep each message once
    unique = {id(m): m for m in messages if isinstance(m, DecisionRequested)}
    return list(unique.values())


@pytest.mark.parametrize(("key", "decision"), [("a", "approve"), ("h", "hold")])
async def test_approve_and_hold_post_decided(key: str, decision: str) -> None:
    seen: list[Message] = []
    app = CardApp(PROPOSAL)
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await pilot.press(key)
        await pilot.pause()
        card = app.query_one(PlanProposalCard)
        assert [(m.plan_id, m.message_id, m.decision, m.feedback) for m in decided(seen)] == [
            (7, 42, decision, "")
        ]
        assert card.view.decision == decision
        assert not card.has_class("-pending")


async def test_revise_opens_feedback_and_submits_text() -> None:
    seen: list[Message] = []
    app = CardApp(PROPOSAL)
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, FeedbackScreen)
        await pilot.press("ctrl+s")  # empty feedback is not sent
        assert isinstance(app.screen, FeedbackScreen)
        await pilot.press(*"split the tests")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, FeedbackScreen)
        assert [(m.decision, m.feedback) for m in decided(seen)] == [("revise", "split the tests")]


async def test_revise_cancel_posts_nothing_and_card_stays_pending() -> None:
    seen: list[Message] = []
    app = CardApp(PROPOSAL)
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await pilot.press("r")
        await pilot.press(*"never mind")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, FeedbackScreen)
        assert decided(seen) == []
        assert app.query_one(PlanProposalCard).view.decision is None
        assert app.focused is app.query_one(PlanProposalCard)


async def test_decided_card_ignores_keys() -> None:
    seen: list[Message] = []
    app = CardApp(replace(PROPOSAL, decision="approve"))
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await pilot.press("a", "h", "r")
        await pilot.pause()
        assert decided(seen) == []
        assert not isinstance(app.screen, FeedbackScreen)


async def test_held_card_can_still_be_approved_but_not_held_again() -> None:
    seen: list[Message] = []
    app = CardApp(replace(PROPOSAL, decision="hold"))
    async with app.run_test(size=(100, 40), message_hook=seen.append) as pilot:
        await pilot.press("h", "a")
        await pilot.pause()
        assert [m.decision for m in decided(seen)] == ["approve"]


async def test_no_subtasks_note_and_korean_title_align() -> None:
    app = CardApp(SINGLE)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        card = app.query_one(PlanProposalCard)
        title = card.query_one(".title")
        assert title.region.width > 0
        assert str(card.query_one(".note").render()).startswith("No subtasks")
        assert NO_SUBTASKS.startswith("No subtasks")
        # Hangul takes two cells each; the card's right border stays in one column on every row
        assert title.render_line(0).cell_length == len("README ") + 2 * 4 + 1
        rows = screen_rows(app)
        at = next(i for i, row in enumerate(rows) if "오타" in row)
        title_row, next_row = rows[at].rstrip(), rows[at + 1].rstrip()
        assert title_row[-1] == next_row[-1] == "┃"  # the focused card's frame
        assert _cells(title_row) == _cells(next_row)


async def test_subtasks_wrap_under_their_text_and_code_spans_lose_their_backticks() -> None:
    view = replace(PROPOSAL, subtasks=(
        SubtaskView(1, "Add `word_frequencies(text)` in `textstats/frequency.py`: case-insensitive counts of each "
                       "word, reusing the existing tokenizer"),
        SubtaskView(2, "Document [the report] in `README.md`"),
    ))
    app = CardApp(view)
    async with app.run_test(size=(50, 30)) as pilot:
        await pilot.pause()
        rows = screen_rows(app)
        first = next(i for i, row in enumerate(rows) if " 1. Add word_frequencies(text)" in row)
        text_column = rows[first].index("Add")
        continuation = rows[first + 1]
        assert continuation[:text_column].strip(" ┃") == "", "the wrapped line is indented under the text"
        assert continuation[text_column] != " "
        screen = "\n".join(rows)
        assert "`" not in screen
        assert "Document [the report] in README.md" in screen  # brackets are not markup


def _cells(text: str) -> int:
    from rich.cells import cell_len

    return cell_len(text)


def test_external_editor_round_trip(tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def fake_editor(argv: list[str]) -> None:
        calls.append(argv)
        Path(argv[-1]).write_text("edited by hand\n", encoding="utf-8")

    assert edit_text_externally("draft", ["my-editor", "--wait"], fake_editor) == "edited by hand\n"
    assert calls[0][:2] == ["my-editor", "--wait"]
    assert not Path(calls[0][-1]).exists(), "temporary file is removed"


def test_editor_argv_splits_without_a_shell() -> None:
    assert editor_argv({"EDITOR": "code --wait"}) == ["code", "--wait"]
    assert editor_argv({"VISUAL": "nvim", "EDITOR": "nano"}) == ["nvim"]
    assert editor_argv({}) == ["vi"]


async def test_feedback_editor_unavailable_in_headless_keeps_text() -> None:
    app = CardApp(PROPOSAL)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("r", *"keep me", "ctrl+e")
        await pilot.pause()
        assert isinstance(app.screen, FeedbackScreen)
        assert app.screen.query_one(TextArea).text == "keep me"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize(
    "view",
    [PROPOSAL, replace(PROPOSAL, decision="approve", revision=2), SINGLE],
    ids=["pending", "decided", "no-subtasks"],
)
def test_snapshot_proposal_card(snap_compare, view: ProposalView, size: tuple[int, int]) -> None:
    assert snap_compare(CardApp(view), terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_snapshot_feedback_modal(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(CardApp(PROPOSAL), press=["r", *"Split the tests"], terminal_size=size)


async def test_a_decided_card_composing_again_never_shows_its_class_name() -> None:
    """Between removing its old lines and mounting the new ones, a card that was just approved
    showed Textual's stand-in text, ``PlanProposalCard.-decided``."""
    app = CardApp(SINGLE)
    async with app.run_test(size=(80, 24)) as pilot:
        card = app.query_one(PlanProposalCard)
        card.set_class(True, "-decided")
        for child in list(card.children):  # the moment of a recompose when the old lines are gone
            await child.remove()
        await pilot.pause()
        text = screen_text(app)
        assert "PlanProposalCard" not in text and "-decided" not in text, text
