"""Markdown exports of a conversation or a plan (``tunaflow export``).

Everything an agent wrote is untrusted: marker comments are scrubbed (an exported file never
carries a live marker) and terminal control sequences are neutralised, so printing an export to a
terminal cannot repaint the screen, set the title or write the clipboard.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from tunaflow_tui.core.markers import scrub_markers
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.ids import beyond_any_row
from tunaflow_tui.core.storage.records import (
    BranchRecord,
    MessageRecord,
    PlanEventRecord,
    PlanRecord,
)
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.core.turns import Usage
from tunaflow_tui.core.workflow.event_text import SETTLING_EVENTS, event_text, plan_outcome
from tunaflow_tui.core.workflow.phases import Phase, PlanEventType

__all__ = ["ExportError", "export_conversation", "export_plan", "find_plan"]

_PAGE = 500
_TICKS = {"done": "[x]", "failed": "[!]"}
_STATUS_NOTES = {
    "interrupted": "Interrupted: this answer stopped before it finished; the text above is what arrived.",
    "streaming": "Still streaming when exported: the text above is incomplete.",
}
_DETAIL_LIMIT = 200


class ExportError(Exception):
    """The thing to export does not exist; the message says what exists instead."""


def clean(text: str) -> str:
    """Agent text made safe for a Markdown file and a terminal: no markers, no control sequences."""
    return neutralize(scrub_markers(text))


def _one_line(text: str, limit: int = _DETAIL_LIMIT) -> str:
    flat = " ".join(clean(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _when(moment: datetime) -> str:
    zone = " UTC" if moment.utcoffset() is not None and not moment.utcoffset() else ""
    return moment.strftime("%Y-%m-%d %H:%M:%S") + zone


# -- conversations --------------------------------------------------------------------------------


def _speaker(message: MessageRecord) -> str:
    if message.role == "user":
        return "You"
    if message.role == "system":
        return "System"
    parts = [(message.persona or "assistant").capitalize()]
    parts += [part for part in (message.engine, message.model) if part]
    return " · ".join(_one_line(part, 60) for part in parts)


def _usage_text(usage: Usage) -> str:
    if not (usage.input_tokens or usage.output_tokens or usage.cost_usd):
        return ""
    text = f"{usage.input_tokens:,} tokens in · {usage.output_tokens:,} out"
    if usage.cached_tokens:
        text += f" · {usage.cached_tokens:,} cached"
    if usage.cost_usd is not None:
        text += f" · ${usage.cost_usd:.4f}"
    return text


def _message_markdown(message: MessageRecord) -> list[str]:
    lines = ["---", "", f"## {_speaker(message)}", "", f"*{_when(message.created_at)}*", ""]
    body = clean(message.content).strip("\n")
    lines += [body if body else "*(no text)*", ""]
    if message.status == "error":
        kind = _one_line(message.error_kind or "error", 60)
        note = f"> **Error ({kind})**"
        if message.error_message:
            note += f": {_one_line(message.error_message, 500)}"
        lines += [note, ""]
    elif message.status in _STATUS_NOTES:
        lines += [f"> **{_STATUS_NOTES[message.status]}**", ""]
    usage = _usage_text(message.usage)
    if usage:
        lines += [f"*{usage}*", ""]
    return lines


def _all_messages(store: Store, conversation_id: str) -> list[MessageRecord]:
    """Every message of a conversation, oldest first, read in pages (a conversation may be huge)."""
    pages: list[Sequence[MessageRecord]] = []
    before: int | None = None
    while True:
        page = store.list_messages(conversation_id, before_id=before, limit=_PAGE)
        if not page:
            break
        pages.append(page)
        if len(page) < _PAGE:
            break
        before = page[0].id
    return [message for page in reversed(pages) for message in page]


def _known_conversations(store: Store) -> list[str]:
    ids = ["main"]
    ids += [branch.shadow_conversation_id for branch in store.list_branches()]
    return ids


def export_conversation(store: Store, conversation_id: str = "main") -> str:
    """The conversation as Markdown; :class:`ExportError` if there is no such conversation.

    ``conversation_id`` is ``main``, ``branch:N`` or just ``N`` for branch N.
    """
    if conversation_id.isdigit():
        conversation_id = f"branch:{conversation_id}"
    branch: BranchRecord | None = None
    if conversation_id != "main":
        if store.get_conversation(conversation_id) is None:
            known = ", ".join(_known_conversations(store))
            raise ExportError(f"there is no conversation {conversation_id!r}; this project has: {known}")
        _, _, branch_number = conversation_id.partition(":")
        if branch_number.isdigit():
            branch = store.get_branch(int(branch_number))
    project = store.project
    title = "Main conversation" if branch is None else f"Branch #{branch.id}: {_one_line(branch.label, 120)}"
    lines = [f"# {title}", "", f"Project: {_one_line(project.name, 120)} (`{_one_line(project.path, 400)}`)"]
    if branch is not None:
        lines.append(f"Kind: {branch.kind} · mode: {branch.mode} · status: {branch.status}")
    messages = _all_messages(store, conversation_id)
    lines += [f"Messages: {len(messages)}", ""]
    if not messages:
        lines += ["*No messages yet.*", ""]
    for message in messages:
        lines += _message_markdown(message)
    return "\n".join(lines).rstrip("\n") + "\n"


# -- plans ----------------------------------------------------------------------------------------


def find_plan(store: Store, key: str) -> PlanRecord:
    """A plan by number or slug; :class:`ExportError` naming the plans that exist otherwise."""
    plan = store.get_plan(int(key)) if key.isdigit() and not beyond_any_row(key) else None
    if plan is None:
        plan = next((p for p in store.list_plans() if p.slug == key), None)
    if plan is not None:
        return plan
    plans = store.list_plans()
    if not plans:
        raise ExportError(f"there is no plan {key!r}; this project has no plans yet")
    known = ", ".join(f"{p.id} ({p.slug})" for p in plans)
    raise ExportError(f"there is no plan {key!r}; this project has plans: {known}")


def _bullets(items: Iterable[Any]) -> list[str]:
    return [f"- {_one_line(str(item), 1000)}" for item in items]


def _event_summary(event: PlanEventRecord) -> str:
    """One readable line for an event: its sentence, as the timeline and ``tunaflow status`` say it."""
    return _one_line(event_text(event.type, event.detail), 600)


def _scores_line(scores: Mapping[str, Any]) -> str:
    shown = []
    for name, value in scores.items():
        if isinstance(value, Mapping):
            mean = value.get("mean")
            spread = value.get("spread")
            if isinstance(mean, int | float):
                shown.append(f"{name} {mean:.1f}" + (f" (±{spread})" if spread else ""))
        elif isinstance(value, int | float):
            shown.append(f"{name} {value}")
    return ", ".join(_one_line(s, 60) for s in shown)


def _seat_lines(seat: Mapping[str, Any]) -> list[str]:
    name = _one_line(str(seat.get("seat") or "seat"), 60)
    engine = _one_line(str(seat.get("engine") or "?"), 60)
    error = seat.get("error")
    verdict = seat.get("verdict")
    outcome = f"review error: {_one_line(str(error), 300)}" if error or verdict is None else str(verdict)
    lines = [f"- **{name}** ({engine}): {_one_line(outcome, 300)}"]
    scores = seat.get("scores")
    if isinstance(scores, Mapping) and scores:
        lines.append(f"  - scores: {_scores_line(scores)}")
    for label, key in (("finding", "findings"), ("recommendation", "recommendations")):
        for item in seat.get(key) or ():
            lines.append(f"  - {label}: {_one_line(str(item), 1000)}")
    return lines


def _review_round(event: PlanEventRecord, decisions: Sequence[PlanEventRecord]) -> list[str]:
    aggregate = event.detail.get("aggregate")
    aggregate = aggregate if isinstance(aggregate, Mapping) else {}
    verdict = event.detail.get("verdict") or aggregate.get("verdict") or "no verdict (review error)"
    round_number = event.detail.get("round", "?")
    lines = [f"### Round {round_number}: {_one_line(str(verdict), 40)}", "", f"*{_when(event.created_at)}*", ""]
    scores = aggregate.get("scores")
    if isinstance(scores, Mapping) and scores:
        lines += [f"Scores: {_scores_line(scores)}", ""]
    failed = aggregate.get("failed_subtasks")
    if failed:
        lines += [f"Failed subtasks: {', '.join(str(i) for i in failed)}", ""]
    for heading, key in (("Findings", "findings"), ("Recommendations", "recommendations")):
        items = aggregate.get(key) or ()
        if items:
            lines += [f"{heading}:", "", *_bullets(items), ""]
    errors = aggregate.get("errors") or ()
    if errors:
        lines += [f"Review errors (not counted as a fail): {', '.join(_one_line(str(e), 60) for e in errors)}", ""]
    seats = aggregate.get("seats") or ()
    if seats:
        lines += ["Seats:", ""]
        for seat in seats:
            if isinstance(seat, Mapping):
                lines += _seat_lines(seat)
        lines.append("")
    for decision in decisions:
        lines += [f"Decision: {_event_summary(decision)} by {decision.actor}, {_when(decision.created_at)}", ""]
    return lines


_AFTER_REVIEW = SETTLING_EVENTS | {PlanEventType.REWORK_REQUESTED, PlanEventType.REDESIGN_REQUESTED,
                                    PlanEventType.DOOM_LOOP_ESCALATED, PlanEventType.REVIEW_RETRY_REQUESTED}


def _review_rounds(events: Sequence[PlanEventRecord]) -> list[str]:
    lines: list[str] = []
    for position, event in enumerate(events):
        if event.type != PlanEventType.REVIEW_FINISHED:
            continue
        decisions: list[PlanEventRecord] = []
        for later in events[position + 1 :]:
            if later.type == PlanEventType.REVIEW_FINISHED:
                break
            if later.type in _AFTER_REVIEW:
                decisions.append(later)
        lines += _review_round(event, decisions)
    return lines


def _branch_line(label: str, branch: BranchRecord | None, branch_id: int | None) -> str:
    if branch_id is None:
        return f"- {label}: none"
    if branch is None:
        return f"- {label}: #{branch_id} (deleted)"
    text = f"- {label}: #{branch.id} {_one_line(branch.label, 120)} ({branch.status}"
    if branch.git_branch:
        text += f", git `{_one_line(branch.git_branch, 120)}`"
    return text + f"; conversation `{branch.shadow_conversation_id}`)"


def export_plan(store: Store, plan_key: str) -> str:
    """The plan as Markdown (``plan_key`` is its number or slug); :class:`ExportError` if unknown."""
    plan = find_plan(store, plan_key)
    events = store.list_plan_events(plan.id)
    phase = plan.phase + (f" (held from {plan.held_from})" if plan.held_from else "")
    lines = [f"# Plan #{plan.id}: {_one_line(plan.title, 200)}", ""]
    lines += [
        f"- Phase: {phase}",
        f"- Slug: `{plan.slug}`",
        f"- Revision: {plan.revision} · review rounds: {plan.review_round}",
    ]
    if plan.pending_decision:
        held = " (on hold)" if plan.phase == Phase.HELD else ""
        lines.append(f"- Waiting for a decision: {plan.pending_decision}{held}")
    outcome = plan_outcome(events)
    if outcome is not None:
        lines.append(f"- Outcome: {_one_line(outcome.text, 600)}")
    if plan.git_branch:
        base = f" (base `{_one_line(plan.base_branch, 120)}`)" if plan.base_branch else ""
        lines.append(f"- Git branch: `{_one_line(plan.git_branch, 120)}`{base}")
    if plan.worktree_path:
        lines.append(f"- Worktree: `{_one_line(plan.worktree_path, 400)}`")
    lines += [f"- Created: {_when(plan.created_at)} · updated: {_when(plan.updated_at)}", ""]

    done = sum(1 for s in plan.subtasks if s.status == "done")
    lines += [f"## Subtasks ({done}/{len(plan.subtasks)} done)" if plan.subtasks else "## Subtasks", ""]
    if not plan.subtasks:
        lines.append("This plan has no subtasks.")
    for subtask in plan.subtasks:
        tick = _TICKS.get(subtask.status, "[ ]")
        line = f"- {tick} {subtask.index}. {_one_line(subtask.title, 300)}"
        if subtask.status == "failed":
            line += " (failed)"
        lines.append(line)
        details = clean(subtask.details).strip()
        if details:
            lines += [f"      {row}" if row.strip() else "" for row in details.splitlines()]
    lines.append("")

    lines += ["## Description", "", clean(plan.description).strip() or "*No description.*", ""]
    if plan.expected_outcome:
        lines += ["### Expected outcome", "", clean(plan.expected_outcome).strip(), ""]
    if plan.constraints:
        lines += ["### Constraints", "", *_bullets(plan.constraints), ""]
    if plan.non_goals:
        lines += ["### Non-goals", "", *_bullets(plan.non_goals), ""]

    rounds = _review_rounds(events)
    lines += ["## Review rounds", ""]
    lines += rounds if rounds else ["No review has finished yet.", ""]

    lines += ["## Branches", ""]
    impl = store.get_branch(plan.impl_branch_id) if plan.impl_branch_id is not None else None
    review = store.get_branch(plan.review_branch_id) if plan.review_branch_id is not None else None
    lines += [
        _branch_line("Implementation", impl, plan.impl_branch_id),
        _branch_line("Review", review, plan.review_branch_id),
        "",
    ]

    lines += [f"## Timeline ({len(events)} events)", ""]
    if not events:
        lines.append("No events yet.")
    for event in events:
        lines.append(f"- {_when(event.created_at)} · {event.actor} · {_event_summary(event)}")
    return "\n".join(lines).rstrip("\n") + "\n"
