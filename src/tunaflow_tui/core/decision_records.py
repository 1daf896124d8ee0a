"""How a decision record reads: the one-line headline and the details behind it.

A decision record is a system message in the plan's conversation whose ``meta`` (kind
:data:`DECISION_KIND`) holds what was decided, by whom and when, with the feedback and a copy of what
the decision was about (the proposal as it stood, the review round's verdicts, the merged branch).
The chat shows :func:`headline` and unfolds :func:`detail_lines`; the message's text (what ``export``
and search read) is :func:`record_markdown` of the same data, so every place says the same words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.core.workflow.phases import PlanEventType

DECISION_KIND = "decision"
"""``meta["kind"]`` of a decision record."""

HEADLINE_LIMIT = 60
"""Characters of feedback or a reason quoted in the headline (the details hold all of it)."""

_GLYPHS: dict[str, str] = {
    PlanEventType.APPROVED: "✓",
    PlanEventType.ACCEPTED: "✓",
    PlanEventType.ACCEPTED_PARTIAL_REVIEW: "✓",
    PlanEventType.ACCEPTED_OVER_FAILED_REVIEW: "✓",
    PlanEventType.MERGED: "⇢",
    PlanEventType.REVISION_REQUESTED: "↻",
    PlanEventType.REWORK_REQUESTED: "↻",
    PlanEventType.REDESIGN_REQUESTED: "↻",
    PlanEventType.DEV_CONTINUED: "↻",
    PlanEventType.HELD: "⏸",
    PlanEventType.RESUMED: "▶",
    PlanEventType.PLAN_EDITED: "✎",
    PlanEventType.ABANDONED: "✗",
    PlanEventType.MERGE_CONFLICT: "✗",
    PlanEventType.CONFLICT_RESOLUTION_REQUESTED: "↻",
    PlanEventType.CONFLICT_LEFT: "⏸",
}

RECORDED_EVENTS = frozenset(_GLYPHS)
"""The plan events the user's decisions write that get a record in the chat."""


def _text(value: object) -> str:
    return neutralize(str(value or "")).strip()


def _flat(value: object, limit: int | None = None) -> str:
    text = " ".join(_text(value).split())
    if limit is not None and len(text) > limit:
        return text[: limit - 1] + "…"
    return text


def _quoted(value: object) -> str:
    text = _flat(value, HEADLINE_LIMIT)
    return f": “{text}”" if text else ""


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _items(value: object) -> list[object]:
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str) else []


def _plan(meta: Mapping[str, object]) -> str:
    title = _flat(meta.get("plan_title"), 40)
    number = meta.get("plan_id")
    return f"plan {number}" + (f" “{title}”" if title else "")


def _round(verdict: Mapping[str, object]) -> str:
    number = verdict.get("round")
    result = _flat(verdict.get("verdict"), 20) or "no verdict"
    return (f"review round {number}" if isinstance(number, int) else "the review") + f" ({result})"


def _when(meta: Mapping[str, object], *, full: bool) -> str:
    try:
        moment = datetime.fromisoformat(str(meta.get("at") or ""))
    except ValueError:
        return ""
    if moment.tzinfo is not None:
        moment = moment.astimezone()  # the user's clock, as the timeline shows it
    return moment.strftime("%Y-%m-%d %H:%M %Z" if full else "%H:%M").strip()


