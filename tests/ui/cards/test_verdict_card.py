"""The review verdict card: aggregate verdict, seats, review errors, reverted edits and decision keys."""

from __future__ import annotations

from dataclasses import replace

import pytest
from app_harness import screen_text
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from waiting import until

from tunaflow_tui.viewmodels.plan_rows import SeatView, VerdictView
from tunaflow_tui.widgets.decision.decision_card import DecisionRequested
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard

REVIEWER = SeatView(
    "Reviewer", "claude", "pass", scores=(("correctness", 8), ("tests", 7)),
    findings=("Middleware handles bursts",), recommendations=("Document the limit",),
)
VERIFIER_FAIL = SeatView(
    "Verifier", "codex", "fail", scores=(("correctness", 4), ("tests", 5)),
    findings=("Retry-After header missing on 429",),
)
VERIFIER_ERROR = SeatView("Verifier", "gemini", error="timed out after 600 s")

PASS = VerdictView(
    plan_id=7, round_no=1, verdict="pass",
    seats=(REVIEWER, replace(REVIEWER, seat="Verifier", engine="codex")),
    findings=("Middleware handles bursts",), scores=(("correctness", 8.0, 0.0), ("tests", 7.0, 0.0)),
    test_summary="42 passed in 3.1 s", test_status="passed",
)
FAIL = VerdictView(
    plan_id=7, round_no=2, verdict="fail", seats=(REVIEWER, VERIFIER_FAIL),
    findings=("Retry-After header missing on 429", "Middleware handles bursts"),
    recommendations=("Add the header and a test",),
    scores=(("correctness", 6.0, 2.0), ("tests", 6.0, 1.0)),
    test_summary="41 passed, 1 failed", test_status="failed",
)
CONDITIONAL_ERROR = VerdictView(
    plan_id=7, round_no=3, verdict="conditional", seats=(REVIEWER, VERIFIER_ERROR),
    findings=("Middleware handles bursts",), scores=(("correctness", 8.0, 0.0),),
    test_summary="42 passed", test_status="passed",
)
MODIFIED = replace(FAIL, round_no=4, reviewer_modified=("src/api/limits.py", "tests/test_limits.py"))


class CardApp(App[None]):
    def __init__(self, view: VerdictView) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield ReviewVerdictCard(self.view)

    def on_mount(self) -> None:
        self.query_one(ReviewVerdictCard).focus()


def decided(messages: list[Message]) -> list[DecisionRequested]:
    # the hook sees a message once per node it bubbles through; keep each message once
    unique = {id(m): m for m in messages if isinstance(m, DecisionRequested)}
    return list(unique.values())


async def test_accept_on_a_failed_review_asks_for_the_override_and_is_not_shown_as_taken() -> None:
    seen: list[Message] = []
    app = CardApp(FAIL)
    async with app.run_test(size=(100, 50), message_hook=seen.append) as pilot:
        await until(pilot, lambda: "a accept anyway…" in screen_text(app), "a accept anyway… on screen")
        await pilot.press("a")
        await pilot.pause()
        assert [m.decision for m in decided(seen)] == ["accept_override"]
        # a deliberate act is shown once its owner confirmed it, never before
        assert app.query_one(ReviewVerdictCard).view.decision is None
        assert "Plan done" not in screen_text(app) and "Accepted" not in screen_text(app)


@pytest.mark.parametrize(("key", "decision"), [("w", "rework"), ("d", "redesign")])
async def test_decision_keys_post_decided(key: str, decision: str) -> None:
    seen: list[Message] = []
    app = CardApp(FAIL)
    async with app.run_test(size=(100, 50), message_hook=seen.append) as pilot:
        await pilot.press(key)
        await pilot.pause()
        assert [(m.plan_id, m.round_no, m.decision, m.seat) for m in decided(seen)] == [(7, 2, decision, None)]
        assert app.query_one(ReviewVerdictCard).view.decision == decision
        await pilot.press("a", "w", "d")  # now decided: nothing more is sent
        assert len(decided(seen)) == 1


async def test_retry_only_with_an_errored_seat() -> None:
    seen: list[Message] = []
    app = CardApp(FAIL)
    async with app.run_test(size=(100, 50), message_hook=seen.append) as pilot:
        await pilot.press("t")
        await pilot.pause()
        assert decided(seen) == []
        assert "retry" not in screen_text(app)

    seen.clear()
    app = CardApp(CONDITIONAL_ERROR)
    async with app.run_test(size=(100, 50), message_hook=seen.append) as pilot:
        await until(pilot, lambda: "t retry errored seat" in screen_text(app), "t retry errored seat on screen")
        await pilot.press("t")
        await pilot.pause()
        assert [(m.decision, m.seat) for m in decided(seen)] == [("retry", "Verifier")]
        # a retry is not a decision: the card still takes one (over the conditional review: confirmed)
        await pilot.press("a")
        assert [m.decision for m in decided(seen)] == ["retry", "accept_override"]


async def test_decided_card_ignores_keys_and_shows_the_decision() -> None:
    seen: list[Message] = []
    app = CardApp(replace(CONDITIONAL_ERROR, decision="rework"))
    async with app.run_test(size=(100, 50), message_hook=seen.append) as pilot:
        await pilot.press("a", "w", "d", "t")
        await pilot.pause()
        assert decided(seen) == []
        await until(pilot, lambda: "Sent back to the Developer for rework" in screen_text(app), "Sent back to the Developer for rework on screen")


async def test_errored_seat_is_explained_and_verdict_has_text() -> None:
    app = CardApp(CONDITIONAL_ERROR)
    async with app.run_test(size=(100, 50)):
        text = screen_text(app)
        assert "CONDITIONAL" in text
        assert "review error — not counted as a failure" in text
        assert "timed out after 600 s" in text


async def test_reviewer_modified_warning_lists_reverted_paths() -> None:
    app = CardApp(MODIFIED)
    async with app.run_test(size=(100, 60)):
        text = screen_text(app)
        assert "reverted" in text
        assert "src/api/limits.py" in text and "tests/test_limits.py" in text
        assert "FAIL" in text


SPLITS = "`words()` splits on `-`"
MARKDOWN = VerdictView(
    plan_id=7, round_no=1, verdict="fail",
    seats=(SeatView("Reviewer", "claude", "fail", findings=(SPLITS, "No test for `''` (empty input)")),
           SeatView("Verifier", "codex", "pass", findings=("`words()` splits on `-`.",))),
    findings=(SPLITS, "No test for `''` (empty input)"),
)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_findings_read_as_markdown_once_each_with_who_raised_them(size: tuple[int, int]) -> None:
    app = CardApp(MARKDOWN)
    async with app.run_test(size=size):
        text = screen_text(app)
        assert "`" not in text
        assert text.count("words() splits on -") == 1  # both seats said it: listed once, nobody named
        assert text.count("No test for '' (empty input)") == 1
        assert "No test for '' (empty input) — Reviewer" in text  # only one seat said it
        assert "Reviewer · claude · ✘ FAIL" in text and "Verifier · codex · ✔ PASS" in text


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize(
    "view",
    [PASS, FAIL, CONDITIONAL_ERROR, MODIFIED, replace(PASS, decision="accept")],
    ids=["pass", "fail", "conditional-error", "reviewer-modified", "decided"],
)
def test_snapshot_verdict_card(snap_compare, view: VerdictView, size: tuple[int, int]) -> None:
    assert snap_compare(CardApp(view), terminal_size=size)
