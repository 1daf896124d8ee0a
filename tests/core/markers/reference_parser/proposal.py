"""Read the body of a ``plan-proposal`` block into a :class:`PlanProposal`.

Subtasks may be a numbered list, bullets, a Markdown table, ``### Task N — title`` headings or
(as in the original's examples) one plain line each. Subtask indices are their 1-based positions.

Once the subtasks are open (a subtasks section, or the first ``### Task N`` heading), only a line
that clearly heads a new section ends them: a ``#`` heading or a ``**Name**`` line alone at the
start of a line, or, in a list or table, a section line that starts at the left margin. So a
``Description:`` under a task heading, or an indented ``Title:`` inside a numbered item, stays in
that subtask's details.
"""

from __future__ import annotations

import re
import textwrap
from functools import lru_cache
from typing import Final

from tunaflow_tui.core.markers.marker_model import PlanProposal, Subtask

from .sections import (
    LINE_CACHE,
    Section,
    items_of,
    list_item,
    normalize_name,
    split_heading,
    table_cells,
)

PROPOSAL_SECTIONS: Final = frozenset(
    {"title", "subtasks", "description", "expected_outcome", "constraints", "non_goals"}
)
_TASK_HEADING: Final = re.compile(
    r"(?:task|subtask|sub-task|step|작업|태스크|서브태스크|tugas|subtugas|langkah)\s{0,3}#?\s{0,3}(\d{1,4})"
    r"\s{0,3}[—–\-:.)]?\s{0,3}(.*)|(\d{1,4})[.)]\s{1,3}(.*)",
    re.IGNORECASE,
)
_TITLE_ONLY: Final = frozenset({"title"})
_MARKS: Final = ("**", "__")
_INDEX_COLUMNS: Final = frozenset({"#", "no", "no.", "id", "n", "번호", "nomor", "index", "step", "task #"})
_TITLE_COLUMNS: Final = frozenset(
    {"title", "task", "subtask", "sub task", "name", "제목", "작업", "서브태스크", "judul", "tugas", "subtugas"}
)
_DETAIL_COLUMNS: Final = frozenset(
    {"details", "detail", "description", "설명", "내용", "deskripsi", "notes", "note", "keterangan"}
)


def _clean_title(text: str) -> str:
    """Strip heading marks, bold and a ``Title:`` prefix from a title line."""
    text = text.strip().lstrip("#").strip()
    heading = split_heading(text, _TITLE_ONLY)
    if heading is not None and heading[1]:
        text = heading[1]
    return _unwrap_marks(text).strip("*_ ").strip()


def _unwrap_marks(text: str) -> str:
    """Remove ``**``/``__`` pairs from both ends at once, with the blanks inside them, while both ends have one.

    Moves two indices instead of cutting a new string per pair, so a line of thousands of ``*``
    costs its length, not its length squared.
    """
    lo, hi = 0, len(text)
    while hi - lo > 4 and text.startswith(_MARKS, lo) and text.endswith(_MARKS, lo, hi):
        lo, hi = lo + 2, hi - 2
        while lo < hi and text[lo].isspace():
            lo += 1
        while hi > lo and text[hi - 1].isspace():
            hi -= 1
    return text[lo:hi]


def _split_bold_lead(text: str) -> tuple[str, str]:
    """``**Title** — details`` → ``("Title", "details")``; otherwise ``(text, "")``."""
    if text.startswith("**"):
        close = text.find("**", 2)
        if close > 2:
            title, rest = text[2:close].strip().rstrip(":"), text[close + 2 :].strip()
            return title, rest.lstrip(":—–-").strip()
    return text.strip(), ""


@lru_cache(maxsize=LINE_CACHE)
def _task_heading(line: str) -> str | None:
    """The title of a ``### Task N — title`` heading line, or None."""
    stripped = line.strip()
    if not stripped.startswith("#"):
        return None
    text = stripped.lstrip("#").strip().strip("*").strip()
    match = _TASK_HEADING.fullmatch(text)
    if match is None:
        return None
    title = (match.group(2) if match.group(1) is not None else match.group(4)) or ""
    title = title.strip().strip("*").strip()
    return title or text


