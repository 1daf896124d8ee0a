"""The user's edit of a proposal before approval: its content, a Markdown text round-trip, a change summary.

:func:`proposal_to_editable_text` writes a plan's proposal as Markdown with the section names of the
marker protocol (``# Title``, ``## Subtasks``, ``## Description``, ``## Expected outcome``,
``## Constraints``, ``## Non-goals``), so editing it in ``$EDITOR`` feels like writing a proposal.
:func:`parse_edited_proposal` reads it back strictly: anything it cannot place is a
:class:`ProposalTextError` naming the line, and nothing is changed. Section names are matched as the
marker parser matches them (any case; English, Korean, Indonesian), but only on ``#`` heading lines,
so prose such as ``Summary: …`` inside a description stays prose.

Subtasks are a list (``1.`` or ``-``), one item each, with details indented under the item; they
are numbered by position, so adding, removing and reordering is moving lines.
"""

from __future__ import annotations

import difflib
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from tunaflow_tui.core.markers.sections import list_item, split_heading

MAX_TEXT_CHARS: Final = 200_000
MAX_SUBTASKS: Final = 200
MAX_TITLE_CHARS: Final = 200
_SUMMARY_CHARS: Final = 80
_ALIKE: Final = 0.5  # how similar two subtask titles must be to count as one reworded
_SECTIONS: Final = frozenset({"title", "subtasks", "description", "expected_outcome", "constraints", "non_goals"})
_HEADINGS: Final[dict[str, str]] = {
    "subtasks": "Subtasks",
    "description": "Description",
    "expected_outcome": "Expected outcome",
    "constraints": "Constraints",
    "non_goals": "Non-goals",
}
_FREE_TEXT: Final = frozenset({"description", "expected_outcome"})
EDITOR_GUIDE: Final = (
    "<!-- Edit the plan, save, and close the editor; close without saving to keep it as it was.\n"
    "     Subtasks: one list item each (\"1. Title\"), details indented under it. Add, remove or\n"
    "     reorder items freely: they are numbered by their position. -->"
)
"""What ``$EDITOR`` shows above the proposal (the app's own dialog says it in its label instead)."""


