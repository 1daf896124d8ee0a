"""Agent text with terminal control sequences reaches the screen inert, on every card and pane.

Hostile plans, verdicts, events, branch labels and documents are stored as an agent could write
them, turned into views by the controller, drawn by the real widgets; what the terminal would be
sent must hold no ESC, no C1 control (0x9b CSI, 0x9d OSC, ...) and still show the harmless words.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_harness import screen_strips, screen_text
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Label, Markdown, OptionList, Static

from tunaflow_tui.controllers import plan_views
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.workflow import AggregateVerdict
from tunaflow_tui.core.workflow.verdicts import ScoreSummary, SeatResult
from tunaflow_tui.screens.documents import DocumentScreen
from tunaflow_tui.screens.doom_loop import DoomLoopScreen
from tunaflow_tui.widgets.branch_pane import BranchPane
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard
from tunaflow_tui.widgets.sidebar import Sidebar
from tunaflow_tui.widgets.workflow_view import WorkflowView

# Clipboard write (OSC 52), clear screen (CSI 2 J), 8-bit CSI, window title (OSC 0), full reset.
ATTACKS = ("\x1b]52;c;cHduZWQ=\x07", "\x1b[2J", "\x9b31m", "\x1b]0;pwned\x07", "\x1bc", "\x9d8;;http://x\x9c")
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def hostile(text: str) -> str:
    """`text` with an attack before, between and after its words."""
    words = text.split(" ")
    mixed = [f"{ATTACKS[i % len(ATTACKS)]}{word}" for i, word in enumerate(words)]
    return " ".join(mixed) + ATTACKS[len(words) % len(ATTACKS)]


TITLE = "Add rate limiting"
SUBTASK = "Token bucket middleware"
FINDING = "Retry-After header missing"
RECOMMENDATION = "Add the header and a test"
SEAT_ERROR = "verifier crashed with status 2"
TEST_SUMMARY = "41 passed, 1 failed"
IMPL_LABEL = "Implement: rate limiting"
REVIEW_LABEL = "Review: rate limiting"
DOCUMENT = "Use a token bucket per key"


def aggregate() -> dict[str, object]:
    reviewer = SeatResult("reviewer", "claude", "fail", {hostile("correctness"): 4},
                          findings=(hostile(FINDING),), recommendations=(hostile(RECOMMENDATION),))
    verifier = SeatResult("verifier", "codex", None, error=hostile(SEAT_ERROR))
    return AggregateVerdict(
        verdict="fail", seats=(reviewer, verifier), findings=(hostile(FINDING),),
        recommendations=(hostile(RECOMMENDATION),), scores={hostile("correctness"): ScoreSummary(4.0, 0, 1)},
        failed_subtasks=(), errors=(hostile(SEAT_ERROR),),
    ).to_json()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path) as opened:
        yield opened


@pytest.fixture
def plan(store: Store, tmp_path: Path) -> PlanRecord:
    """A plan whose every agent-written field carries control sequences, waiting for a review decision."""
    created = store.create_plan(
        title=hostile(TITLE), slug="add-rate-limiting", description=hostile("Limit requests per key"),
        expected_outcome=hostile("429 after the limit"), constraints=(hostile("No new dependencies"),),
        non_goals=(hostile("Distributed limits"),), subtasks=((hostile(SUBTASK), hostile("in middleware.py")),),
    )
    impl = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                               kind="implementation", label=hostile(IMPL_LABEL))
    review = store.create_branch(conversation_id=f"branch:{impl.id}", checkpoint_id=None,
                                 parent_branch_id=impl.id, mode="roundtable", kind="review",
                                 label=hostile(REVIEW_LABEL))
    detail = {"aggregate": aggregate(), "tests": {"status": "failed", "summary": hostile(TEST_SUMMARY)},
              "reviewer_modified": [hostile("src/limits.py")]}
    store.add_plan_event(created.id, "tests_ran", "system", {"summary": hostile(TEST_SUMMARY)})
    for round_no in (1, 2, 3):
        store.add_plan_event(created.id, "review_finished", "agent",
                             {"verdict": "fail", "round": round_no, "aggregate": aggregate()})
    folder = tmp_path / "docs" / "plans"
    folder.mkdir(parents=True)
    (folder / "add-rate-limiting-\x1b[2Jnotes.md").write_text(f"# Notes\n\n{hostile(DOCUMENT)}\n", encoding="utf-8")
    return store.update_plan(created.id, phase="review", pending_decision="review", pending_detail=detail,
                             review_round=3, impl_branch_id=impl.id, review_branch_id=review.id)


def strings(value: object) -> Iterator[str]:
    """Every string inside a view (dataclasses, tuples, nested)."""
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for item in dataclasses.fields(value):
            yield from strings(getattr(value, item.name))
    elif isinstance(value, tuple):
        for item in value:
            yield from strings(item)


def sent_to_terminal(app: App[None]) -> str:
    """The text of every segment the screen would send, as one string."""
    return "".join(segment.text for strip in screen_strips(app) for segment in strip)


def assert_inert(app: App[None], *visible: str) -> None:
    sent = sent_to_terminal(app)
    assert not CONTROL.findall(sent), f"control characters reach the terminal: {CONTROL.findall(sent)}"
    text = screen_text(app)
    for words in visible:
        assert words in text, f"{words!r} is not on screen"


class Host(App[None]):
    """Shows the given widgets, or pushes a screen."""

    def __init__(self, *widgets: Widget, screen: Screen[object] | None = None) -> None:
        super().__init__()
        self.widgets = widgets
        self.modal = screen

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield from self.widgets or (Label("main screen"),)

    def on_mount(self) -> None:
        if self.modal is not None:
            self.push_screen(self.modal)


def test_views_hold_no_control_characters(store: Store, plan: PlanRecord, tmp_path: Path) -> None:
    views = (
        plan_views.proposal_view(plan),
        plan_views.verdict_view(plan),
        plan_views.failure_history(store.list_plan_events(plan.id)),
        plan_views.plan_summary(store, plan, tmp_path),
        plan_views.branch_view(store, plan.review_branch_id or 0),
        plan_views.sidebar_sections(store),
    )
    # a document's path stays as it is on disk (it opens the file); its name is what is shown
    texts = [text for view in views for text in strings(view) if not text.startswith(str(tmp_path))]
    assert TITLE in texts and "add-rate-limiting-notes.md" in " ".join(texts)
    assert [text for text in texts if CONTROL.search(text)] == []


async def test_proposal_card(plan: PlanRecord) -> None:
    app = Host(PlanProposalCard(plan_views.proposal_view(plan)))
    async with app.run_test(size=(100, 40)):
        assert_inert(app, TITLE, SUBTASK, "Limit requests per key", "429 after the limit", "No new dependencies",
                     "Distributed limits")


async def test_verdict_card(plan: PlanRecord) -> None:
    app = Host(ReviewVerdictCard(plan_views.verdict_view(plan)))
    async with app.run_test(size=(100, 60)):
        assert_inert(app, FINDING, RECOMMENDATION, SEAT_ERROR, TEST_SUMMARY, "src/limits.py", "correctness")


async def test_doom_loop_modal(store: Store, plan: PlanRecord) -> None:
    app = Host(screen=DoomLoopScreen(plan_views.failure_history(store.list_plan_events(plan.id)), threshold=3))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DoomLoopScreen)
        assert_inert(app, "Round 1 · FAIL", FINDING)


async def test_workflow_view_and_its_documents(store: Store, plan: PlanRecord, tmp_path: Path) -> None:
    app = Host(WorkflowView((plan_views.plan_summary(store, plan, tmp_path),)))
    async with app.run_test(size=(160, 40)) as pilot:
        assert_inert(app, TITLE, SUBTASK, f"the tests ran: {TEST_SUMMARY}", "add-rate-limiting-notes.md")
        app.query_one("#documents", OptionList).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DocumentScreen)
        assert not CONTROL.search(app.screen.query_one(Markdown).source)
        assert_inert(app, DOCUMENT, "add-rate-limiting-notes.md")


class WideSidebarHost(Host):
    CSS = "Sidebar { width: 60; }"  # wide enough that no label is cut


async def test_sidebar(store: Store, plan: PlanRecord) -> None:
    app = WideSidebarHost(Sidebar(plan_views.sidebar_sections(store)))
    async with app.run_test(size=(80, 24)):
        assert_inert(app, IMPL_LABEL, REVIEW_LABEL, TITLE)


class PaneHost(App[None]):
    def __init__(self, store: Store, branch_id: int) -> None:
        super().__init__()
        self.store, self.branch_id = store, branch_id

    def compose(self) -> ComposeResult:
        yield BranchPane()

    async def on_mount(self) -> None:
        view = plan_views.branch_view(self.store, self.branch_id)
        assert view is not None
        await self.query_one(BranchPane).show(view, Static("shadow conversation"))


async def test_branch_header(store: Store, plan: PlanRecord) -> None:
    app = PaneHost(store, plan.review_branch_id or 0)
    async with app.run_test(size=(100, 10)) as pilot:
        await pilot.pause()
        assert_inert(app, f"↳ {REVIEW_LABEL}")