def _dedent(lines: list[str]) -> str:
    return textwrap.dedent("\n".join(lines)).strip()


def _from_headings(lines: list[str]) -> list[Subtask]:
    subtasks: list[tuple[str, list[str]]] = []
    for line in lines:
        title = _task_heading(line)
        if title is not None:
            subtasks.append((title, []))
        elif subtasks:
            subtasks[-1][1].append(line)
    return [Subtask(i, t, _dedent(d)) for i, (t, d) in enumerate(subtasks, 1)]


def _is_separator(cells: list[str]) -> bool:
    return all(c and set(c) <= set("-: ") for c in cells)


def _from_table(rows: list[str]) -> list[Subtask]:
    table = [table_cells(r) for r in rows]
    header: list[str] = []
    if len(table) >= 2 and _is_separator(table[1]):
        header, table = [normalize_name(h) for h in table[0]], table[2:]
    table = [row for row in table if not _is_separator(row)]
    idx_col = next((i for i, h in enumerate(header) if h in _INDEX_COLUMNS), None)
    title_col = next((i for i, h in enumerate(header) if h in _TITLE_COLUMNS), None)
    detail_col = next((i for i, h in enumerate(header) if h in _DETAIL_COLUMNS), None)
    subtasks: list[Subtask] = []
    for row in table:
        if idx_col is None and header == [] and row and row[0].rstrip(".").isdigit():
            idx = 0
        else:
            idx = idx_col if idx_col is not None else -1
        col = title_col
        if col is None:
            col = next((i for i, c in enumerate(row) if i != idx and c), None)
        if col is None or col >= len(row) or not row[col]:
            continue
        if detail_col is not None and detail_col < len(row):
            details = row[detail_col]
        else:
            details = " — ".join(c for i, c in enumerate(row) if i not in (idx, col) and c)
        title, lead = _split_bold_lead(row[col])
        subtasks.append(Subtask(len(subtasks) + 1, title, (details or lead).replace("<br>", "\n")))
    return subtasks


def _from_list(lines: list[str]) -> list[Subtask]:
    parsed = [list_item(line) for line in lines]
    indents = [it[0] for it in parsed if it is not None]
    if not indents:
        return [
            Subtask(i, *_split_bold_lead(line.strip()))
            for i, line in enumerate((ln for ln in lines if ln.strip()), 1)
        ]
    top = min(indents)
    items: list[tuple[str, list[str]]] = []
    for line, item in zip(lines, parsed, strict=True):
        if item is not None and item[0] <= top:
            title, lead = _split_bold_lead(item[1])
            items.append((title, [lead] if lead else []))
        elif items:
            items[-1][1].append(line)
    return [Subtask(i, t, _dedent(d)) for i, (t, d) in enumerate(items, 1) if t]


def read_subtasks(lines: list[str]) -> tuple[Subtask, ...]:
    """The subtasks written in ``lines`` (the body of a subtasks section)."""
    table = [line for line in lines if line.strip().startswith("|")]
    if len(table) >= 2:
        return tuple(_from_table(table))
    if any(_task_heading(line) is not None for line in lines):
        return tuple(_from_headings(lines))
    return tuple(s for s in _from_list(lines) if s.title)


def _unwrap_fence(lines: list[str]) -> list[str]:
    """Drop a code fence wrapped around the whole body (inside the markers)."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if len(filled) >= 2:
        first, last = lines[filled[0]].strip(), lines[filled[-1]].strip()
        if first.startswith("```") and first[3:].strip().casefold() in ("", "markdown", "md") and last == "```":
            return lines[filled[0] + 1 : filled[-1]]
    return lines


@lru_cache(maxsize=LINE_CACHE)
def _heading_level(line: str) -> bool:
    """A ``#`` heading, or a ``**Name**`` / ``**Name:**`` line alone, at the start of a line."""
    if line[:1] in (" ", "\t"):
        return line.lstrip(" ")[:1] == "#" and len(line) - len(line.lstrip(" ")) < 4
    text = line.strip()
    if text.startswith("#"):
        return True
    for mark in ("**", "__"):
        if text.startswith(mark):
            close = text.find(mark, 2)
            return close > 2 and text[close + 2 :].strip() in ("", ":", "：")
    return False


