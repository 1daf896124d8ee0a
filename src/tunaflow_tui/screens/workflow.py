"""WorkflowScreen: the workflow board (every plan by phase, and the chosen plan's details) over the whole window."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Header

from tunaflow_tui.viewmodels.glyphs import APP_ICON
from tunaflow_tui.viewmodels.plan_rows import PlanSummaryView
from tunaflow_tui.widgets.key_footer import KeyFooter
from tunaflow_tui.widgets.workflow_view import PlanList, WorkflowView


class WorkflowScreen(Screen[None]):
    """Every plan by phase — waiting for you, queued, dev, review, done — and the chosen plan's details.

    The owner keeps it current with :meth:`update_plans`; enter on a plan posts
    ``WorkflowView.PlanSelected`` (the app jumps to that plan's pending decision).
    """

    HELP = """
## Workflow board

Every plan, grouped: **waiting for you** (a question, a held plan, an interrupted step), **queued**,
**dev**, **review**, **done** (abandoned plans too). A row shows the plan's id, title, phase and cost;
**●** an agent works on it, **◆** it waits for you.

- **up / down** or **j / k** choose a plan; **enter** goes to it (its pending decision, else its card in the chat).
- **d** the plan's details: subtasks, tests, verdict, usage and cost, documents, timeline (beside the
  board on a wide terminal, in its place on a narrow one); **d** or **escape** back to the board.
- **#** writes about the plan: back in the chat, the composer starts with its `#N` (the Architect's
  turn is about that plan, and a proposal from it revises that plan).
- **o** opens the plan's document (the one highlighted under Documents; **tab** moves there).
- **escape** or **f3** goes back to the chat.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f3", "close", "Back to chat", id="workflow.close"),
        Binding("o", "open_document", "Open document", id="workflow.open_document"),
        Binding("number_sign", "point", "Write about it", id="workflow.write_about",
                tooltip="Back to the chat with the plan's #N in the composer"),
        Binding("d", "details", "Details", id="workflow.details",
                tooltip="The plan's subtasks, tests, verdict, cost, documents and timeline"),
    ]

    def __init__(self, plans: tuple[PlanSummaryView, ...], *, focus_plan: int | None = None,
                 focus_documents: bool = False) -> None:
        super().__init__()
        self.plans = plans
        self._focus_plan = focus_plan
        self._focus_documents = focus_documents

    def compose(self) -> ComposeResult:
        yield Header(icon=APP_ICON)
        yield WorkflowView(self.plans, focus_plan=self._focus_plan, id="workflow")
        app = self.app
        yield KeyFooter(first=getattr(app, "footer_first", ("help",)), keep=getattr(app, "footer_keep", ("quit",)),
                        then=getattr(app, "footer_then", ()))

    def on_mount(self) -> None:
        view = self.query_one(WorkflowView)
        plan_list = view.query_one(PlanList)
        if self._focus_documents and self.plans:
            self.call_after_refresh(view.focus_documents)  # once its width says whether it is narrow
        else:
            plan_list.focus()

    def focus_documents(self) -> None:
        """Put the cursor in the highlighted plan's documents."""
        self.query_one(WorkflowView).focus_documents()

    def update_plans(self, plans: tuple[PlanSummaryView, ...]) -> None:
        """Show the plans as they are now (keeps the highlighted plan)."""
        self.plans = plans
        if self.is_mounted:
            self.query_one(WorkflowView).update_plans(plans)

    def action_open_document(self) -> None:
        """Open the highlighted plan's document read-only, or say it has none yet."""
        view = self.query_one(WorkflowView)
        if not view.open_document():
            plan = view.selected
            self.notify(f"Plan {plan.plan_id} has no documents yet." if plan else "No plans yet.",
                        severity="warning")

    def action_point(self) -> None:
        """Back to the chat to write to the Architect about the highlighted plan."""
        plan = self.query_one(WorkflowView).selected
        if plan is None:
            self.notify("No plans yet.", severity="warning")
            return
        self.post_message(WorkflowView.PlanPointed(plan.plan_id))

    def action_details(self) -> None:
        """Into the highlighted plan's details, or back to the board."""
        self.query_one(WorkflowView).toggle_details()

    def action_close(self) -> None:
        """Back to the board from a narrow view's details, else back to the chat."""
        view = self.query_one(WorkflowView)
        if view.showing_details and view.leave_details():
            return
        self.dismiss()