class ProposalTextError(ValueError):
    """The edited text cannot be read as a proposal; ``line`` (1-based) is where the problem is."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line = line
        self.problem = problem


class _SubtaskLike(Protocol):
    @property
    def title(self) -> str: ...

    @property
    def details(self) -> str: ...


class ProposalLike(Protocol):
    """Anything that carries a proposal's content (a stored plan, an :class:`EditedProposal`)."""

    @property
    def title(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def expected_outcome(self) -> str | None: ...

    @property
    def constraints(self) -> Sequence[str]: ...

    @property
    def non_goals(self) -> Sequence[str]: ...

    @property
    def subtasks(self) -> Sequence[_SubtaskLike]: ...


@dataclass(frozen=True)
class EditedSubtask:
    """One subtask of an edited proposal: a one-line title and free-text details."""

    title: str
    details: str = ""


@dataclass(frozen=True)
class EditedProposal:
    """A proposal's content as the user approves it: title, subtasks, description, outcome, limits."""

    title: str
    subtasks: tuple[EditedSubtask, ...] = ()
    description: str = ""
    expected_outcome: str | None = None
    constraints: tuple[str, ...] = ()
    non_goals: tuple[str, ...] = ()

    @classmethod
    def of(cls, proposal: ProposalLike) -> EditedProposal:
        """The content of a stored plan (or any proposal-like object)."""
        return cls(
            title=proposal.title,
            subtasks=tuple(EditedSubtask(s.title, s.details) for s in proposal.subtasks),
            description=proposal.description,
            expected_outcome=proposal.expected_outcome or None,
            constraints=tuple(proposal.constraints),
            non_goals=tuple(proposal.non_goals),
        )

    def subtask_pairs(self) -> tuple[tuple[str, str], ...]:
        """``(title, details)`` per subtask, as the store takes them."""
        return tuple((s.title, s.details) for s in self.subtasks)

    def outline(self) -> dict[str, object]:
        """A short JSON-ready outline (title and subtask titles), for the record of an edit."""
        return {"title": self.title, "subtasks": [s.title for s in self.subtasks]}


# -- writing ---------------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _indented(text: str, prefix: str) -> list[str]:
    return [f"{prefix}{row}" if row.strip() else "" for row in text.strip("\n").splitlines()]


def without_editor_guide(text: str) -> str:
    """``text`` without the :data:`EDITOR_GUIDE` it starts with (as it was written), else unchanged."""
    return text.removeprefix(EDITOR_GUIDE + "\n")


def proposal_to_editable_text(proposal: ProposalLike, *, guide: bool = True) -> str:
    """The proposal as Markdown to edit; :func:`parse_edited_proposal` reads it back unchanged.

    ``guide``: start with :data:`EDITOR_GUIDE`, the note for a text editor.
    """
    title = _one_line(proposal.title)
    # a title that reads as a section name ("Description", "Title: x") is written under its own heading
    plain = _section_of(f"# {title}") is None and split_heading(f"# {title}", frozenset({"title"})) is None
    lines = [*([EDITOR_GUIDE] if guide else []), *([f"# {title}"] if plain else ["## Title", title])]
    lines += ["", f"## {_HEADINGS['subtasks']}"]
    for position, subtask in enumerate(proposal.subtasks, start=1):
        lead = f"{position}. "
        lines.append(f"{lead}{_one_line(subtask.title)}")
        lines += _indented(subtask.details, " " * len(lead))
    lines += ["", f"## {_HEADINGS['description']}"]
    lines += proposal.description.strip("\n").splitlines()
    lines += ["", f"## {_HEADINGS['expected_outcome']}"]
    lines += (proposal.expected_outcome or "").strip("\n").splitlines()
    for key, items in (("constraints", proposal.constraints), ("non_goals", proposal.non_goals)):
        lines += ["", f"## {_HEADINGS[key]}"]
        for item in items:
            first, *rest = item.strip().splitlines() or [""]
            lines.append(f"- {first}")
            lines += _indented("\n".join(rest), "  ")
    return "\n".join(lines) + "\n"


# -- reading ---------------------------------------------------------------------------------------


def _without_comments(text: str) -> list[str]:
    """The lines of ``text`` with ``<!-- … -->`` comments blanked out (line numbers stay)."""
    out: list[str] = []
    start = 0
    while True:
        opening = text.find("<!--", start)
        if opening == -1:
            out.append(text[start:])
            break
        closing = text.find("-->", opening + 4)
        if closing == -1:
            line = text.count("\n", 0, opening) + 1
            raise ProposalTextError(line, "a comment opened with '<!--' is never closed with '-->'")
        out.append(text[start:opening])
        out.append("\n" * text.count("\n", opening, closing))
        start = closing + 3
    return "".join(out).split("\n")


def _section_of(line: str) -> str | None:
    """The section a ``#`` heading line names, or None (not a heading, or not a proposal section)."""
    if not line.lstrip().startswith("#"):
        return None
    found = split_heading(line, _SECTIONS)
    return None if found is None or found[1] else found[0]


def _is_heading(line: str) -> bool:
    stripped = line.lstrip()
    return stripped.startswith("#") and stripped.lstrip("#")[:1] in (" ", "")


def _shown(line: str) -> str:
    text = line.strip()
    return text if len(text) <= 40 else text[:39] + "…"


@dataclass
class _Body:
    name: str
    line: int
    rows: list[tuple[int, str]]


def _split(lines: list[str]) -> tuple[str, int, list[_Body]]:
    """The title (and its line) and the sections in order; raises on text that has no place."""
    title = ""
    title_line = 0
    bodies: list[_Body] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        section = _section_of(line)
        current = bodies[-1] if bodies else None
        if section is not None and section != "title":
            if section in seen:
                raise ProposalTextError(number, f"a second '{_HEADINGS[section]}' section "
                                                f"(the first is on line {seen[section]})")
            seen[section] = number
            bodies.append(_Body(section, number, []))
        elif section == "title" and not title and current is None:
            bodies.append(_Body("title", number, []))
        elif current is not None:
            current.rows.append((number, line))
        elif not line.strip():
            continue
        elif not title and line.lstrip().startswith("# "):
            inline = split_heading(line, frozenset({"title"}))  # "# Title: Add OAuth"
            title = inline[1] if inline and inline[1] else line.strip()[2:].strip()
            title_line = number
            if not title:
                raise ProposalTextError(number, "the title is empty: write it after '# '")
        elif not title:
            raise ProposalTextError(number, f"the plan starts with its title, as '# Title' (found '{_shown(line)}')")
        else:
            raise ProposalTextError(number, f"'{_shown(line)}' is outside any section: put it under a heading "
                                            "such as '## Description'")
    if bodies and bodies[0].name == "title":
        body = bodies.pop(0)
        text = [(n, row.strip()) for n, row in body.rows if row.strip()]
        if not text:
            raise ProposalTextError(body.line, "the title section is empty")
        if len(text) > 1:
            raise ProposalTextError(text[1][0], "the title is one line; put more under '## Description'")
        title, title_line = text[0][1].lstrip("#").strip(), text[0][0]
    if not title:
        raise ProposalTextError(1, "the plan has no title: start with a line '# Title'")
    return title, title_line, bodies


def _free_text(body: _Body) -> str:
    return "\n".join(row for _, row in body.rows).strip("\n").rstrip()


def _list_items(body: _Body, what: str) -> list[tuple[int, str, list[str]]]:
    """``(line, first line, continuation lines)`` per item of a list section."""
    items: list[tuple[int, str, list[str]]] = []
    for number, row in body.rows:
        if not row.strip():
            if items:
                items[-1][2].append("")
            continue
        indent = len(row) - len(row.lstrip(" \t"))
        item = list_item(row) if indent < 2 else None
        if item is not None:
            if not item[1]:
                raise ProposalTextError(number, f"{what} {len(items) + 1} has no text")
            items.append((number, item[1], []))
        elif indent >= 1 and items:
            items[-1][2].append(row)
        elif _is_heading(row):
            raise ProposalTextError(number, f"'{_shown(row)}' is not a section of a plan (sections: "
                                            f"{', '.join(_HEADINGS.values())})")
        else:
            start = "'1.' or '-'" if what == "subtask" else "'-'"
            raise ProposalTextError(number, f"'{_shown(row)}' is not a list item: start each {what} with "
                                            f"{start} and indent what belongs to it")
    return items


def parse_edited_proposal(text: str) -> EditedProposal:
    """Read text written by :func:`proposal_to_editable_text` (and edited); raises :class:`ProposalTextError`."""
    if len(text) > MAX_TEXT_CHARS:
        raise ProposalTextError(1, f"the text is too long ({len(text):,} characters; at most {MAX_TEXT_CHARS:,})")
    normalised = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    lines = _without_comments(normalised)
    title, title_line, bodies = _split(lines)
    if len(title) > MAX_TITLE_CHARS:
        raise ProposalTextError(title_line, f"the title is too long ({len(title)} characters; at most "
                                            f"{MAX_TITLE_CHARS})")
    found: dict[str, _Body] = {body.name: body for body in bodies}
    subtasks: list[EditedSubtask] = []
    if "subtasks" in found:
        for number, first, rest in _list_items(found["subtasks"], "subtask"):
            if len(subtasks) == MAX_SUBTASKS:
                raise ProposalTextError(number, f"too many subtasks (at most {MAX_SUBTASKS})")
            subtasks.append(EditedSubtask(first, textwrap.dedent("\n".join(rest)).strip("\n").rstrip()))
    limits: dict[str, tuple[str, ...]] = {}
    for key, what in (("constraints", "constraint"), ("non_goals", "non-goal")):
        items = _list_items(found[key], what) if key in found else []
        limits[key] = tuple(
            "\n".join([first, *textwrap.dedent("\n".join(rest)).strip("\n").splitlines()]).rstrip()
            for _, first, rest in items
        )
    outcome = _free_text(found["expected_outcome"]) if "expected_outcome" in found else ""
    return EditedProposal(
        title=title,
        subtasks=tuple(subtasks),
        description=_free_text(found["description"]) if "description" in found else "",
        expected_outcome=outcome or None,
        constraints=limits["constraints"],
        non_goals=limits["non_goals"],
    )


# -- what changed ----------------------------------------------------------------------------------


def _q(text: str) -> str:
    flat = " ".join(text.split())
    return "“" + (flat if len(flat) <= _SUMMARY_CHARS else flat[: _SUMMARY_CHARS - 1] + "…") + "”"


def _alike(old: str, new: str) -> bool:
    return difflib.SequenceMatcher(a=old.casefold(), b=new.casefold(), autojunk=False).ratio() >= _ALIKE


def _segment_changes(old: Sequence[str], new: Sequence[str], first_new: int) -> list[str]:
    """A run of titles that differ: pair each old title with the next alike new one (reworded), in order."""
    changes: list[str] = []
    at = 0
    for title in old:
        match = next((k for k in range(at, len(new)) if _alike(title, new[k])), None)
        if match is None:
            changes.append(f"subtask removed: {_q(title)}")
            continue
        changes += [f"subtask {first_new + k + 1} added: {_q(new[k])}" for k in range(at, match)]
        changes.append(f"subtask {first_new + match + 1} reworded: {_q(title)} → {_q(new[match])}")
        at = match + 1
    changes += [f"subtask {first_new + k + 1} added: {_q(new[k])}" for k in range(at, len(new))]
    return changes


def _subtask_changes(before: Sequence[EditedSubtask], after: Sequence[EditedSubtask]) -> list[str]:
    old = [s.title for s in before]
    new = [s.title for s in after]
    changes: list[str] = []
    pairs: list[tuple[EditedSubtask, EditedSubtask]] = []
    if old != new and sorted(old) == sorted(new):
        remaining = list(range(1, len(old) + 1))
        order = []
        for title in new:
            index = next(i for i in remaining if old[i - 1] == title)
            remaining.remove(index)
            order.append(index)
        changes.append("subtasks reordered (new order of the old numbers: " + ", ".join(map(str, order)) + ")")
        pairs = [(before[i - 1], after[n]) for n, i in enumerate(order)]
    else:
        matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
        for op, a1, a2, b1, b2 in matcher.get_opcodes():
            if op == "equal":
                pairs += list(zip(before[a1:a2], after[b1:b2], strict=True))
            else:
                changes += _segment_changes(old[a1:a2], new[b1:b2], b1)
    for old_task, new_task in pairs:
        if old_task.details.strip() != new_task.details.strip():
            changes.append(f"details of subtask {_q(new_task.title)} changed")
    return changes


def _list_change(name: str, before: Iterable[str], after: Iterable[str]) -> list[str]:
    return [f"{name} changed"] if tuple(before) != tuple(after) else []


def proposal_changes(before: EditedProposal, after: EditedProposal) -> tuple[str, ...]:
    """One readable line per change from ``before`` to ``after`` (empty when nothing changed)."""
    changes: list[str] = []
    if before.title != after.title:
        changes.append(f"title: {_q(before.title)} → {_q(after.title)}")
    changes += _subtask_changes(before.subtasks, after.subtasks)
    if before.description.strip() != after.description.strip():
        changes.append("description changed")
    if (before.expected_outcome or "").strip() != (after.expected_outcome or "").strip():
        if not before.expected_outcome:
            changes.append("expected outcome added")
        elif not after.expected_outcome:
            changes.append("expected outcome removed")
        else:
            changes.append("expected outcome changed")
    changes += _list_change("constraints", before.constraints, after.constraints)
    changes += _list_change("non-goals", before.non_goals, after.non_goals)
    return tuple(changes)
