"""WorkflowView: every plan with its phase, subtasks, event timeline, documents and usage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from tunaflow_tui.core.counting import counted
from tunaflow_tui.screens.documents import DocumentScreen
from tunaflow_tui.viewmodels.plan_rows import (
    SUBTASK_DONE,
    SUBTASK_FAILED,
    EventView,
    PlanSummaryView,
    SubtaskView,
)
from tunaflow_tui.widgets.inline import inline_text
from tunaflow_tui.widgets.sidebar import PHASE_STYLES

SUBTASK_GLYPHS = {SUBTASK_DONE: ("✓", "bold green"), SUBTASK_FAILED: ("✗", "bold red")}


def subtask_table(tasks: tuple[SubtaskView, ...]) -> Table:
    """``✓  1. title`` rows, the glyph coloured by status (pending is a dim dot); a wrapped title stays
    indented under its text, and Markdown code spans show without their backticks."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(ratio=1)
    for task in tasks:
        glyph, style = SUBTASK_GLYPHS.get(task.status, ("·", "dim"))
        title = inline_text(task.title)
        if task.status == SUBTASK_DONE:
            title.stylize("dim")
        grid.add_row(Text(glyph, style=style), f"{task.index:>2}.", title)
    return grid


def timeline_table(events: tuple[EventView, ...]) -> Table:
    """``time  actor  sentence`` rows; a long sentence wraps under itself, never under the time."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, style="dim")
    grid.add_column(no_wrap=True, style="dim")
    grid.add_column(ratio=1)
    for event in events:
        grid.add_row(event.time, event.actor, Text(event.text or event.type.replace("_", " ")))
    return grid


def _cut_to(text: str, width: int, *, from_end: bool = False) -> str:
    """The longest start (or end) of ``text`` that fits in ``width`` cells (wide characters count two)."""
    taken = ""
    for char in (reversed(text) if from_end else text):
        if cell_len(taken) + cell_len(char) > width:
            break
        taken = char + taken if from_end else taken + char
    return taken


def middle_ellipsis(name: str, width: int) -> str:
    """``name`` whole when it fits in ``width`` cells, else its start and end around ``…``.

    The end is kept a little longer than the start: a plan's documents share their start (the plan's
    name) and differ at the end (``-review-r2.md``).
    """
    if cell_len(name) <= width:
        return name
    if width < 1:
        return ""
    room = width - 1
    tail = _cut_to(name, room - room // 2, from_end=True)
    head = _cut_to(name, room - cell_len(tail))
    return f"{head}…{tail}"


class FileName:
    """A file name drawn on one line, cut in the middle to the width it gets (never broken mid-word)."""

    def __init__(self, name: str, style: str = "") -> None:
        self.name = name
        self.style = style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text(middle_ellipsis(self.name, options.max_width), style=self.style, no_wrap=True)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(min(cell_len(self.name), 8), cell_len(self.name))


class PlanList(OptionList):
    """The plans; enter goes to the highlighted plan (its waiting decision, else its card in the chat)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Go to plan", id="workflow.go_to_plan"),
    ]


