"""Markdown for plan, task, review and result documents. Every output is free of live markers."""

from __future__ import annotations

import re

from tunaflow_tui.core.markers import scrub_markers
from tunaflow_tui.core.plandocs.plandoc_model import PlanDocument, PlanSubtask

# A marker opener left over after scrubbing (unclosed, or assembled from pieces) is defused.
_LEFTOVER_MARKER_RE = re.compile(r"<!--(?=\s*tunaflow)", re.IGNORECASE)
_MAX_SCRUB_PASSES = 8


def clean_markdown(text: str) -> str:
    """Scrub markers, normalise line endings to ``\\n`` and end with exactly one newline."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    for _ in range(_MAX_SCRUB_PASSES):
        scrubbed = scrub_markers(text)
        if scrubbed == text:
            break
        text = scrubbed
    text = _LEFTOVER_MARKER_RE.sub("&lt;!--", text)
    return text.strip("\n") + "\n"


def one_line(text: str) -> str:
    """Collapse a title to a single line (a heading cannot span lines)."""
    return " ".join(text.split())


def task_file_name(slug: str, index: int) -> str:
    """``{slug}-task-NN.md`` (1-based, at least two digits)."""
    return f"{slug}-task-{index:02d}.md"


def _bullets(items: tuple[str, ...]) -> str:
    return "\n".join(f"- {one_line(item)}" for item in items if item.strip())


def _section(title: str, body: str) -> list[str]:
    return [f"## {title}", "", body.strip(), ""] if body.strip() else []


def render_plan(doc: PlanDocument) -> str:
    """The plan document: overview, description, outcome, constraints, non-goals and subtask checklist."""
    lines = [f"# {one_line(doc.title) or doc.slug}", "", f"- Plan: `{doc.slug}`", f"- Revision: {doc.revision}", ""]
    lines += _section("Description", doc.description)
    lines += _section("Expected outcome", doc.expected_outcome)
    lines += _section("Constraints", _bullets(doc.constraints))
    lines += _section("Non-goals", _bullets(doc.non_goals))
    lines += ["## Subtasks", ""]
    if not doc.subtasks:
        lines.append("This plan has no subtasks.")
    for sub in doc.subtasks:
        box = "x" if sub.status == "done" else " "
        name = task_file_name(doc.slug, sub.index)
        lines.append(f"{sub.index}. [{box}] {one_line(sub.title)} — [{name}]({name})")
    return clean_markdown("\n".join(lines))


def render_task(doc: PlanDocument, subtask: PlanSubtask) -> str:
    """One task file: its title, status, details and a link back to the plan."""
    lines = [
        f"# Task {subtask.index:02d} — {one_line(subtask.title)}",
        "",
        f"- Plan: [{one_line(doc.title) or doc.slug}]({doc.slug}.md) (revision {doc.revision})",
        f"- Status: {one_line(subtask.status) or 'pending'}",
        "",
    ]
    lines += _section("Details", subtask.details) or ["## Details", "", "No further details were given.", ""]
    return clean_markdown("\n".join(lines))


def render_review(plan_title: str, round_no: int, body: str) -> str:
    """A review round document: heading plus the review text as given."""
    return clean_markdown(f"# Review round {round_no} — {one_line(plan_title)}\n\n{body.strip()}\n")


def render_result(plan_title: str, body: str) -> str:
    """The result document written when a plan is done."""
    return clean_markdown(f"# Result — {one_line(plan_title)}\n\n{body.strip()}\n")
