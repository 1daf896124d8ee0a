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

from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.core.workflow.event_text import USER_CANCELLED
from tunaflow_tui.core.workflow.verdicts import normalise_finding
from tunaflow_tui.viewmodels.plan_rows import SeatView, VerdictView
from tunaflow_tui.widgets.decision.decision_card import DecisionCard, DecisionRequested
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
    Decision.ACCEPT_PARTIAL: "⚠ Accepted with an incomplete review — the plan is done",
    Decision.ACCEPT_OVERRIDE: "⚠ Accepted over a failed review — the plan is done",
    Decision.REWORK: "↺ Sent back to the Developer for rework",
    Decision.REDESIGN: "✎ Sent back to the Architect for a redesign",
    Decision.HOLD: "⏸ Held",
    Decision.ABANDON: "✘ The plan was abandoned",
}
DECIDED_WORDS: dict[str, str] = {
    Decision.ACCEPT: "accepted",
    Decision.ACCEPT_PARTIAL: "accepted with an incomplete review",
    Decision.ACCEPT_OVERRIDE: "accepted over a failed review",
    Decision.REWORK: "rework",
    Decision.REDESIGN: "redesign",
    Decision.HOLD: "held",
    Decision.ABANDON: "abandoned",
}
"""How the card's border names a decision."""
CONFIRMED = frozenset({Decision.ACCEPT_PARTIAL, Decision.ACCEPT_OVERRIDE, Decision.ABANDON})
"""Decisions the card never shows as taken before the owner asked for (and got) a confirmation."""
ACCEPTS = (Decision.ACCEPT, Decision.ACCEPT_PARTIAL, Decision.ACCEPT_OVERRIDE)
"""What the accept key does, the first the review allows: a plain accept only for a complete pass."""
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
    (see :mod:`tunaflow_tui.widgets.decision.arming`).
    """

    CARD_NAME: ClassVar[str] = "review verdict"

    DOCK_KIND: ClassVar[str] = "verdict"

    HINTS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("review.accept", "accept"),
        ("review.rework", "rework"),
        ("review.redesign", "redesign"),
        ("review.retry", "retry seat"),
        ("review.hold", "hold"),
        ("review.abandon", "abandon"),
    )

    HELP = """
## Review verdict

- **a** accept: the plan is done. Over a failed review, or with a seat that gave no verdict, it asks
  you to confirm first, and the record says so.
