"""PlanDetail: one plan's subtasks, tests, verdict, cost, documents and event timeline, in a scrolling panel."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from tunaflow_tui.core.counting import counted
from tunaflow_tui.viewmodels import glyphs
from tunaflow_tui.viewmodels.board import WAITING, column_of
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
VERDICT_STYLES = {"pass": "bold green", "fail": "bold red", "conditional": "bold yellow"}


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


def verdict_text(plan: PlanSummaryView) -> Text:
    """The last review's verdict, coloured, and its findings as bullets."""
    if not plan.verdict:
        return Text("not reviewed yet", style="dim italic")
    text = Text()
    head, _, verdict = plan.verdict.rpartition(": ")
    if head:
        text.append(f"{head}: ")
    text.append(verdict, style=VERDICT_STYLES.get(verdict, "bold"))
    for finding in plan.findings:
        text.append(f"\n• {finding}")
    return text


def cut_to(text: str, width: int, *, from_end: bool = False) -> str:
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
    tail = cut_to(name, room - room // 2, from_end=True)
    head = cut_to(name, room - cell_len(tail))
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


def _meta(plan: PlanSummaryView) -> Text:
    meta = Text()
    meta.append(plan.phase, style=PHASE_STYLES.get(plan.phase, "bold"))
    meta.append(f" · {plan.slug} · plan #{plan.plan_id}")
    if plan.cost:
        meta.append(f" · {plan.cost}")
    if plan.failures:
        meta.append(f" · {counted(plan.failures, 'failed review')}", style="red")
    if plan.working:
        meta.append(f"\n{glyphs.WORKING} an agent is working on it", style="bold green")
    elif column_of(plan) == WAITING:
        meta.append(f"\n{glyphs.WAITING} waiting for you: {plan.pending or plan.waiting.replace('_', ' ') or plan.phase}",
                    style="bold yellow")
    return meta


class PlanDetail(VerticalScroll):
    """The chosen plan: title and phase, then subtasks, tests, verdict, usage, documents and timeline.

    Escape posts `PlanDetail.Left` (the board takes the cursor back).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Back to plans", id="workflow.back_to_plans"),
    ]

    class Left(Message):
        """The user left the details for the board."""

    DEFAULT_CSS = """
    PlanDetail #plan-title { text-style: bold; }
    PlanDetail #plan-meta { color: $text-muted; }
    PlanDetail .heading { text-style: bold; color: $text-primary; margin-top: 1; }
    PlanDetail #documents { height: auto; max-height: 8; border: none; padding: 0; }
    PlanDetail #documents:focus { background: $boost; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="plan-title")
        yield Static("", id="plan-meta")
        yield Label("Subtasks", classes="heading")
        yield Static("", id="subtasks")
        yield Label("Tests", classes="heading")
        yield Static("", id="tests")
        yield Label("Verdict", classes="heading")
        yield Static("", id="verdict")
        yield Label("Usage", classes="heading")
        yield Static("", id="usage")
        yield Label("Documents", classes="heading")
        yield OptionList(id="documents")
        yield Label("Timeline", classes="heading")
        yield Static("", id="events")

    def action_leave(self) -> None:
        """Back to the board."""
        self.post_message(self.Left())

    def show(self, plan: PlanSummaryView | None) -> None:
        """Show ``plan`` (None: there is no plan yet)."""
        title = self.query_one("#plan-title", Static)
        documents = self.query_one("#documents", OptionList)
        documents.clear_options()
        if plan is None:
            title.update("No plans yet. Ask the Architect for one in the chat.")
            for widget_id in ("#plan-meta", "#subtasks", "#tests", "#verdict", "#events", "#usage"):
                self.query_one(widget_id, Static).update("")
            return
        title.update(Text(plan.title))
        self.query_one("#plan-meta", Static).update(_meta(plan))
        subtasks = subtask_table(plan.subtasks) if plan.subtasks else Text(
            "one piece of work (no subtasks)", style="dim italic")
        self.query_one("#subtasks", Static).update(subtasks)
        self.query_one("#tests", Static).update(Text(plan.tests) if plan.tests else Text(
            "no test run yet", style="dim italic"))
        self.query_one("#verdict", Static).update(verdict_text(plan))
        self.query_one("#usage", Static).update(Text(plan.usage_text or "no usage recorded"))
        if plan.documents:
            documents.add_options([Option(FileName(name), id=str(i)) for i, (name, _) in enumerate(plan.documents)])
            documents.highlighted = 0
        else:
            documents.add_option(Option(Text("no documents yet", style="dim italic"), disabled=True))
        events = timeline_table(plan.events) if plan.events else Text("no events yet", style="dim italic")
        self.query_one("#events", Static).update(events)
