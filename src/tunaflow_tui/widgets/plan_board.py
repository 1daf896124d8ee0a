"""PlanList: the workflow board's plans, grouped by phase, one line per plan.

Each row is ``mark #id title…  phase-mark  cost``: the mark says an agent works on the plan (●) or
that it waits for you (◆); the title is cut with an ellipsis at a word where it can be, so the phase
mark and the cost always show. Group headings (Waiting for you, Queued, Dev, Review, Done) are rows
the cursor passes over.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tunaflow_tui.core.workflow.phases import Phase
from tunaflow_tui.viewmodels import glyphs
from tunaflow_tui.viewmodels.board import DONE, QUEUED, WAITING, board_groups, column_of, row_mark
from tunaflow_tui.viewmodels.plan_rows import PlanSummaryView
from tunaflow_tui.widgets.plan_detail import cut_to
from tunaflow_tui.widgets.sidebar import PHASE_STYLES

MARK_WIDTH = 12
"""Cells of the phase mark column (``review error``, ``rework 10/12``)."""
COST_WIDTH = 9
"""Cells of the cost column (``12.4k tok``)."""


def cut_title(title: str, width: int) -> str:
    """``title`` whole when it fits in ``width`` cells, else cut with ``…`` — after a whole word when one
    ends in the last third of the room, else wherever the room ends."""
    if cell_len(title) <= width:
        return title
    if width < 1:
        return ""
    head = cut_to(title, width - 1)
    space = head.rfind(" ")
    if space >= 0 and cell_len(head[:space]) >= (width - 1) * 2 // 3:
        head = head[:space]
    return head.rstrip() + "…"


def _mark_style(plan: PlanSummaryView) -> str:
    column = column_of(plan)
    if column == WAITING:
        return "bold yellow"
    if column == DONE:
        return PHASE_STYLES.get(plan.phase, "dim")
    if column == QUEUED:
        return PHASE_STYLES[QUEUED]
    return PHASE_STYLES.get(plan.phase, "bold")


def row_text(plan: PlanSummaryView, width: int) -> Text:
    """The plan's row in ``width`` cells; a narrow row drops the cost first, then the phase mark."""
    text = Text(no_wrap=True, overflow="crop")
    if plan.working:
        text.append(glyphs.WORKING, style="bold green")
    elif column_of(plan) == WAITING:
        text.append(glyphs.WAITING, style="bold yellow")
    else:
        text.append(" ")
    ident = f" #{plan.plan_id}"
    text.append(f"{ident:<5} ", style="dim")
    mark = row_mark(plan)
    mark_cells = 1 + max(MARK_WIDTH, cell_len(mark))
    cost_cells = 1 + COST_WIDTH
    room = width - text.cell_len
    show_mark = room - mark_cells >= 8
    show_cost = show_mark and room - mark_cells - cost_cells >= 12
    room -= (mark_cells if show_mark else 0) + (cost_cells if show_cost else 0)
    title = cut_title(plan.title, max(room, 0))
    title_style = "dim strike" if plan.phase == Phase.ABANDONED else "dim" if plan.phase == Phase.DONE else ""
    text.append(title, style=title_style)
    text.append(" " * max(room - cell_len(title), 0))
    if show_mark:
        text.append(" ")
        text.append(f"{mark:<{mark_cells - 1}}", style=_mark_style(plan))
    if show_cost:
        text.append(" ")
        text.append(f"{plan.cost:>{COST_WIDTH}}", style="dim")
    return text


class PlanRow:
    """A plan's row, laid out for the width the list gives it."""

    def __init__(self, plan: PlanSummaryView) -> None:
        self.plan = plan

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield row_text(self.plan, options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(20, options.max_width)


def heading_text(heading: str, count: int) -> Text:
    """A group's heading row: ``Waiting for you 2``."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(heading, style="bold")
    text.append(f" {count}", style="dim")
    return text


class PlanList(OptionList):
    """The plans by phase group; enter goes to the highlighted plan (its waiting decision, else its card)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Go to plan", id="workflow.go_to_plan"),
        Binding("j", "cursor_down", "Next plan", show=False, id="workflow.next_plan"),
        Binding("k", "cursor_up", "Previous plan", show=False, id="workflow.previous_plan"),
    ]

    DEFAULT_CSS = """
    PlanList > .option-list--option-disabled { color: $text-primary; }
    """

    def show_plans(self, plans: tuple[PlanSummaryView, ...], keep: int | None = None) -> None:
        """List ``plans`` under their group headings, the cursor on plan ``keep`` (else the first plan)."""
        options: list[Option] = []
        for group in board_groups(plans):
            options.append(Option(heading_text(group.heading, len(group.plans)), id=f"group-{group.column}",
                                  disabled=True))
            options.extend(Option(PlanRow(plan), id=f"plan-{plan.plan_id}") for plan in group.plans)
        if not options:
            options.append(Option(Text("No plans yet. Ask the Architect for one in the chat.", style="italic"),
                                  disabled=True))
        self.clear_options()
        self.add_options(options)
        ids = [option.id for option in options]
        wanted = f"plan-{keep}"
        first = next((i for i, option in enumerate(options) if not option.disabled), None)
        self.highlighted = ids.index(wanted) if wanted in ids else first

    @property
    def highlighted_plan_id(self) -> int | None:
        """The id of the plan under the cursor."""
        index = self.highlighted
        if index is None or not 0 <= index < self.option_count:
            return None
        option_id = self.get_option_at_index(index).id or ""
        return int(option_id.removeprefix("plan-")) if option_id.startswith("plan-") else None