def _split_proposal(lines: list[str]) -> tuple[list[str], list[Section]]:
    """Split a proposal body into the preamble and its sections (see the module docstring)."""
    preamble: list[str] = []
    sections: list[Section] = []
    by_heading = False  # the open subtasks are written as task headings
    has_subtasks = False
    for line in lines:
        current = sections[-1] if sections else None
        in_subtasks = current is not None and current.name == "subtasks"
        if in_subtasks and not (_heading_level(line) or (not by_heading and line[:1] not in (" ", "\t"))):
            heading = None
        else:
            heading = split_heading(line, PROPOSAL_SECTIONS)
        if heading is not None:
            sections.append(Section(heading[0], heading[1]))
            has_subtasks = has_subtasks or heading[0] == "subtasks"
            by_heading = False
            continue
        opens_tasks = not has_subtasks and (current is None or current.name == "title")
        if _task_heading(line) is not None and (in_subtasks or opens_tasks):
            if not in_subtasks:
                current = Section("subtasks")
                sections.append(current)
                has_subtasks = True
            by_heading = True
        if current is not None:
            current.lines.append(line)
        else:
            preamble.append(line)
    return preamble, sections


def _leading_list(lines: list[str]) -> tuple[list[str], list[str]]:
    """Split ``lines`` into a list that starts at their first filled line, and what follows it.

    The list runs over its items, the lines indented under them and blank lines; it ends at the
    first filled line at the left margin that is not an item. No list there: ``([], lines)``.
    """
    filled = next((i for i, line in enumerate(lines) if line.strip()), None)
    if filled is None or list_item(lines[filled]) is None:
        return [], lines
    end = len(lines)
    for i in range(filled, len(lines)):
        line = lines[i]
        if line.strip() and list_item(line) is None and line[:1] not in (" ", "\t"):
            end = i
            break
    return lines[filled:end], lines[end:]


def read_proposal(body: str, *, accepted: bool, raw: str, span: tuple[int, int], closed: bool) -> PlanProposal:
    """Build a :class:`PlanProposal` from the text between the proposal markers."""
    lines = _unwrap_fence(body.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    preamble, sections = _split_proposal(lines)
    by_name: dict[str, list[Section]] = {}
    for section in sections:
        by_name.setdefault(section.name, []).append(section)
    title = ""
    extra: list[str] = []
    if "title" in by_name:
        first = by_name["title"][0]
        title_lines = ([first.inline] if first.inline else []) + first.lines
        filled = [i for i, line in enumerate(title_lines) if line.strip()]
        title = _clean_title(title_lines[filled[0]]) if filled else ""
        extra = title_lines[filled[0] + 1 :] if filled else []
    filled_pre = [i for i, line in enumerate(preamble) if line.strip()]
    rest = preamble
    if not title and filled_pre:
        title = _clean_title(preamble[filled_pre[0]])
        rest = preamble[filled_pre[0] + 1 :]
    subtasks: tuple[Subtask, ...] = ()
    if "subtasks" in by_name:
        subtasks = read_subtasks([line for s in by_name["subtasks"] for line in [s.inline, *s.lines]])
    elif title:
        listed, after = _leading_list(extra)
        if listed:
            extra = after
        else:
            listed, rest = _leading_list(rest)
        subtasks = tuple(s for s in _from_list(listed) if s.title) if listed else ()
    if "description" in by_name:
        description = "\n\n".join(s.body_text() for s in by_name["description"] if s.body_text())
    else:
        description = _dedent([line for line in extra if line.strip()] + rest)
    if not title:
        title = description.split("\n", 1)[0].strip() if description else (subtasks[0].title if subtasks else "")
    outcome = "\n\n".join(s.body_text() for s in by_name.get("expected_outcome", [])) or None
    constraints = tuple(i for s in by_name.get("constraints", []) for i in items_of(s))
    non_goals = tuple(i for s in by_name.get("non_goals", []) for i in items_of(s))
    return PlanProposal(
        accepted=accepted, raw=raw, span=span, closed=closed, title=title, subtasks=subtasks,
        description=description, expected_outcome=outcome, constraints=constraints, non_goals=non_goals,
    )  # fmt: skip
