"""ReviewVerdictCard: the aggregate review verdict, each seat, and the decision after review."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Label, Static

from tunaflow_tui.core.workflow.decisions import Decision
from tunaflow_tui.core.workflow.event_text import USER_CANCELLED
from tunaflow_tui.core.workflow.verdicts import normalise_finding
from tunaflow_tui.viewmodels.plans import SeatView, VerdictView
from tunaflow_tui.widgets.decision_card import DecisionCard, DecisionRequested
from tunaflow_tui.widgets.inline import inline_text

DECIDE = Binding.Group("Decide")

# Text and glyph as well as colour, so the verdict reads at 256 colours and without colour.
VERDICT_LABELS = {
    "pass": ("✔ PASS", "-pass"),
    "fail": ("✘ FAIL", "-fail"),
    "conditional": ("◐ CONDITIONAL", "-conditional"),
}
DECISION_TEXT: dict[str, str] = {
    Decision.ACCEPT: "✔ Accepted — the plan is done",
    Decision.REWORK: "↺ Sent back to the Developer for rework",
    Decision.REDESIGN: "✎ Sent back to the Architect for a redesign",
    Decision.ABANDON: "✘ The plan was abandoned",
}
REVIEW_ERROR_NOTE = "review error — not counted as a failure"


def verdict_label(verdict: str | None) -> tuple[str, str]:
    """Badge text and CSS class for a verdict (None means no verdict)."""
    if verdict is None:
        return ("? NO VERDICT", "-none")
    return VERDICT_LABELS.get(verdict.lower(), (verdict.upper(), "-none"))


def _listed(marker: str, items: tuple[str, ...], seats: tuple[tuple[str, tuple[str, ...]], ...] = ()) -> Table:
    """Each item once, Markdown code spans shown without backticks, wrapped lines under the text; when
    only some of the answering seats raised an item, their names follow it (dim)."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(ratio=1)
    said = [(name, {normalise_finding(item) for item in own}) for name, own in seats]
    for item in items:
        text = inline_text(item)
        raised = [name for name, keys in said if normalise_finding(item) in keys]
        if len(said) > 1 and 0 < len(raised) < len(said):
            text.append(f" — {', '.join(raised)}", style="dim")
        grid.add_row(marker, text)
    return grid


class SeatBlock(Vertical):
    """One reviewer seat inside the verdict card."""

    DEFAULT_CSS = """
    SeatBlock { height: auto; padding: 0 0 0 1; margin-top: 1; border-left: outer $panel-lighten-2; }
    SeatBlock.-error { border-left: outer $warning; }
    SeatBlock .seat-head { text-style: bold; }
    SeatBlock .seat-error { color: $text-warning; }
    """

    def __init__(self, seat: SeatView, *, listed: frozenset[str] = frozenset()) -> None:
        super().__init__(classes="-error" if seat.error else "")
        self.seat = seat
        self.listed = listed
        """Findings and recommendations the card lists already (compared normalised): not repeated here."""

    def compose(self) -> ComposeResult:
        seat = self.seat
        if seat.error == USER_CANCELLED:
            yield Static(f"{seat.seat} · {seat.engine} · {USER_CANCELLED} — no verdict, not a failure",
                         classes="seat-head", markup=False)
            return
        if seat.error:
            yield Static(f"{seat.seat} · {seat.engine} · ⚠ {REVIEW_ERROR_NOTE}", classes="seat-head", markup=False)
            yield Static(seat.error, classes="seat-error", markup=False)
            return
        text, _ = verdict_label(seat.verdict)
        yield Static(f"{seat.seat} · {seat.engine} · {text}", classes="seat-head", markup=False)
        if seat.scores:
            yield Static("  ".join(f"{name} {value}" for name, value in seat.scores), markup=False)
        findings = tuple(f for f in seat.findings if normalise_finding(f) not in self.listed)
        if findings:
            yield Static(_listed("•", findings), classes="seat-findings")
        recommendations = tuple(r for r in seat.recommendations if normalise_finding(r) not in self.listed)
        if recommendations:
            yield Static(_listed("→", recommendations))


