"""WorkflowView: the board of every plan by phase, and the chosen plan's details.

A wide terminal shows the board and the details side by side; a narrow one (an 80×24 terminal)
shows the board as a list, and the details one key away in its place.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import OptionList

from tunaflow_tui.screens.documents import DocumentScreen
from tunaflow_tui.viewmodels.board import board_order
from tunaflow_tui.viewmodels.plan_rows import PlanSummaryView
from tunaflow_tui.widgets.plan_board import PlanList
from tunaflow_tui.widgets.plan_detail import PlanDetail

__all__ = ["PlanDetail", "PlanList", "WorkflowView"]

WIDE = 100
"""From this many columns the details show beside the board; below, in its place, one key away."""


class WorkflowView(Horizontal):
    """The board on the left, the highlighted plan's details on the right (or in its place when narrow).

    Enter on a plan posts `PlanSelected(plan_id)`; Enter on a document opens it here, read-only.
    """

    DEFAULT_CSS = """
    WorkflowView { height: 1fr; }
    WorkflowView > #plan-list {
        width: 1fr; min-width: 30; height: 1fr; border: round $panel-lighten-2;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    WorkflowView > #plan-list:focus { border: round $accent; border-title-color: $accent; }
    WorkflowView > #plan-detail {
        width: 1fr; height: 1fr; padding: 0 1; border: round $panel-lighten-2; border-title-align: left;
    }
    WorkflowView > #plan-detail:focus-within { border: round $accent; }
    WorkflowView.-narrow > #plan-detail { display: none; }
    WorkflowView.-narrow.-details > #plan-list { display: none; }
    WorkflowView.-narrow.-details > #plan-detail { display: block; }
    """

    @dataclass
    class PlanSelected(Message):
        """Enter was pressed on a plan (for example to jump to its pending decision)."""

        plan_id: int

    @dataclass
    class PlanPointed(Message):
        """The user wants to write to the Architect about a plan (its ``#N`` goes into the composer)."""

        plan_id: int

    @dataclass
    class PlanHighlighted(Message):
        """The cursor moved to a plan."""

        plan_id: int

    def __init__(self, plans: tuple[PlanSummaryView, ...], *, focus_plan: int | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.plans = board_order(plans)
        self._focus_plan = focus_plan
        self._by_id = {plan.plan_id: plan for plan in self.plans}
        self._shown: PlanSummaryView | None = None

    def compose(self) -> ComposeResult:
        plan_list = PlanList(id="plan-list")
        plan_list.border_title = "Plans"
        yield plan_list
        detail = PlanDetail(id="plan-detail")
        detail.border_title = "Plan"
        yield detail

    def on_mount(self) -> None:
        self.query_one(PlanList).show_plans(self.plans, keep=self._focus_plan)
        self._show(self.selected)

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < WIDE
        self.set_class(narrow, "-narrow")
        if narrow and self.query_one(PlanDetail).has_focus_within:
            self.add_class("-details")  # the details keep the focus where they are: in place of the board

    @property
    def narrow(self) -> bool:
        """True when the details show in place of the board rather than beside it."""
        return self.has_class("-narrow")

    @property
    def showing_details(self) -> bool:
        """True when a narrow view shows the details in place of the board."""
        return self.narrow and self.has_class("-details")

    @property
    def selected(self) -> PlanSummaryView | None:
        """The highlighted plan."""
        plan_id = self.query_one(PlanList).highlighted_plan_id
        return None if plan_id is None else self._by_id.get(plan_id)

    def update_plans(self, plans: tuple[PlanSummaryView, ...]) -> None:
        """Replace the plans, keeping the highlighted plan (by id) when it still exists.

        The same plans leave the board as it is: other processes' writes bring it up to date often.
        """
        ordered = board_order(plans)
        if ordered == self.plans and self.query_one(PlanList).option_count:
            return
        plan_list = self.query_one(PlanList)
        previous = plan_list.highlighted_plan_id
        self.plans = ordered
        self._by_id = {plan.plan_id: plan for plan in ordered}
        plan_list.show_plans(ordered, keep=previous)
        self._show(self.selected)

    def _show(self, plan: PlanSummaryView | None) -> None:
        if plan == self._shown and plan is not None:
            return
        self._shown = plan
        detail = self.query_one(PlanDetail)
        detail.border_title = "Plan" if plan is None else f"Plan #{plan.plan_id}"
        detail.show(plan)

    def toggle_details(self) -> None:
        """Go into the details (narrow: in place of the board) or back to the board."""
        detail = self.query_one(PlanDetail)
        if self.showing_details or (not self.narrow and detail.has_focus_within):
            self.leave_details()
            return
        if self.selected is None:
            return
        self.add_class("-details")
        detail.scroll_home(animate=False)
        detail.focus()

    def leave_details(self) -> bool:
        """Back to the board from the details; False when the board had the focus already."""
        detail = self.query_one(PlanDetail)
        if not (self.showing_details or detail.has_focus_within):
            return False
        self.remove_class("-details")
        self.query_one(PlanList).focus()
        return True

    def focus_documents(self) -> None:
        """Put the cursor in the highlighted plan's documents (narrow: the details show in place of the board)."""
        if self.narrow:
            self.add_class("-details")
        self.query_one("#documents", OptionList).focus()

    def on_plan_detail_left(self, event: PlanDetail.Left) -> None:
        event.stop()
        self.leave_details()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id != "plan-list":
            return
        event.stop()
        plan = self.selected
        self._show(plan)
        if plan is not None:
            self.post_message(self.PlanHighlighted(plan.plan_id))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        plan = self.selected
        if plan is None:
            return
        if event.option_list.id == "plan-list":
            self.post_message(self.PlanSelected(plan.plan_id))
        elif event.option_list.id == "documents" and event.option.id is not None:
            self.open_document(int(event.option.id))

    def open_document(self, index: int | None = None) -> bool:
        """Open the selected plan's document ``index`` read-only (default: the one highlighted in the
        documents list, else the plan itself); False when the plan has no documents yet."""
        plan = self.selected
        if plan is None or not plan.documents:
            return False
        if index is None:
            index = self.query_one("#documents", OptionList).highlighted or 0
        name, path = plan.documents[min(index, len(plan.documents) - 1)]
        self.app.push_screen(DocumentScreen(name, path))
        return True