def _what(meta: Mapping[str, object]) -> str:
    """The headline without its glyph and time."""
    event = str(meta.get("event") or "")
    plan = _plan(meta)
    verdict = _mapping(meta.get("verdict"))
    merge = _mapping(meta.get("merge"))
    feedback, reason = meta.get("feedback"), meta.get("reason")
    revision = _mapping(meta.get("proposal")).get("revision")
    of_revision = f" (revision {revision})" if isinstance(revision, int) else ""
    branch = _flat(merge.get("branch"), 60) or "the plan's branch"
    base = _flat(merge.get("base"), 40) or "the base branch"
    sentences: dict[str, str] = {
        PlanEventType.APPROVED: f"You approved {plan}{of_revision}",
        PlanEventType.REVISION_REQUESTED: f"You asked for a revision of {plan}{_quoted(feedback)}",
        PlanEventType.HELD: f"You put {plan} on hold",
        PlanEventType.RESUMED: f"You took {plan} off hold",
        PlanEventType.PLAN_EDITED: f"You edited {plan}",
        PlanEventType.ACCEPTED: f"You accepted {_round(verdict)}: {plan} is done",
        PlanEventType.ACCEPTED_PARTIAL_REVIEW: f"You accepted an incomplete {_round(verdict)}: {plan} is done",
        PlanEventType.ACCEPTED_OVER_FAILED_REVIEW: f"You accepted {plan} over a failed {_round(verdict)}"
                                                   f"{_quoted(reason)}",
        PlanEventType.REWORK_REQUESTED: f"After {_round(verdict)} you asked for rework{_quoted(feedback)}",
        PlanEventType.REDESIGN_REQUESTED: f"After {_round(verdict)} you asked for a redesign{_quoted(feedback)}",
        PlanEventType.DEV_CONTINUED: f"You asked the Developer to continue {plan}",
        PlanEventType.ABANDONED: f"You abandoned {plan}{_quoted(reason)}",
        PlanEventType.MERGED: f"You merged {branch} into {base}" + (f" ({_flat(merge.get('how'), 30)})"
                                                                   if merge.get("how") else ""),
        PlanEventType.MERGE_CONFLICT: f"The merge of {branch} into {base} stopped on conflicts",
        PlanEventType.CONFLICT_RESOLUTION_REQUESTED: f"You asked the Developer to merge {base} into {plan} and "
                                                     "resolve the conflicts",
        PlanEventType.CONFLICT_LEFT: f"You left {plan} unmerged after its merge conflict",
    }
    return sentences.get(event, f"You decided on {plan}: {_flat(event, 40)}")


def headline(meta: Mapping[str, object]) -> str:
    """The record in one line: ``✓ You approved plan 1 “Title” (revision 2) · 14:03``."""
    glyph = _GLYPHS.get(str(meta.get("event") or ""), "•")
    when = _when(meta, full=False)
    return f"{glyph} {_what(meta)}" + (f" · {when}" if when else "")


def _proposal_lines(proposal: Mapping[str, object]) -> list[str]:
    revision = proposal.get("revision")
    title = _flat(proposal.get("title"), 200) or "Untitled plan"
    lines = ["Proposal" + (f" (revision {revision})" if isinstance(revision, int) else "") + f": {title}"]
    lines += [f"  {index}. {_flat(subtask, 200)}" for index, subtask in enumerate(_items(proposal.get("subtasks")), 1)]
    return lines


def _verdict_lines(verdict: Mapping[str, object]) -> list[str]:
    lines = [_round(verdict)[0].upper() + _round(verdict)[1:]]
    for raw in _items(verdict.get("seats")):
        seat = _mapping(raw)
        engine = _flat(seat.get("engine"), 40)
        who = _flat(seat.get("seat"), 40) + (f" ({engine})" if engine else "")
        answer = _flat(seat.get("verdict"), 20) or f"no verdict ({_flat(seat.get('error'), 80) or 'error'})"
        scores = _mapping(seat.get("scores"))
        scored = ", ".join(f"{_flat(name, 30)} {value}" for name, value in scores.items())
        lines.append(f"  {who}: {answer}" + (f" · {scored}" if scored else ""))
    lines += [f"  • {_flat(finding, 300)}" for finding in _items(verdict.get("findings"))]
    return lines


def _multiline(label: str, value: object) -> list[str]:
    text = _text(value)
    if not text:
        return []
    first, *rest = text.splitlines()
    return [f"{label}: {first}", *(f"  {line}" for line in rest)]


def detail_lines(meta: Mapping[str, object]) -> list[str]:
    """What unfolds under the headline: who decided when, the feedback, and what was decided on."""
    when = _when(meta, full=True)
    lines = [f"Decided by {_flat(meta.get('by'), 40) or 'you'}" + (f" at {when}" if when else "")]
    lines += _multiline("Feedback", meta.get("feedback"))
    lines += _multiline("Reason", meta.get("reason"))
    merge = _mapping(meta.get("merge"))
    if merge.get("message"):
        lines.append(f"Merge: {_flat(merge.get('message'), 300)}")
    proposal = _mapping(meta.get("proposal"))
    if proposal:
        lines += _proposal_lines(proposal)
    verdict = _mapping(meta.get("verdict"))
    if verdict:
        lines += _verdict_lines(verdict)
    return lines


def record_markdown(meta: Mapping[str, object]) -> str:
    """The record as the message's text (export, search): the headline in bold, the details as a list."""
    items = [f"  - {line.strip()}" if line.startswith("  ") else f"- {line}" for line in detail_lines(meta)]
    return f"**{headline(meta)}**\n\n" + "\n".join(items)