class ReviewVerdictCard(DecisionCard, Vertical, can_focus=True):
    """A focusable verdict card: accept / rework / redesign, and retry when a seat errored.

    After the card took the focus on its own its keys arm a moment later
    (see :mod:`tunaflow_tui.widgets.arming`).
    """

    CARD_NAME: ClassVar[str] = "review verdict"

    DOCK_KIND: ClassVar[str] = "verdict"

    HINTS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("review.accept", "accept"),
        ("review.rework", "rework"),
        ("review.redesign", "redesign"),
        ("review.retry", "retry seat"),
    )

    HELP = """
## Review verdict

- **a** accept: the plan is done.
- **w** rework: the findings go to the Developer.
- **d** redesign: the findings go back to the Architect.
- **t** retry the seats that produced a review error.
"""

    DEFAULT_CSS = """
    ReviewVerdictCard {
        height: auto; border: round $secondary; padding: 0 1; margin: 1 0;
        border-title-style: bold; border-title-color: $text;
    }
    ReviewVerdictCard.-pending { border: round $warning; border-subtitle-color: $text-warning; }
    ReviewVerdictCard.-pending:focus { border: double $warning; }
    ReviewVerdictCard.-decided { border: round $panel-lighten-2; }
    ReviewVerdictCard:focus { border: double $accent; }
    ReviewVerdictCard .badge { width: auto; padding: 0 1; text-style: bold; }
    ReviewVerdictCard .badge.-pass { background: $success; color: $background; }
    ReviewVerdictCard .badge.-fail { background: $error; color: $background; }
    ReviewVerdictCard .badge.-conditional { background: $warning; color: $background; }
    ReviewVerdictCard .badge.-none { background: $panel; color: $text; }
    ReviewVerdictCard .heading { text-style: bold; color: $text-primary; margin-top: 1; }
    ReviewVerdictCard .warning {
        margin-top: 1; padding: 0 1; border: heavy $error; color: $text-error;
    }
    ReviewVerdictCard .tests.-failed { color: $text-error; }
    ReviewVerdictCard .tests.-passed { color: $text-success; }
    ReviewVerdictCard .tests.-error { color: $text-warning; }
    ReviewVerdictCard .test-env { color: $text-muted; }
    ReviewVerdictCard .keys { margin-top: 1; color: $text-muted; }
    ReviewVerdictCard .decision { margin-top: 1; text-style: bold; color: $text-success; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "decide('accept')", "Accept", id="review.accept", group=DECIDE,
                tooltip="Accept the work: the plan is done"),
        Binding("w", "decide('rework')", "Rework", id="review.rework", group=DECIDE,
                tooltip="Send the findings to the Developer"),
        Binding("d", "decide('redesign')", "Redesign", id="review.redesign", group=DECIDE,
                tooltip="Send the findings back to the Architect"),
        Binding("t", "retry", "Retry seat", id="review.retry", group=DECIDE,
                tooltip="Run the seat that produced a review error again"),
    ]

    view: reactive[VerdictView] = reactive(VerdictView(plan_id=0, round_no=0, verdict=None), recompose=True)

    def __init__(self, view: VerdictView, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.set_reactive(ReviewVerdictCard.view, view)

    def compose(self) -> ComposeResult:
        view = self.view
        self.set_class(view.decision is None, "-pending")
        self.set_class(view.decision is not None, "-decided")
        self.border_title = f"Review verdict · round {view.round_no}"
        self.border_subtitle = "waiting for you" if view.decision is None else view.decision
        text, css = verdict_label(view.verdict)
        yield Label(text, classes=f"badge {css}")
        if view.reviewer_modified:
            paths = "\n".join(f"  {path}" for path in view.reviewer_modified)
            yield Static(
                f"⚠ A reviewer modified code. These changes were reverted:\n{paths}",
                classes="warning", markup=False,
            )
        if view.test_summary or view.test_status:
            status = view.test_status.lower()
            css_t = {"pass": "-passed", "passed": "-passed", "fail": "-failed", "failed": "-failed",
                     "error": "-error"}.get(status, "")
            label = f"Tests: {view.test_status.upper()}" if view.test_status else "Tests"
            if status == "error":
                label += " (could not start — not a test failure)"
            summary = f"{label} — {view.test_summary}" if view.test_summary else label
            yield Static(summary, classes=f"tests {css_t}", markup=False)
        if view.test_environment:
            yield Static(f"Ran with: {view.test_environment}", classes="test-env", markup=False)
        if view.scores:
            yield Label("Scores (mean ± spread)", classes="heading")
            yield Static(
                "\n".join(f"{name:<14} {mean:4.1f} ± {spread:.1f}" for name, mean, spread in view.scores),
                markup=False,
            )
        answered = tuple(seat for seat in view.seats if not seat.error)
        if view.findings:
            yield Label("Findings", classes="heading")
            yield Static(_listed("•", view.findings, tuple((s.seat, s.findings) for s in answered)),
                         classes="findings")
        if view.recommendations:
            yield Label("Recommendations", classes="heading")
            yield Static(_listed("→", view.recommendations, tuple((s.seat, s.recommendations) for s in answered)))
        listed = frozenset(normalise_finding(item) for item in (*view.findings, *view.recommendations))
        for seat in view.seats:
            yield SeatBlock(seat, listed=listed)
        if view.decision is None:
            yield Static(self.key_content(), classes="keys")
        else:
            yield Static(DECISION_TEXT.get(view.decision, view.decision), classes="decision", markup=False)

    def hint_items(self) -> tuple[tuple[str, str], ...]:
        """Without a verdict (every seat errored) nothing can be accepted or reworked yet; retry only
        when a seat errored."""
        view = self.view
        items = list(self.HINTS[:3]) if view.verdict is not None else []
        if view.has_errored_seat:
            errored = sum(1 for seat in view.seats if seat.error)
            items.append(("review.retry", f"retry errored seat{'s' if errored != 1 else ''}"))
        return tuple(items)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "decide":
            return self.view.decision is None and self.view.verdict is not None
        if action == "retry":
            # no seat failed: the key is hidden, not dimmed (there is nothing to retry)
            return self.view.has_errored_seat and self.view.decision is None
        return True

    def action_decide(self, decision: str) -> None:
        view = self.view
        if view.decision is not None or view.verdict is None or decision not in DECISION_TEXT \
                or not self.keys_armed():
            return
        chosen = Decision(decision)
        self.post_message(DecisionRequested(view.plan_id, chosen, round_no=view.round_no))
        # Shown immediately; the owner may replace `view` once the decision is stored.
        self.view = replace(view, decision=chosen)
        self.refresh_bindings()

    def action_retry(self) -> None:
        view = self.view
        errored = [seat.seat for seat in view.seats if seat.error]
        if view.decision is not None or not errored or not self.keys_armed():
            return
        self.post_message(DecisionRequested(view.plan_id, Decision.RETRY, seat=errored[0] if len(errored) == 1 else None,
                                            round_no=view.round_no))