- **w** rework: the findings go to the Developer.
- **d** redesign: the findings go back to the Architect.
- **t** retry the seats that produced a review error.
- **h** hold: decide later (f2 brings it back).
- **x** abandon the plan (asks you to confirm).
"""

    DEFAULT_CSS = """
    ReviewVerdictCard {
        height: auto; border: round $secondary; padding: 0 1; margin: 1 0;
        border-title-style: bold; border-title-color: $text;
    }
    ReviewVerdictCard.-pending { border: round $warning; border-subtitle-color: $text-warning; }
    ReviewVerdictCard.-decided { border: round $panel-lighten-2; }
    ReviewVerdictCard .title { text-style: bold; color: $text; }
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
    ReviewVerdictCard .incomplete { color: $text-warning; text-style: bold; }
    ReviewVerdictCard .decision { margin-top: 1; text-style: bold; color: $text-success; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "accept", "Accept", id="review.accept", group=DECIDE,
                tooltip="Accept the work: the plan is done (over a failed or incomplete review: confirmed)"),
        Binding("w", "decide('rework')", "Rework", id="review.rework", group=DECIDE,
                tooltip="Send the findings to the Developer"),
        Binding("d", "decide('redesign')", "Redesign", id="review.redesign", group=DECIDE,
                tooltip="Send the findings back to the Architect"),
        Binding("t", "retry", "Retry seat", id="review.retry", group=DECIDE,
                tooltip="Run the seat that produced a review error again"),
        Binding("h", "decide('hold')", "Hold", id="review.hold", group=DECIDE,
                tooltip="Decide later; f2 brings the verdict back"),
        Binding("x", "decide('abandon')", "Abandon", id="review.abandon", group=DECIDE,
                tooltip="End the plan for good (asks you to confirm)",
                show=False),  # on the card's hint line: the footer keeps room for the everyday keys
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
        decided = "" if view.decision is None else f" · {DECIDED_WORDS.get(view.decision, view.decision)}"
        self.border_title = f"{self.keys_owner()} · review verdict · round {view.round_no}{decided}"
        if view.decision is None:
            self.border_subtitle = "on hold — waiting for you" if view.held else "waiting for you"
        else:
            self.border_subtitle = DECIDED_WORDS.get(view.decision, view.decision)
        if view.title:  # the plan it decides on, by name as well as by number (several can wait at once)
            yield Static(view.title, classes="title", markup=False)
        text, css = verdict_label(view.verdict)
        yield Label(text, classes=f"badge {css}")
        if view.answered:
            yield Static(f"⚠ Incomplete review: {view.answered} gave a verdict. Retry the seat that errored; "
                         "accepting without it asks you to confirm.", classes="incomplete", markup=False)
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

    def offers(self, decision: Decision) -> bool:
        """True when ``decision`` is available on this card now."""
        view = self.view
        if view.decision is not None:
            return False
        if view.decisions is not None:
            return decision in view.decisions
        # a view without its plan's way on (a bare card): the verdict alone says what can be done
        if decision is Decision.RETRY:
            return view.has_errored_seat
        if view.verdict is None:
            return False
        if decision is Decision.ACCEPT:
            return view.verdict == "pass" and not view.has_errored_seat
        if decision is Decision.ACCEPT_PARTIAL:
            return view.verdict == "pass" and view.has_errored_seat
        if decision is Decision.ACCEPT_OVERRIDE:
            return view.verdict != "pass"
        return decision in (Decision.REWORK, Decision.REDESIGN)

    def accept_choice(self) -> Decision | None:
        """What the accept key decides now: a plain accept, or one of the accepts that need confirming."""
        return next((d for d in ACCEPTS if self.offers(d)), None)

    def _accept_words(self) -> str:
        choice = self.accept_choice()
        if choice is Decision.ACCEPT_PARTIAL:
            return f"accept with {self.view.answered or 'an incomplete review'}…"
        if choice is Decision.ACCEPT_OVERRIDE:
            verdict = self.view.verdict or "fail"
            # short enough for the card's key row to stay one line at 80 columns
            return "accept anyway…" if verdict == "fail" else f"accept over the {verdict} review…"
        return "accept"

    def hint_items(self) -> tuple[tuple[str, str], ...]:
        """The keys that act now: the accept the review allows, rework, redesign, retry (when a seat
        errored), hold and abandon, as the plan's way on offers them."""
        offered = {"review.accept": self.accept_choice() is not None,
                   "review.rework": self.offers(Decision.REWORK),
                   "review.redesign": self.offers(Decision.REDESIGN),
                   "review.retry": self.offers(Decision.RETRY),
                   "review.hold": self.offers(Decision.HOLD),
                   "review.abandon": self.offers(Decision.ABANDON)}
        items: list[tuple[str, str]] = []
        for binding_id, words in self.HINTS:
            if not offered[binding_id]:
                continue
            if binding_id == "review.accept":
                words = self._accept_words()
            elif binding_id == "review.retry":
                errored = sum(1 for seat in self.view.seats if seat.error)
                words = f"retry errored seat{'s' if errored != 1 else ''}"
            elif binding_id == "review.abandon":
                words = "abandon…"
            items.append((binding_id, words))
        return tuple(items)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Each key acts only when the plan offers its decision now; retry only when a seat errored."""
        if action == "accept":
            return self.accept_choice() is not None
        if action == "decide":
            return bool(parameters) and str(parameters[0]) in set(Decision) and self.offers(Decision(str(parameters[0])))
        if action == "retry":
            # no seat failed: the key is hidden, not dimmed (there is nothing to retry)
            return self.offers(Decision.RETRY)
        return True

    def _post(self, decision: Decision, seat: str | None = None) -> None:
        view = self.view
        self.post_message(DecisionRequested(view.plan_id, decision, seat=seat, round_no=view.round_no))
        if decision not in view.confirm and decision not in CONFIRMED and decision is not Decision.RETRY:
            # Shown immediately; the owner may replace `view` once the decision is stored. A decision
            # that asks for a confirmation is shown once it is confirmed.
            self.view = replace(view, decision=decision)
            self.refresh_bindings()

    def action_accept(self) -> None:
        choice = self.accept_choice()
        if choice is not None and self.keys_armed():
            self._post(choice)

    def action_decide(self, decision: str) -> None:
        if decision not in set(Decision) or not self.offers(Decision(decision)) or not self.keys_armed():
            return
        if Decision(decision) in ACCEPTS:
            self.action_accept()
            return
        self._post(Decision(decision))

    def action_retry(self) -> None:
        """Run the errored reviewer seats again (one seat by name, several together)."""
        view = self.view
        errored = [seat.seat for seat in view.seats if seat.error]
        if not self.offers(Decision.RETRY) or not errored or not self.keys_armed():
            return
        self._post(Decision.RETRY, seat=errored[0] if len(errored) == 1 else None)