def plan_prompt(plan: PlanSummaryView) -> Text:
    """The plan list row: phase badge, title, and a marker when a decision waits."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{plan.phase:<9}", style=PHASE_STYLES.get(plan.phase, "bold"))
    text.append(" ")
    text.append(plan.title)
    if plan.pending:
        text.append("  ● ", style="bold yellow")
        text.append(plan.pending, style="yellow")
    return text


class WorkflowView(Horizontal):
    """Plans on the left; the highlighted plan's subtasks, timeline, documents and usage on the right.

    Enter on a plan posts `PlanSelected(plan_id)`; Enter on a document opens it here, read-only.
    """

    DEFAULT_CSS = """
    WorkflowView { height: 1fr; }
    WorkflowView > #plan-list {
        width: 2fr; min-width: 30; height: 1fr; border: round $panel-lighten-2;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    WorkflowView > #plan-list:focus { border: round $accent; border-title-color: $accent; }
    WorkflowView > #plan-detail {
        width: 3fr; height: 1fr; padding: 0 1; border: round $panel-lighten-2; border-title-align: left;
    }
    WorkflowView > #plan-detail:focus-within { border: round $accent; }
    WorkflowView #plan-title { text-style: bold; }
    WorkflowView #plan-meta { color: $text-muted; }
    WorkflowView .heading { text-style: bold; color: $text-primary; margin-top: 1; }
    WorkflowView #documents { height: auto; max-height: 8; border: none; padding: 0; }
    WorkflowView #documents:focus { background: $boost; }
    WorkflowView #empty { color: $text-muted; padding: 1 2; }
    """

    @dataclass
    class PlanSelected(Message):
        """Enter was pressed on a plan (for example to jump to its pending decision)."""

        plan_id: int

    @dataclass
    class PlanHighlighted(Message):
        """The cursor moved to a plan."""

        plan_id: int

    def __init__(self, plans: tuple[PlanSummaryView, ...], *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.plans = plans

    def compose(self) -> ComposeResult:
        plan_list = PlanList(id="plan-list")
        plan_list.border_title = "Plans"
        yield plan_list
        detail = VerticalScroll(id="plan-detail")
        detail.border_title = "Plan"
        with detail:
            yield Static("", id="plan-title")
            yield Static("", id="plan-meta")
            yield Label("Subtasks", classes="heading")
            yield Static("", id="subtasks")
            yield Label("Timeline", classes="heading")
            yield Static("", id="events")
            yield Label("Documents", classes="heading")
            yield OptionList(id="documents")
            yield Label("Usage", classes="heading")
            yield Static("", id="usage")

    def on_mount(self) -> None:
        self.update_plans(self.plans)

    @property
    def selected(self) -> PlanSummaryView | None:
        """The highlighted plan."""
        index = self.query_one("#plan-list", OptionList).highlighted
        if index is None or not 0 <= index < len(self.plans):
            return None
        return self.plans[index]

    def update_plans(self, plans: tuple[PlanSummaryView, ...]) -> None:
        """Replace the plans, keeping the highlighted plan (by id) when it still exists."""
        plan_list = self.query_one("#plan-list", OptionList)
        previous = self.selected
        index = plan_list.highlighted
        self.plans = plans
        plan_list.clear_options()
        plan_list.add_options([Option(plan_prompt(p), id=f"plan-{p.plan_id}") for p in plans])
        if not plans:
            self._show(None)
            return
        ids = [p.plan_id for p in plans]
        if previous is not None and previous.plan_id in ids:
            index = ids.index(previous.plan_id)
        plan_list.highlighted = min(index or 0, len(plans) - 1)
        self._show(self.selected)

    def _show(self, plan: PlanSummaryView | None) -> None:
        title = self.query_one("#plan-title", Static)
        documents = self.query_one("#documents", OptionList)
        documents.clear_options()
        if plan is None:
            title.update("No plans yet. Ask the Architect for one in the chat.")
            for widget_id in ("#plan-meta", "#subtasks", "#events", "#usage"):
                self.query_one(widget_id, Static).update("")
            return
        title.update(Text(plan.title))
        meta = Text()
        meta.append(plan.phase, style=PHASE_STYLES.get(plan.phase, "bold"))
        meta.append(f" · {plan.slug} · plan #{plan.plan_id}")
        if plan.failures:
            meta.append(f" · {counted(plan.failures, 'failed review')}", style="red")
        if plan.pending:
            meta.append(f"\n● waiting for you: {plan.pending}", style="bold yellow")
        self.query_one("#plan-meta", Static).update(meta)
        subtasks = subtask_table(plan.subtasks) if plan.subtasks else Text(
            "one piece of work (no subtasks)", style="dim italic")
        self.query_one("#subtasks", Static).update(subtasks)
        events = timeline_table(plan.events) if plan.events else Text("no events yet", style="dim italic")
        self.query_one("#events", Static).update(events)
        if plan.documents:
            documents.add_options([Option(FileName(name), id=str(i)) for i, (name, _) in enumerate(plan.documents)])
            documents.highlighted = 0
        else:
            documents.add_option(Option(Text("no documents yet", style="dim italic"), disabled=True))
        self.query_one("#usage", Static).update(Text(plan.usage_text or "no usage recorded"))

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
