"""Section headings and list items inside a marker block.

A section heading is a line naming a known section, in English, Korean or Indonesian, matched
case-insensitively, with optional ``#`` heading marks, ``**bold**`` and a trailing colon; text after
the colon on the same line is the section's first content (``description: Replace JWT``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

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
"""How many distinct lines the per-line readers remember.  They are pure functions of the line, and a
long reply repeats its lines (``## Findings``, ``- none``, a template's labels): each distinct line is
read once, however many blocks it appears in."""
_PLAIN_NAME: Final = re.compile(r"[^\W\d_]+(?:[ _-][^\W\d_]+)*")
#: What may precede a section name on its line: blanks, heading marks, emphasis, hyphens.
_LEAD: Final = re.compile(r"[\s#*_`\-]*")
#: The first character of every section name, case-folded: a line whose name starts otherwise is no heading.
_NAME_STARTS: Final = frozenset(alias[0] for alias in SECTION_ALIASES)
_UNESCAPED_PIPE: Final = re.compile(r"(?<!\\)\|")
BULLETS: Final = ("- ", "* ", "+ ", "• ", "· ")


def normalize_name(name: str) -> str:
    """Case-fold a section/key name and turn ``_``/``-`` runs and spaces into single spaces."""
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
    # Most lines are prose: reject them on the first character their name could start with, before
    # any cutting (the name, once normalized, starts with the first character past the decoration).
    lead = _LEAD.match(line).end()  # type: ignore[union-attr]  # matches the empty string at least
    if lead == len(line) or line[lead].casefold()[:1] not in _NAME_STARTS:
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
    return section, _unbold(rest.strip())


def table_cells(line: str) -> list[str]:
    """The cells of a Markdown table row; an escaped ``\\|`` stays inside its cell as ``|``."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    if inner.endswith("|") and not inner.endswith("\\|"):
        inner = inner[:-1]
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


def split_sections(lines: list[str], allowed: frozenset[str]) -> tuple[list[str], list[Section]]:
    """Split block lines into the preamble (before any heading) and the ``allowed`` sections."""
    preamble: list[str] = []
    sections: list[Section] = []
    for line in lines:
        heading = split_heading(line, allowed)
        if heading is not None:
            sections.append(Section(heading[0], heading[1]))
        elif sections:
            sections[-1].lines.append(line)
        else:
            preamble.append(line)
    return preamble, sections


def items_of(section: Section) -> tuple[str, ...]:
    """The items of a findings-like section: top-level list items, or else each non-empty line.

    Lines under an item (continuations, nested items) are folded into it.
    """
    lines = [line for line in section.lines if line.strip()]
    parsed = [list_item(line) for line in lines]
    items: list[str] = []
    if section.inline:
        items.append(section.inline)
    indents = [it[0] for it in parsed if it is not None]
    if not indents:
        items.extend(_unbold(line.strip()) for line in lines)
        return tuple(i for i in items if i)
    top = min(indents)
    groups: list[list[str]] = [[item] for item in items]
    for line, item in zip(lines, parsed, strict=True):
        if item is not None and item[0] <= top:
            groups.append([item[1]])
        elif groups and item is not None:
            groups[-1].append(item[1])
        elif groups:
            groups[-1].append(line.strip())
        else:
            groups.append([line.strip()])
    joined = (" ".join(p for p in group if p) for group in groups)
    return tuple(i for i in joined if i)
