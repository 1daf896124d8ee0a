"""WayCard: a plan that waits for the user with no proposal or verdict to show, and its ways on.

A review to start (automatic review is off), an interrupted agent step, an Architect that answered
without the revised proposal, a question the user put on hold: each shows here what it waits on
(the plan's :class:`~tunaflow_tui.core.workflow.ways.WayOn` summary) and a key per decision
available now, so no plan is ever left without a visible way on.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Static

from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.viewmodels.plan_rows import WayView
from tunaflow_tui.widgets.decision.decision_card import DecisionCard, DecisionRequested

DECIDE = Binding.Group("Decide")

WAY_BINDINGS: dict[Decision, str] = {
    Decision.START_REVIEW: "way.start_review",
    Decision.RESUME_STEP: "way.resume_step",
    Decision.RETRY_STEP: "way.retry_step",
    Decision.RESUME: "way.resume",
    Decision.HOLD: "way.hold",
    Decision.REDESIGN: "way.redesign",
    Decision.CONTINUE: "way.continue",
    Decision.COMPLETE: "way.complete",
    Decision.RETRY_SETUP: "way.retry_setup",
    Decision.SKIP_SETUP: "way.skip_setup",
    Decision.RETRY: "way.retry",
    Decision.ABANDON: "way.abandon",
}
"""The binding id of each decision the card can take."""


class WayCard(DecisionCard, Vertical, can_focus=True):
    """A focusable card naming what a plan waits on, with one key per decision available now.

    Two decisions that never come together may share a key (resume a held question / resume an
    interrupted step); the one the plan offers takes it. After the card took the focus on its own its
    keys arm a moment later (see :mod:`tunaflow_tui.widgets.decision.arming`).
    """

    CARD_NAME: ClassVar[str] = "plan waiting for you"

    DOCK_KIND: ClassVar[str] = "way"

    HINTS: ClassVar[tuple[tuple[str, str], ...]] = tuple(
        (binding_id, decision.label.lower()) for decision, binding_id in WAY_BINDINGS.items())

    HELP = """
## A plan waiting for you

The card says what the plan waits on; each key takes one of the ways on it names (start the review,
resume or retry an interrupted step, take a held question back, hold a queued plan, abandon the plan…).
"""

    DEFAULT_CSS = """
    WayCard {
        height: auto; border: round $warning; padding: 0 1; margin: 1 0;
        border-title-style: bold; border-title-color: $text; border-subtitle-color: $text-warning;
    }
    WayCard.-decided { border: round $panel-lighten-2; }
    WayCard .title { text-style: bold; color: $text; }
    WayCard .summary { margin-top: 1; }
    WayCard .keys { margin-top: 1; color: $text-muted; }
    WayCard .decision { margin-top: 1; text-style: bold; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "decide('start_review')", "Start review", id="way.start_review", group=DECIDE,
                tooltip="Run the tests and the two reviewers now"),
        Binding("u", "decide('resume_step')", "Resume step", id="way.resume_step", group=DECIDE,
                tooltip="Continue the interrupted agent step in its session"),
        Binding("t", "decide('retry_step')", "Retry step", id="way.retry_step", group=DECIDE,
                tooltip="Run the interrupted agent step again from a fresh session"),
        Binding("u", "decide('resume')", "Resume", id="way.resume", group=DECIDE,
                tooltip="Take the held question back (a plan held in the queue goes back in it)"),
        Binding("h", "decide('hold')", "Hold", id="way.hold", group=DECIDE,
                tooltip="Take the queued plan out of the queue: it does not start until you resume it"),
        Binding("d", "decide('redesign')", "Redesign", id="way.redesign", group=DECIDE,
                tooltip="Send the plan back to the Architect"),
        Binding("c", "decide('continue')", "Continue", id="way.continue", group=DECIDE,
                tooltip="The Developer carries on"),
        Binding("m", "decide('complete')", "Mark complete", id="way.complete", group=DECIDE,
                tooltip="Count the implementation as complete and go on to the review"),
        Binding("t", "decide('retry_setup')", "Retry setup", id="way.retry_setup", group=DECIDE,
                tooltip="Run the worktree setup again"),
        Binding("k", "decide('skip_setup')", "Skip setup", id="way.skip_setup", group=DECIDE,
                tooltip="Start the Developer without the worktree setup"),
        Binding("t", "decide('retry')", "Retry review", id="way.retry", group=DECIDE,
                tooltip="Run the reviewer seats that gave no verdict again"),
        Binding("x", "decide('abandon')", "Abandon", id="way.abandon", group=DECIDE,
                tooltip="End the plan for good (asks you to confirm)",
                show=False),  # on the card's hint line: the footer keeps room for the everyday keys
    ]

    view: reactive[WayView] = reactive(WayView(plan_id=0, title="", summary=""), recompose=True)

    def __init__(self, view: WayView, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(WayCard.view, view)

    def compose(self) -> ComposeResult:
        view = self.view
        self.set_class(view.decision is not None, "-decided")
        owner = self.keys_owner()
        decided = "" if view.decision is None else f" · {Decision(view.decision).label.lower()}"
        queued = Decision.HOLD in view.decisions  # only a plan waiting in the queue offers a hold here
        where = "on hold" if view.held else "queued" if queued else "waiting for you"
        self.border_title = f"{owner} {where}{decided}"
        self.border_subtitle = (("queued" if queued else "waiting for you") if view.decision is None
                                else Decision(view.decision).label.lower())
        yield Static(view.title, classes="title", markup=False)
        yield Static(view.summary[:1].upper() + view.summary[1:] + ".", classes="summary", markup=False)
        if view.decision is None:
            if tuple(self.hint_items()):
                yield Static(self.key_content(), classes="keys")
        else:
            yield Static(f"→ {Decision(view.decision).label}", classes="decision", markup=False)

    def hint_items(self) -> tuple[tuple[str, str], ...]:
        """The keys of the decisions the plan offers now, in the order it offers them."""
        if self.view.decision is not None:
            return ()
        items = []
        for name in self.view.decisions:
            decision = Decision(name)
            binding_id = WAY_BINDINGS.get(decision)
            if binding_id is not None:
                words = decision.label.lower() + ("…" if name in self.view.confirm else "")
                items.append((binding_id, words))
        return tuple(items)

    def offers(self, decision: str) -> bool:
        """True when the plan offers ``decision`` now and the card can take it."""
        return self.view.decision is None and decision in self.view.decisions and Decision(decision) in WAY_BINDINGS

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "decide":
            return bool(parameters) and self.offers(str(parameters[0]))
        return True

    def action_decide(self, decision: str) -> None:
        if not self.offers(decision):
            raise SkipAction()  # a key two decisions share goes on to the one the plan offers
        if not self.keys_armed():
            return
        view = self.view
        chosen = Decision(decision)
        self.post_message(DecisionRequested(view.plan_id, chosen))
        if decision not in view.confirm:  # a confirmed decision is shown once it is confirmed
            self.view = replace(view, decision=chosen)
            self.refresh_bindings()
