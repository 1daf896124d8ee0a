"""WorkflowScreen: the workflow view (plans, subtasks, timeline, documents, usage) over the whole window."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Header, OptionList

from tunaflow_tui.viewmodels.glyphs import APP_ICON
from tunaflow_tui.viewmodels.plan_rows import PlanSummaryView
from tunaflow_tui.widgets.key_footer import KeyFooter
from tunaflow_tui.widgets.workflow_view import WorkflowView


class WorkflowScreen(Screen[None]):
    """Every plan with its phase, ticking subtasks, event timeline, documents and usage.

    The owner keeps it current with :meth:`update_plans`; enter on a plan posts
    ``WorkflowView.PlanSelected`` (the app jumps to that plan's pending decision).
    """

    HELP = """
## Workflow

- **up / down** choose a plan; **enter** goes to it (its pending decision, else its card in the chat).
- **o** opens the plan's document (the one highlighted under Documents; **tab** moves there).
- **escape** or **f3** goes back to the chat.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f3", "close", "Back to chat", id="workflow.close"),
        Binding("o", "open_document", "Open document", id="workflow.open_document"),
    ]

    def __init__(self, plans: tuple[PlanSummaryView, ...], *, focus_plan: int | None = None,
                 focus_documents: bool = False) -> None:
        super().__init__()
        self.plans = plans
        self._focus_plan = focus_plan
        self._focus_documents = focus_documents

    def compose(self) -> ComposeResult:
        yield Header(icon=APP_ICON)
        yield WorkflowView(self.plans, id="workflow")
        app = self.app
        yield KeyFooter(first=getattr(app, "footer_first", ("help",)), keep=getattr(app, "footer_keep", ("quit",)),
                        then=getattr(app, "footer_then", ()))

    def on_mount(self) -> None:
        view = self.query_one(WorkflowView)
        plan_list = view.query_one("#plan-list", OptionList)
        ids = [p.plan_id for p in self.plans]
        if self._focus_plan in ids:
            plan_list.highlighted = ids.index(self._focus_plan)
        target = view.query_one("#documents", OptionList) if self._focus_documents and self.plans else plan_list
        target.focus()

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

    def action_close(self) -> None:
        """Back to the chat."""
        self.dismiss()
