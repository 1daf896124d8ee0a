"""Section headings and list items inside a marker block.

A section heading is a line naming a known section, in English, Korean or Indonesian, matched
case-insensitively, with optional ``#`` heading marks, ``**bold**`` and a trailing colon; text after
the colon on the same line is the section's first content (``description: Replace JWT``).

The block readers share what they read in a reply's lines: a :class:`LineMemo` keeps what each
reading found in each distinct line (a line of text included), so a line repeated across a reply's
blocks is read once and found again by one lookup; a line of prose is told to head no section by one
regular expression of the section names (:func:`split_heading`), and the lines that start with ``#``
are found among many at once (:func:`heading_candidates`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate, count
from operator import add
from typing import Any, Final

SECTION_ALIASES: Final[dict[str, str]] = {
    # plan proposal
    "title": "title", "제목": "title", "judul": "title", "plan": "title", "plan title": "title",
    "subtasks": "subtasks", "subtask": "subtasks", "sub tasks": "subtasks", "tasks": "subtasks",
    "task list": "subtasks", "서브태스크": "subtasks", "하위 작업": "subtasks", "하위작업": "subtasks",
    "작업 목록": "subtasks", "subtugas": "subtasks", "sub tugas": "subtasks", "daftar tugas": "subtasks",
    "description": "description", "summary": "description", "설명": "description", "개요": "description",
    "deskripsi": "description", "ringkasan": "description",
    "expected outcome": "expected_outcome", "expected outcomes": "expected_outcome",
    "expected result": "expected_outcome", "기대 결과": "expected_outcome", "기대결과": "expected_outcome",
    "hasil yang diharapkan": "expected_outcome",
    "constraints": "constraints", "constraint": "constraints", "제약": "constraints",
    "제약 조건": "constraints", "제약조건": "constraints", "제약 사항": "constraints",
    "제약사항": "constraints", "batasan": "constraints", "kendala": "constraints",
    "non goals": "non_goals", "nongoals": "non_goals", "non goal": "non_goals", "out of scope": "non_goals",
    "비목표": "non_goals", "비 목표": "non_goals", "범위 외": "non_goals", "bukan tujuan": "non_goals",
    "non tujuan": "non_goals",
    # review verdict
    "verdict": "verdict", "판정": "verdict", "결과": "verdict", "putusan": "verdict", "vonis": "verdict",
    "keputusan": "verdict",
    "findings": "findings", "finding": "findings", "발견 사항": "findings", "발견사항": "findings",
    "발견": "findings", "temuan": "findings",
    "recommendations": "recommendations", "recommendation": "recommendations",
    "권장 사항": "recommendations", "권장사항": "recommendations", "추천": "recommendations",
    "권고": "recommendations", "rekomendasi": "recommendations", "saran": "recommendations",
    "scores": "scores", "score": "scores", "점수": "scores", "skor": "scores", "nilai": "scores",
    "failed subtasks": "failed_subtasks", "failed subtask ids": "failed_subtasks",
    "failed subtask": "failed_subtasks", "failed": "failed_subtasks",
    "실패한 서브태스크": "failed_subtasks", "실패 서브태스크": "failed_subtasks",
    "subtugas gagal": "failed_subtasks",
    # consensus
    "consensus": "consensus", "agreement": "consensus", "agreed": "consensus", "합의": "consensus",
    "합의 사항": "consensus", "konsensus": "consensus", "kesepakatan": "consensus",
    "contested": "contested", "disputed": "contested", "open questions": "contested", "쟁점": "contested",
    "diperdebatkan": "contested", "dipersengketakan": "contested",
    "dissent": "dissent", "dissents": "dissent", "반대 의견": "dissent", "반대의견": "dissent",
    "이견": "dissent", "perbedaan pendapat": "dissent", "ketidaksetujuan": "dissent",
}  # fmt: skip

_MAX_NAME = 40
LINE_CACHE: Final = 4096
"""How many distinct lines the per-line readers called on their own remember (and a quarter of what the
memo shared by the parses may hold before it starts afresh). They are pure functions of the line, and
a long reply repeats its lines (``## Findings``, ``- none``, a template's labels): each distinct line
is read once, however many blocks it appears in."""
_PLAIN_NAME: Final = re.compile(r"[^\W\d_]+(?:[ _-][^\W\d_]+)*")
#: What may precede a section name on its line: blanks, heading marks, emphasis, hyphens.
_LEAD: Final = re.compile(r"[\s#*_`\-]*")
#: The first character of every section name, case-folded: a line whose name starts otherwise is no heading.
_NAME_STARTS: Final = frozenset(alias[0] for alias in SECTION_ALIASES)
_UNESCAPED_PIPE: Final = re.compile(r"(?<!\\)\|")
_LINE_BLANKS: Final = r"(?:[^\S\n]|[_\-])+"


def _prefix_pattern(names: list[str], blanks: str = _LINE_BLANKS) -> str:
    """A regular expression matching the start of any of ``names`` (ASCII, lower case; in any case; blanks
    in a name: any run of ``blanks``, by default blanks, ``_`` or ``-``), branching on one character at a
    time so that a line is told apart in a few steps."""
    if "" in names:
        return ""  # a name ends here: any continuation matches
    branches = []
    for first in sorted({name[0] for name in names}):
        rest = _prefix_pattern([name[1:] for name in names if name[0] == first], blanks)
        if first == " ":
            head = blanks
        else:
            head = f"[{first}{first.upper()}]" if first.isalpha() else re.escape(first)
        branches.append(head + (f"(?:{rest})" if "|" in rest else rest))
    return "|".join(branches)


_ASCII_ALIASES: Final = sorted(alias for alias in SECTION_ALIASES if alias.isascii())
_NOTHING: Final = re.compile(r"(?!)")


def _name_patterns(allowed: frozenset[str] | None) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The names of the sections ``allowed`` (all if None), their words joined by blanks, ``_`` or ``-``:
    the ASCII ones as written, in any case, past the decoration :data:`_LEAD` skips, and all of them as
    they read case-folded.

    A line of ASCII text names none of these sections unless the first matches it; any line, unless
    the second matches where its decoration ends once the line is case-folded (character by character:
    its decoration and blanks fold to themselves, so its name still starts at the same place).
    """
    names = sorted(alias for alias, section in SECTION_ALIASES.items() if allowed is None or section in allowed)
    ascii_names = [name for name in names if name.isascii()]
    return (
        re.compile(r"[\s#*_`\-]*+(?:" + _prefix_pattern(ascii_names, r"[\s_\-]+") + ")") if ascii_names else _NOTHING,
        re.compile(_prefix_pattern(names, r"[\s_\-]+")) if names else _NOTHING,
    )


_NAMES: dict[frozenset[str] | None, tuple[re.Pattern[str], re.Pattern[str]]] = {}
""":func:`_name_patterns` of each set of sections asked about."""


#: At the start of a line that may head a section (for :func:`split_heading`, whatever sections are
#: allowed) or starts with ``#`` (a task heading): after the decoration :data:`_LEAD` skips, the start
#: of an ASCII section name, a character outside ASCII (it may fold to a name), or a letter a name
#: starts with followed by such a character within the 40 characters a name may take. No part of it
#: matches a newline, so no match runs into the next line; possessive, so that blanks are passed once.
#: Every other line is prose to every reader.
_MAY_HEAD: Final = (
    r"[ \t]*+[^\S\n]*+(?:#|(?:[^\S\n]|[#*_`\-])*+(?:"
    + _prefix_pattern(_ASCII_ALIASES)
    + r"|[^\x00-\x7f]|["
    + "".join(sorted({c for alias in _ASCII_ALIASES for c in (alias[0], alias[0].upper())}))
    + r"](?=[^\n]{0,40}[^\x00-\x7f])))"
)
_FIRST_MAY_HEAD: Final = re.compile(_MAY_HEAD)
_NEXT_MAY_HEAD: Final = re.compile(r"\n" + _MAY_HEAD)  # a literal first: found by a fast scan
_FIRST_HASH: Final = re.compile(r"[ \t]*+[^\S\n]*+#")
_NEXT_HASH: Final = re.compile(r"\n[ \t]*+[^\S\n]*+#")
BULLETS: Final = ("- ", "* ", "+ ", "• ", "· ")


def normalize_name(name: str) -> str:
    """Case-fold a section/key name and turn ``_``/``-`` runs and spaces into single spaces.

    Remembered per name (a reply writes the same keys on many lines that differ in their values).
    """
    normal = _NORMAL.get(name)
    if normal is None:
        if len(_NORMAL) >= LINE_CACHE:
            _NORMAL.clear()
        normal = _NORMAL[name] = _normalize(name)
    return normal


_NORMAL: dict[str, str] = {}


def _normalize(name: str) -> str:
    if name.isalpha():  # the common case (``Findings``, ``verdict``): nothing to strip or join
        return name.casefold()
    if _PLAIN_NAME.fullmatch(name):  # words joined by single separators (``Plan coverage``, ``code_quality``)
        return name.casefold().replace("_", " ").replace("-", " ")
    cleaned = name.strip().strip("*_`").strip().rstrip(":：").strip().strip("*_`").casefold()
    return " ".join(cleaned.replace("_", " ").replace("-", " ").split())


def _unbold(text: str) -> str:
    """Remove one pair of surrounding ``**``/``__`` markup."""
    for mark in ("**", "__"):
        if text.startswith(mark) and text.endswith(mark) and len(text) >= 2 * len(mark):
            return text[len(mark) : -len(mark)].strip()
    return text


@lru_cache(maxsize=LINE_CACHE)
def split_heading(line: str, allowed: frozenset[str] | None = None) -> tuple[str, str] | None:
    """``(section, rest_of_line)`` if ``line`` heads a section (one of ``allowed``, if given)."""
    # Most lines are prose: reject them, before any cutting, unless the name of a section allowed
    # starts past their decoration (the name, once normalized, starts with the first character there).
    patterns = _NAMES.get(allowed)
    if patterns is None:
        if len(_NAMES) > 64:
            _NAMES.clear()
        patterns = _NAMES[allowed] = _name_patterns(allowed)
    if line.isascii():
        if patterns[0].match(line) is None:
            return None
    else:  # a name with other characters may fold to an alias: told apart once folded
        lead = _LEAD.match(line).end()  # type: ignore[union-attr]  # matches the empty string at least
        if lead == len(line) or line[lead].casefold()[:1] not in _NAME_STARTS:
            return None
        if patterns[1].match(line.casefold(), lead) is None:
            return None
    text = line.strip()
    if not text or len(text) > 2000:
        return None
    decorated = text.startswith("#")
    text = text.lstrip("#").strip()
    if not text or not (text[0].isalpha() or text[0] in "*_"):
        return None
    rest = ""
    if text.startswith(("**", "__")):
        mark = text[:2]
        close = text.find(mark, 2)
        if close == -1:
            return None
        name, rest = text[2:close], text[close + 2 :]
        rest = rest.lstrip()
        if rest.startswith((":", "：")):
            rest = rest[1:]
        decorated = True
    else:
        colon = text.find(":", 0, _MAX_NAME + 1)
        wide = text.find("：", 0, _MAX_NAME + 1 if colon == -1 else colon)
        if wide != -1:
            colon = wide
        if colon == -1:
            if len(text) > _MAX_NAME:
                return None  # no colon early enough: the name would be too long
            name = text
        else:
            name, rest = text[:colon], text[colon + 1 :]
            decorated = True
    if len(name) > _MAX_NAME:
        return None
    section = SECTION_ALIASES.get(normalize_name(name))
    if section is None or (not decorated and rest) or (allowed is not None and section not in allowed):
        return None
    rest = rest.strip()
    return section, rest if rest[:1] not in ("*", "_") else _unbold(rest)


def table_cells(line: str) -> list[str]:
    """The cells of a Markdown table row; an escaped ``\\|`` stays inside its cell as ``|``."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    if inner.endswith("|") and not inner.endswith("\\|"):
        inner = inner[:-1]
    if "\\" not in inner:  # no escaped pipe: a plain split
        return [cell.strip() for cell in inner.split("|")]
    return [c.strip().replace("\\|", "|") for c in _UNESCAPED_PIPE.split(inner)]


@lru_cache(maxsize=LINE_CACHE)
def list_item(line: str) -> tuple[int, str] | None:
    """``(indent, text)`` if ``line`` starts a bullet or numbered list item."""
    stripped = line.lstrip(" \t")
    indent = len(line) - len(stripped)
    if stripped.startswith(BULLETS) or stripped in ("-", "*"):
        return indent, stripped[2:].strip()
    digits = 0
    while digits < len(stripped) and digits < 4 and stripped[digits].isdigit():
        digits += 1
    if digits and stripped[digits : digits + 1] in (".", ")") and stripped[digits + 1 : digits + 2] in (" ", ""):
        return indent, stripped[digits + 1 :].strip()
    if stripped.startswith("(") and digits == 0:
        close = stripped.find(")", 1, 6)
        if close > 1 and stripped[1:close].isdigit():
            return indent, stripped[close + 1 :].strip()
    return None


@dataclass
class Section:
    """One section of a block: canonical name, the text after its heading's colon, its lines."""

    name: str
    inline: str = ""
    lines: list[str] = field(default_factory=list)

    def body_text(self) -> str:
        """The section's text (inline part first), trimmed."""
        parts = [self.inline] if self.inline else []
        parts.extend(self.lines)
        return "\n".join(parts).strip()


MISS: Final[Any] = object()
"""What a :class:`LineMemo` table gives for a line it has not read yet (``None`` is a reading)."""


class LineMemo:
    """What the block readers of one reply have read in each distinct line, shared by all of them.

    A reply repeats its lines across its blocks (a template's labels, ``## Findings``, ``- none``):
    each reading of a line (is it a list item, which section does it head, does it state a verdict)
    is done once per reply and found again with one dictionary lookup. Every table maps a line (as
    the reader passes it) to the pure function's result; a memo lives as long as one parse, so it
    holds no more than the reply's own lines.
    """

    __slots__ = ("_headings", "_tables", "items")

    def __init__(self) -> None:
        """Empty tables; each is filled as the readers ask."""
        self.items: dict[str, tuple[int, str] | None] = {}
        self._headings: dict[frozenset[str] | None, dict[str, tuple[str, str] | None]] = {}
        self._tables: dict[str, dict[str, Any]] = {}

    def size(self) -> int:
        """How many readings the memo holds, over all its tables."""
        return (len(self.items) + sum(len(table) for table in self._headings.values())
                + sum(len(table) for table in self._tables.values()))  # fmt: skip

    def table(self, reading: str) -> dict[str, Any]:
        """The table of one reader's own reading of lines, named ``reading``."""
        table = self._tables.get(reading)
        if table is None:
            table = self._tables[reading] = {}
        return table

    def headings(self, allowed: frozenset[str] | None) -> dict[str, tuple[str, str] | None]:
        """The table of :func:`split_heading` readings for the sections ``allowed``."""
        table = self._headings.get(allowed)
        if table is None:
            table = self._headings[allowed] = {}
        return table

    def list_items(self, lines: list[str]) -> list[tuple[int, str] | None]:
        """:func:`list_item` of each line."""
        table, read = self.items, _read_list_item
        get = table.get
        parsed: list[tuple[int, str] | None] = []
        append = parsed.append
        for line in lines:
            item = get(line, MISS)
            if item is MISS:
                item = table[line] = read(line)
            append(item)
        return parsed


_read_heading = split_heading.__wrapped__
_read_list_item = list_item.__wrapped__
_SHARED: list[LineMemo] = [LineMemo()]


def shared_memo() -> LineMemo:
    """The memo the parses share, so that a line read in one reply is not read again in the next.

    Started afresh once it holds more than ``4 * LINE_CACHE`` readings (so it never holds more than
    that and the lines of the one reply last parsed). Only pure readings are kept: replies parsed at
    the same time may share it.
    """
    memo = _SHARED[0]
    if memo.size() > 4 * LINE_CACHE:
        memo = _SHARED[0] = LineMemo()
    return memo


def heading_candidates(lines: list[str], *, hashes_only: bool = False) -> list[int]:
    """The indices of the lines that may head a section or start with ``#``, in order.

    Found by one regular expression over the joined lines, not by a loop over them: no other line
    heads a section (:func:`split_heading` gives None for it, whatever the sections allowed) or is a
    ``#`` heading, so a reader may take the lines between two candidates as plain text at once.
    ``hashes_only``: only the lines whose first character past the blanks is ``#``.
    """
    first, following = (_FIRST_HASH, _NEXT_HASH) if hashes_only else (_FIRST_MAY_HEAD, _NEXT_MAY_HEAD)
    text = "\n".join(lines)
    starts = [match.end() for match in following.finditer(text)]  # just past the newline
    found = [0] if first.match(text) else []
    if starts:
        newlines = list(map(add, accumulate(map(len, lines)), count()))  # where line k's newline is
        found.extend(bisect_left(newlines, start) for start in starts)  # the line after that newline
    return found


def split_sections(
    lines: list[str], allowed: frozenset[str], memo: LineMemo | None = None
) -> tuple[list[str], list[Section]]:
    """Split block lines into the preamble (before any heading) and the ``allowed`` sections."""
    preamble: list[str] = []
    sections: list[Section] = []
    table = (memo or LineMemo()).headings(allowed)
    get = table.get
    current = preamble
    for line in lines:
        heading = get(line, MISS)
        if heading is MISS:
            heading = table[line] = _read_heading(line, allowed)
        if heading is not None:
            section = Section(heading[0], heading[1])
            sections.append(section)
            current = section.lines
        else:
            current.append(line)
    return preamble, sections


_BLANK: Final = (-2, "", "")
NO_ITEM: Final = -1
"""The indent in the :func:`item_line` reading of a line that is no list item."""
_DEEPEST: Final = 1 << 62


def item_line(line: str) -> tuple[int, str, str]:
    """``(indent, item text, stripped line)`` of a list item; ``(NO_ITEM, "", stripped line)`` of another
    line with text; ``(-2, "", "")`` for a blank line. Readers keep it in the memo table ``"item lines"``."""
    stripped = line.strip()
    if not stripped:
        return _BLANK
    item = _read_list_item(line)
    return (item[0], item[1], stripped) if item is not None else (NO_ITEM, "", stripped)


def items_of(section: Section, memo: LineMemo | None = None) -> tuple[str, ...]:
    """The items of a findings-like section: top-level list items, or else each non-empty line.

    Lines under an item (continuations, nested items) are folded into it. Each distinct line is read
    once per reply (``memo``).
    """
    reads: dict[str, tuple[int, str, str]] = (memo or LineMemo()).table("item lines")
    get = reads.get
    filled: list[tuple[int, str, str]] = []
    top = _DEEPEST  # the least indent of an item
    for line in section.lines:
        read = get(line)
        if read is None:
            read = reads[line] = item_line(line)
        indent = read[0]
        if indent == -2:  # blank
            continue
        filled.append(read)
        if NO_ITEM < indent < top:
            top = indent
    if top == _DEEPEST:  # no item: each line is one
        items = [section.inline] if section.inline else []
        items.extend(_unbold(stripped) for _, _, stripped in filled)
        return tuple(filter(None, items))
    groups: list[list[str]] = [[section.inline]] if section.inline else []
    for indent, text, stripped in filled:
        if indent == top:
            groups.append([text])
        elif not groups:
            groups.append([stripped])
        else:
            groups[-1].append(text if indent != NO_ITEM else stripped)
    return tuple(filter(None, [" ".join(filter(None, group)) if len(group) > 1 else group[0] for group in groups]))
