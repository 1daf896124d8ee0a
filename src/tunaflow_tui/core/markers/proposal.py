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

from tunaflow_tui.core.markers.marker_model import PlanProposal, Subtask, subtask
from tunaflow_tui.core.markers.sections import (
    LINE_CACHE,
    MISS,
    LineMemo,
    Section,
    heading_candidates,
    items_of,
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


def _task_headings(lines: list[str], memo: LineMemo) -> list[str | None]:
    """:func:`_task_heading` of each line, read once per distinct line of the reply (and only for the
    lines that start with ``#``: no other line is a task heading)."""
    table: dict[str, str | None] = memo.table("task headings")
    found: list[str | None] = [None] * len(lines)
    for index in heading_candidates(lines, hashes_only=True):
        line = lines[index]
        title = table.get(line, MISS)
        if title is MISS:
            title = table[line] = _read_task_heading(line)
        found[index] = title
    return found


def _from_headings(lines: list[str], titles: list[str | None]) -> list[Subtask]:
    subtasks: list[tuple[str, list[str]]] = []
    for line, title in zip(lines, titles, strict=True):
        if title is not None:
            subtasks.append((title, []))
        elif subtasks:
            subtasks[-1][1].append(line)
    return [subtask(i, t, _dedent(d)) for i, (t, d) in enumerate(subtasks, 1)]


def _is_separator(cells: list[str]) -> bool:
    """A table's separator row: every cell non-empty and made of ``-``, ``:`` and blanks."""
    if cells and cells[0][:1] not in ("-", ":", " "):
        return False  # (the usual row: its first cell says so)
    return all(cell and not cell.strip("-: ") for cell in cells)


def _read_row(row: str) -> tuple[list[str], bool]:
    """The cells of a table row (never changed once read), and whether it is a separator row."""
    cells = table_cells(row)
    return cells, _is_separator(cells)


def _row_subtask(
    row: list[str], numbered: bool, fixed_idx: int, title_col: int | None, detail_col: int | None
) -> tuple[str, str] | None:
    """The title and details of the subtask a table row states, or None (see :func:`_from_table`)."""
    idx = 0 if numbered and row and row[0].rstrip(".").isdigit() else fixed_idx
    col = title_col
    if col is None:
        col = next((i for i, c in enumerate(row) if i != idx and c), None)
    if col is None or col >= len(row) or not row[col]:
        return None
    if detail_col is not None and detail_col < len(row):
        details = row[detail_col]
    else:
        details = " — ".join(c for i, c in enumerate(row) if i not in (idx, col) and c)
    cell = row[col]
    title, lead = _split_bold_lead(cell) if cell.startswith("**") else (cell.strip(), "")
    return title, (details or lead).replace("<br>", "\n")


def _from_table(rows: list[str], memo: LineMemo) -> list[Subtask]:
    """The subtasks of a Markdown table, one per row past its header and separators.

    Each distinct row is cut into cells once per reply (``memo``) and read as a subtask once per table.
    """
    reads: dict[str, tuple[list[str], bool]] = memo.table("table rows")
    get = reads.get
    table: list[tuple[list[str], bool]] = []
    for row in rows:
        read = get(row)
        if read is None:
            read = reads[row] = _read_row(row)
        table.append(read)
    header: list[str] = []
    first = 0  # the first row past the header
    if len(table) >= 2 and table[1][1]:
        header, first = [normalize_name(h) for h in table[0][0]], 2
    idx_col = next((i for i, h in enumerate(header) if h in _INDEX_COLUMNS), None)
    title_col = next((i for i, h in enumerate(header) if h in _TITLE_COLUMNS), None)
    detail_col = next((i for i, h in enumerate(header) if h in _DETAIL_COLUMNS), None)
    numbered = idx_col is None and not header  # then a row starting with a number has it as its index
    fixed_idx = idx_col if idx_col is not None else -1
    made: dict[str, tuple[str, str] | None] = {}  # a row -> the title and details it states
    subtasks: list[Subtask] = []
    for row, (cells, separator) in zip(rows[first:], table[first:], strict=True):
        if separator:
            continue
        stated = made.get(row, MISS)
        if stated is MISS:
            stated = made[row] = _row_subtask(cells, numbered, fixed_idx, title_col, detail_col)
        if stated is not None:
            subtasks.append(subtask(len(subtasks) + 1, *stated))
    return subtasks


def _from_list(lines: list[str], memo: LineMemo) -> list[Subtask]:
    parsed = memo.list_items(lines)
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
    return [subtask(i, t, _dedent(d)) for i, (t, d) in enumerate(items, 1) if t]


def read_subtasks(lines: list[str], memo: LineMemo | None = None) -> tuple[Subtask, ...]:
    """The subtasks written in ``lines`` (the body of a subtasks section)."""
    memo = memo or LineMemo()
    table = [line for line in lines if "|" in line and line.lstrip().startswith("|")]
    if len(table) >= 2:
        return tuple(_from_table(table, memo))
    titles = _task_headings(lines, memo)
    if any(title is not None for title in titles):
        return tuple(_from_headings(lines, titles))
    return tuple(s for s in _from_list(lines, memo) if s.title)


def _unwrap_fence(lines: list[str]) -> list[str]:
    """Drop a code fence wrapped around the whole body (inside the markers)."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return lines
    last = next(i for i in range(len(lines) - 1, first - 1, -1) if lines[i].strip())
    if last > first:
        opening, closing = lines[first].strip(), lines[last].strip()
        if opening.startswith("```") and opening[3:].strip().casefold() in ("", "markdown", "md") and closing == "```":
            return lines[first + 1 : last]
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


_read_heading = split_heading.__wrapped__
_read_task_heading = _task_heading.__wrapped__
_read_heading_level = _heading_level.__wrapped__


def _read_line(line: str) -> tuple[tuple[str, str] | None, str | None, bool] | None:
    """What a proposal line heads, the task it titles and whether it clearly heads a section (asked only
    of a heading: nothing else reads it); None for a line of text."""
    heading = _read_heading(line, PROPOSAL_SECTIONS)
    title = _read_task_heading(line)
    if heading is None:
        return None if title is None else (None, title, False)
    return heading, title, _read_heading_level(line)


def _split_proposal(lines: list[str], memo: LineMemo) -> tuple[list[str], list[Section]]:
    """Split a proposal body into the preamble and its sections (see the module docstring).

    Each distinct line is read once per reply (:func:`_read_line`); a line of text changes nothing
    and goes where the text goes.
    """
    preamble: list[str] = []
    sections: list[Section] = []
    by_heading = False  # the open subtasks are written as task headings
    has_subtasks = False
    reads: dict[str, tuple[tuple[str, str] | None, str | None, bool] | None] = memo.table("proposal lines")
    get = reads.get
    current: Section | None = None  # the last section
    in_subtasks = False  # the last section is the subtasks
    target = preamble  # where text goes: the last section's lines, or the preamble
    for line in lines:
        read = get(line, MISS)
        if read is MISS:
            read = reads[line] = _read_line(line)
        if read is None:  # a line of text
            target.append(line)
            continue
        heading, title, level = read
        # inside the subtasks, only a line that clearly heads a section ends them
        if heading is not None and (level or not in_subtasks or not (by_heading or line[:1] in (" ", "\t"))):
            current = Section(heading[0], heading[1])
            sections.append(current)
            target = current.lines
            in_subtasks = heading[0] == "subtasks"
            has_subtasks = has_subtasks or in_subtasks
            by_heading = False
            continue
        if title is not None and (in_subtasks or (not has_subtasks and (current is None or current.name == "title"))):
            if not in_subtasks:
                current = Section("subtasks")
                sections.append(current)
                target = current.lines
                in_subtasks = has_subtasks = True
            by_heading = True
        target.append(line)
    return preamble, sections


def _leading_list(lines: list[str], memo: LineMemo) -> tuple[list[str], list[str]]:
    """Split ``lines`` into a list that starts at their first filled line, and what follows it.

    The list runs over its items, the lines indented under them and blank lines; it ends at the
    first filled line at the left margin that is not an item. No list there: ``([], lines)``.
    """
    filled = next((i for i, line in enumerate(lines) if line.strip()), None)
    if filled is None or memo.list_items([lines[filled]])[0] is None:
        return [], lines
    end = len(lines)
    for i, item in enumerate(memo.list_items(lines[filled:]), filled):
        line = lines[i]
        if line.strip() and item is None and line[:1] not in (" ", "\t"):
            end = i
            break
    return lines[filled:end], lines[end:]


def read_proposal(
    body: str, *, accepted: bool, raw: str, span: tuple[int, int], closed: bool, memo: LineMemo | None = None,
    revises: int | None = None,
) -> PlanProposal:
    """Build a :class:`PlanProposal` from the text between the proposal markers.

    ``memo`` holds what earlier blocks of the same reply read in their lines (a fresh one if none);
    ``revises`` is the plan its opening marker names (``revises: #N``), if any.
    """
    memo = memo or LineMemo()
    lines = _unwrap_fence(body.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    preamble, sections = _split_proposal(lines, memo)
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
        subtask_lines: list[str] = []
        for section in by_name["subtasks"]:
            subtask_lines.append(section.inline)
            subtask_lines.extend(section.lines)
        subtasks = read_subtasks(subtask_lines, memo)
    elif title:
        listed, after = _leading_list(extra, memo)
        if listed:
            extra = after
        else:
            listed, rest = _leading_list(rest, memo)
        subtasks = tuple(s for s in _from_list(listed, memo) if s.title) if listed else ()
    if "description" in by_name:
        description = "\n\n".join(s.body_text() for s in by_name["description"] if s.body_text())
    else:
        description = _dedent([line for line in extra if line.strip()] + rest)
    if not title:
        title = description.split("\n", 1)[0].strip() if description else (subtasks[0].title if subtasks else "")
    outcome = "\n\n".join(s.body_text() for s in by_name.get("expected_outcome", [])) or None
    constraints = tuple(i for s in by_name.get("constraints", []) for i in items_of(s, memo))
    non_goals = tuple(i for s in by_name.get("non_goals", []) for i in items_of(s, memo))
    return PlanProposal(
        accepted=accepted, raw=raw, span=span, closed=closed, title=title, subtasks=subtasks,
        description=description, expected_outcome=outcome, constraints=constraints, non_goals=non_goals,
        revises=revises,
    )  # fmt: skip
