"""PlanProposalCard: the approval gate for an Architect's plan proposal."""

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
from tunaflow_tui.screens.feedback import FeedbackScreen
from tunaflow_tui.viewmodels.plan_rows import ProposalView
from tunaflow_tui.widgets.decision.decision_card import DecisionCard, DecisionRequested
from tunaflow_tui.widgets.inline import hanging_list, inline_text

DECIDE = Binding.Group("Decide")

NO_SUBTASKS = "No subtasks — the Architect proposed this as one piece of work."

DECIDED_WORDS: dict[str, str] = {
    Decision.APPROVE: "approved",
    Decision.REVISE: "revision requested",
    Decision.HOLD: "held",
    Decision.ABANDON: "abandoned",
}
"""How a decided card names its decision (border and footer)."""


def _bullets(items: tuple[str, ...]) -> Table:
    return hanging_list([("•", item) for item in items])


class PlanProposalCard(DecisionCard, Vertical, can_focus=True):
    """A focusable card showing a plan proposal, with approve / request revision / hold keys.

    A held proposal can still be approved or sent back; approved and revision-requested
    proposals are final and ignore all keys. After the card took the focus on its own its keys
    arm a moment later (see :mod:`tunaflow_tui.widgets.decision.arming`).
    """

    CARD_NAME: ClassVar[str] = "plan proposal"

    DOCK_KIND: ClassVar[str] = "proposal"

    HINTS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("plan.approve", "approve"),
        ("plan.edit", "edit"),
        ("plan.revise", "request revision"),
        ("plan.hold", "hold"),
        ("plan.abandon", "abandon…"),
    )

    HELP = """
## Plan proposal

- **a** approve the plan: development starts.
- **e** edit the plan before approving it (title, subtasks, description, expected outcome);
  ctrl+e in the editor opens your `$EDITOR`.
- **r** request a revision: write feedback for the Architect.
- **h** hold: decide later (f2 brings it back).
- **x** abandon the plan (asks you to confirm).
"""

    DEFAULT_CSS = """
    PlanProposalCard {
        height: auto; border: round $secondary; padding: 0 1; margin: 1 0;
        border-title-style: bold; border-title-color: $text;
    }
    PlanProposalCard.-pending { border: round $warning; border-subtitle-color: $text-warning; }
    PlanProposalCard.-decided { border: round $panel-lighten-2; }
    /* held: decided for now (folded in the dock) but still open, so it keeps an open card's colour */
    PlanProposalCard.-held { border: round $warning 60%; border-subtitle-color: $text-warning; }
    PlanProposalCard .title { text-style: bold; color: $text; }
    PlanProposalCard .heading { text-style: bold; color: $text-primary; margin-top: 1; }
    PlanProposalCard .note { color: $text-muted; text-style: italic; }
    PlanProposalCard .keys { margin-top: 1; color: $text-muted; }
    PlanProposalCard .decision { margin-top: 1; text-style: bold; }
    PlanProposalCard .decision.-approved { color: $text-success; }
    PlanProposalCard .decision.-revision { color: $text-warning; }
    PlanProposalCard .decision.-held { color: $text-secondary; }
    PlanProposalCard .decision.-abandoned { color: $text-error; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "decide('approve')", "Approve plan", id="plan.approve", group=DECIDE,
                tooltip="Approve the plan and start development"),
        Binding("r", "request_revision", "Request revision", id="plan.revise", group=DECIDE,
                tooltip="Send feedback to the Architect for a new revision"),
        Binding("h", "decide('hold')", "Hold", id="plan.hold", group=DECIDE,
                tooltip="Decide later; f2 brings the plan back"),
        Binding("e", "edit", "Edit plan", id="plan.edit", group=DECIDE,
                tooltip="Edit the proposal before approving it"),
        Binding("x", "decide('abandon')", "Abandon", id="plan.abandon", group=DECIDE,
                tooltip="End the plan for good (asks you to confirm)",
                show=False),  # on the card's hint line: the footer keeps room for the everyday keys
    ]

    view: reactive[ProposalView] = reactive(ProposalView(plan_id=None, message_id=0, title=""), recompose=True)

    def __init__(self, view: ProposalView, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.set_reactive(PlanProposalCard.view, view)

    @property
    def is_pending(self) -> bool:
        """True while the proposal awaits a decision (held counts as pending)."""
        return self.view.decision in (None, Decision.HOLD)

    def compose(self) -> ComposeResult:
        view = self.view
        self.set_class(view.decision is None, "-pending")
        self.set_class(view.decision not in (None, Decision.HOLD), "-decided")
        self.set_class(view.decision == Decision.HOLD, "-held")
        rev = f" · revision {view.revision}" if view.revision > 1 else ""
        decided = "" if view.decision is None else f" · {DECIDED_WORDS.get(view.decision, view.decision)}"
        # folded in the dock a decided card is this one line: it names the plan and what was decided
        self.border_title = f"{self.keys_owner()} proposal{rev}{decided}"
        self.border_subtitle = "waiting for you" if view.decision is None else DECIDED_WORDS.get(
            view.decision, view.decision)
        yield Static(inline_text(view.title), classes="title")
        yield Label("Subtasks", classes="heading")
        if view.subtasks:
            rows = [(f"{task.index:>2}.", f"{task.title} — {task.details}" if task.details else task.title)
                    for task in view.subtasks]
            yield Static(hanging_list(rows), classes="subtasks")
        else:
            yield Static(NO_SUBTASKS, classes="note", markup=False)
        if view.description:
            yield Label("Description", classes="heading")
            yield Static(inline_text(view.description), classes="description")
        if view.expected_outcome:
            yield Label("Expected outcome", classes="heading")
            yield Static(inline_text(view.expected_outcome), classes="outcome")
        if view.constraints:
            yield Label("Constraints", classes="heading")
            yield Static(_bullets(view.constraints), classes="constraints")
        if view.non_goals:
            yield Label("Non-goals", classes="heading")
            yield Static(_bullets(view.non_goals), classes="non-goals")
        yield from self._compose_footer(view)

    def _compose_footer(self, view: ProposalView) -> ComposeResult:
        if view.decision is None:
            yield Static(self.key_content(), classes="keys")
            return
        styles: dict[str, str] = {Decision.APPROVE: "-approved", Decision.REVISE: "-revision",
                                  Decision.HOLD: "-held", Decision.ABANDON: "-abandoned"}
        style = styles.get(view.decision, "")
        texts: dict[str, str] = {
            Decision.APPROVE: "✔ Approved",
            Decision.REVISE: "↺ Revision requested",
            Decision.HOLD: "⏸ Held — " + self.key_hint(),
            Decision.ABANDON: "✘ Abandoned",
        }
        text = texts.get(view.decision, view.decision)
        yield Static(text, classes=f"decision {style}", markup=False)

    def hint_items(self) -> tuple[tuple[str, str], ...]:
        """A held card offers approve and revise (it is held already)."""
        if self.view.decision == Decision.HOLD:
            return tuple(item for item in self.HINTS if item[0] != "plan.hold")
        return self.HINTS

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Decision keys act while the proposal is pending; a held card is not held again."""
        if action == "decide":
            if not self.is_pending:
                return False
            return not (parameters and parameters[0] == Decision.HOLD and self.view.decision == Decision.HOLD)
        if action in ("request_revision", "edit"):
            return self.is_pending
        return True

    def _record(self, decision: Decision, feedback: str = "") -> None:
        view = self.view
        self.post_message(DecisionRequested(view.plan_id, decision, feedback, revision=view.revision,
                                            message_id=view.message_id))
        # Shown immediately; the owner may replace `view` once the decision is stored.
        self.view = replace(view, decision=decision)
        self.refresh_bindings()

    def action_decide(self, decision: str) -> None:
        if decision not in (Decision.APPROVE, Decision.HOLD, Decision.ABANDON) \
                or not self.check_action("decide", (decision,)):
            return
        if not self.keys_armed():
            return
        if decision == Decision.ABANDON:  # shown once confirmed: the owner asks first
            view = self.view
            self.post_message(DecisionRequested(view.plan_id, Decision.ABANDON, revision=view.revision,
                                                message_id=view.message_id))
            return
        self._record(Decision(decision))

    def action_edit(self) -> None:
        """Open the proposal in the editor; what is saved replaces it, and the card stays to approve."""
        view = self.view
        if self.is_pending and self.keys_armed():
            self.post_message(DecisionRequested(view.plan_id, Decision.EDIT, revision=view.revision,
                                                message_id=view.message_id))

    def action_request_revision(self) -> None:
        """Ask for feedback in a dialog; the revision is requested only if some is sent."""
        if not self.is_pending or not self.keys_armed():
            return

        def done(feedback: str | None) -> None:
            if feedback is not None and self.is_pending:
                self._record(Decision.REVISE, feedback)
            self.focus()

        self.app.push_screen(FeedbackScreen(), done)
