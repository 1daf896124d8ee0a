"""Read the body of ``review-verdict`` and ``consensus`` blocks.

A verdict line decides pass/fail/conditional; without one the verdict is ``conditional``. The label
is ``verdict`` (or a name ending in it, ``Overall verdict``), optionally bold, a heading, a bullet
or behind ``>``, followed by ``:``, ``—``, ``-`` or ``=``; a table row ``| Verdict | FAIL |``; or
``## Verdict`` with the value on the next line. The value is the first word after the label
(auxiliaries like ``is``/``does`` skipped): a negation before it (``not approved``,
``does not pass``, ``tidak lulus``, ``통과 아님``, ``미통과``) turns a pass into ``fail`` and
anything else into ``conditional``; a choice (``pass | fail``, ``pass or fail``) is ``conditional``;
an unknown first word gives no verdict.

Score lines (``plan_coverage: 4``, ``- code_quality: 4/5``, table rows) give 1–5 scores; values
outside 1–5 are ignored. Inside findings and recommendations, list items stay items even when they
look like scores (``- Quality: 2 - error handling missing``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from tunaflow_tui.core.markers.marker_model import Consensus, ReviewVerdict, Scores, VerdictValue

from .sections import (
    BULLETS,
    LINE_CACHE,
    SECTION_ALIASES,
    Section,
    items_of,
    list_item,
    normalize_name,
    split_heading,
    split_sections,
    table_cells,
)

VERDICT_SECTIONS: Final = frozenset({"verdict", "findings", "recommendations", "scores", "failed_subtasks"})
CONSENSUS_SECTIONS: Final = frozenset({"consensus", "contested", "dissent"})
SCORE_KEYS: Final[dict[str, str]] = {
    "plan coverage": "plan_coverage", "coverage of plan": "plan_coverage",
    "code quality": "code_quality", "quality": "code_quality",
    "test coverage": "test_coverage", "tests": "test_coverage", "testing": "test_coverage",
    "convention": "convention", "conventions": "convention", "style": "convention",
    "doc quality": "doc_quality", "docs quality": "doc_quality", "documentation": "doc_quality",
    "documentation quality": "doc_quality", "docs": "doc_quality",
}  # fmt: skip
_SCORE_VALUE: Final = re.compile(r"\**\s{0,3}(\d{1,3})(?:\.\d{1,3})?\s{0,3}(?:/\s{0,3}5|out of 5|점)?\s{0,3}\**(?:\s{0,3}[(\-—–,.].*)?")
_VERDICT_WORDS: Final[dict[str, VerdictValue]] = {
    "pass": "pass", "passed": "pass", "passes": "pass", "approve": "pass", "approved": "pass",
    "lgtm": "pass", "통과": "pass", "승인": "pass", "합격": "pass", "lulus": "pass", "disetujui": "pass",
    "fail": "fail", "failed": "fail", "fails": "fail", "reject": "fail", "rejected": "fail",
    "실패": "fail", "반려": "fail", "불합격": "fail", "gagal": "fail", "ditolak": "fail",
    "conditional": "conditional", "conditionally": "conditional", "partial": "conditional",
    "조건부": "conditional", "bersyarat": "conditional",
}  # fmt: skip
_QUOTE_MARKS: Final = re.compile(r"(?:>\s*)+")
_FAILED_KEYS: Final = frozenset({"failed subtasks", "failed subtask ids", "failed subtask", "failed ids"})
_KOREAN_STEMS: Final = ("통과", "승인", "합격", "실패", "반려", "조건부")
_NEGATIONS: Final = frozenset({"not", "no", "never", "cannot", "non", "tidak", "bukan", "belum", "아님"})
_KOREAN_NEGATIONS: Final = ("아님", "아니", "않", "못")
_ALTERNATIVES: Final = frozenset({"|", "/", "or", "atau", "또는"})  # `pass | fail` copied from a template
_FILLERS: Final = frozenset({
    "is", "are", "was", "were", "be", "been", "does", "do", "did", "has", "have", "will", "would",
    "should", "could", "can", "it", "this", "overall", "final", "result", "status", "-", "—", "–", "=",
    "->", "=>", "→", "adalah", "yaitu",
})  # fmt: skip
_VERDICT_LABELS: Final = frozenset(name for name, section in SECTION_ALIASES.items() if section == "verdict")
_LABEL_WORD: Final = re.compile("|".join(sorted(_VERDICT_LABELS)))
_LABEL_IN_LINE = _LABEL_WORD
"""Looked for in a whole (case-folded) line first: a line without a label word states no verdict."""
_VERDICT_SEPARATORS: Final = (":", "：", "—", "–", " - ", "=")
_DIGITS: Final = re.compile("[0-9]+")
_ITEM_SECTIONS: Final = frozenset({"findings", "recommendations"})


@lru_cache(maxsize=LINE_CACHE)
def _key_value(line: str) -> tuple[str, str] | None:
    """``(normalized key, value)`` of a ``key: value`` line, a bullet of one, or a table row."""
    text = line.strip()
    if text.startswith("|"):
        cells = table_cells(text)
        if len(cells) >= 2:
            return normalize_name(cells[0]), next((c for c in cells[1:] if c), "")
        return None
    if text.startswith(BULLETS):
        text = text[2:].strip()
    for sep in (":", "：", "="):
        pos = text.find(sep, 0, 41)  # a key is at most 40 characters: no need to look further
        if pos > 0:
            key, value = text[:pos], text[pos + 1 :]
            if key.endswith("**") or not key.startswith("**"):
                return normalize_name(key), value.strip().strip("*").strip()
            close = value.find("**")
            return normalize_name(key), value[close + 2 :].strip() if close != -1 else value.strip()
    return None


def _score(pair: tuple[str, str] | None) -> tuple[str, int] | None:
    """A ``(score name, value)`` if the line read as ``pair`` states an in-range score."""
    if pair is None:
        return None
    name = SCORE_KEYS.get(pair[0])
    match = _SCORE_VALUE.fullmatch(pair[1]) if name else None
    if name is None or match is None:
        return None
    value = int(match.group(1))
    return (name, value) if 1 <= value <= 5 else None


def _lookup(word: str) -> tuple[VerdictValue, bool] | None:
    """``(verdict, negated)`` for one word: ``approved``, ``통과했습니다``, ``미통과`` (negated)."""
    found = _VERDICT_WORDS.get(word)
    if found is not None:
        return found, False
    negated = word[:1] in ("미", "불") and len(word) > 1
    base = word[1:] if negated else word
    for stem in _KOREAN_STEMS:
        if base.startswith(stem):
            return _VERDICT_WORDS[stem], negated
    return None


def _verdict_word(text: str) -> VerdictValue | None:
    """The verdict stated by the first words of ``text`` (see the module docstring)."""
    words = text.replace("*", " ").replace("`", " ").replace("✅", " ").replace("❌", " ").split(maxsplit=8)
    negated = False
    for k, raw in enumerate(words[:8]):
        word = raw.strip(".,;:!?()[]\"'").casefold()
        if not word:
            continue
        found = _lookup(word)
        if found is not None:
            value, negated_here = found
            following = words[k + 1].strip(".,;:!?()[]").casefold() if k + 1 < len(words) else ""
            if following in _ALTERNATIVES:
                return "conditional"
            if negated or negated_here or following.startswith(_KOREAN_NEGATIONS):
                return "fail" if value == "pass" else "conditional"
            return value
        if word in _NEGATIONS or word.endswith(("n't", "n’t")):
            negated = True
        elif word not in _FILLERS:
            return None
    return None


@lru_cache(maxsize=LINE_CACHE)
def _verdict_line(text: str) -> tuple[str, bool] | None:
    """``(value, bare)`` if the (stripped) line states a verdict label; ``value`` is "" for a label alone.

    ``bare`` is true for a label line that heads a section (not a bullet, quote or table row).
    """
    if not text or len(text) > 2000 or _LABEL_IN_LINE.search(text.casefold()) is None:
        return None  # the label is part of the line: a line without a label word states no verdict
    bare = True
    quoted = _QUOTE_MARKS.match(text)  # `> > >` at once: one cut, however deep the quote
    if quoted is not None:
        text, bare = text[quoted.end() :], False
    if text.startswith("|"):
        cells = table_cells(text)
        if len(cells) >= 2 and _is_verdict_label(cells[0]):
            return next((c for c in cells[1:] if c), ""), False
        return None
    if text.startswith(BULLETS):
        text, bare = text[2:].strip(), False
    text = text.lstrip("#").strip()
    cut, size = -1, 0
    for separator in _VERDICT_SEPARATORS:  # the earliest separator in the first 60 characters
        found = text.find(separator, 0, 60)
        if found > 0 and (cut == -1 or found < cut):
            cut, size = found, len(separator)
    key, value = (text[:cut], text[cut + size :]) if cut > 0 else (text, "")
    if not _is_verdict_label(key):
        return None
    return value.strip(), bare


def _is_verdict_label(key: str) -> bool:
    if _LABEL_WORD.search(key.casefold()) is None:
        return False  # normalizing only removes characters around a label: it must be there already
    name = normalize_name(key.replace("*", " ").replace("`", " "))
    if name in _VERDICT_LABELS:
        return True
    words = name.split()
    return 1 < len(words) <= 3 and words[-1] in _VERDICT_LABELS and words[-1] != "결과"


def _leading_number(text: str) -> int | None:
    """The number a failed-subtask list item starts with: ``2``, ``#4 (login)``, ``Subtask 5``."""
    words = text.replace("#", " ").split(maxsplit=2)
    if words and words[0].casefold().rstrip(":") in ("subtask", "task", "서브태스크", "subtugas", "tugas"):
        words = words[1:]
    digits = words[0].rstrip(".:,)") if words else ""
    if 0 < len(digits) <= 6 and digits.isascii() and digits.isdigit() and int(digits) > 0:
        return int(digits)
    return None


def _numbers(text: str) -> tuple[int, ...]:
    """The distinct numbers 1–999999 written in ``text`` (runs of ASCII digits), in order."""
    runs = (int(digits) for digits in _DIGITS.findall(text) if len(digits) <= 6)
    return tuple(dict.fromkeys(number for number in runs if number > 0))


def read_verdict(body: str, *, accepted: bool, raw: str, span: tuple[int, int], closed: bool) -> ReviewVerdict:
    """Build a :class:`ReviewVerdict` from the text between the verdict markers."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    scores: list[tuple[str, int]] = []
    failed: dict[int, None] = {}
    preamble: list[str] = []
    sections: list[Section] = []
    verdict: VerdictValue | None = None
    awaiting_verdict = False  # a verdict label alone: the value is on the next filled line
    listing_failed = False  # a failed-subtasks key without numbers: the list follows
    for line in lines:
        stripped = line.strip()
        if not stripped:
            if sections:
                sections[-1].lines.append(line)
            continue
        if awaiting_verdict:
            awaiting_verdict = False
            verdict = _verdict_word(stripped.lstrip(">#").strip())
        if listing_failed:
            item = list_item(line)
            number = _leading_number(item[1]) if item is not None else None
            if number is not None:
                failed[number] = None
                continue
            listing_failed = False
        if sections and sections[-1].name in _ITEM_SECTIONS and (
            list_item(line) is not None or line[:1] in (" ", "\t")
        ):
            sections[-1].lines.append(line)
            continue
        stated = _verdict_line(stripped)
        if stated is not None:
            value, bare = stated
            if verdict is None:
                if value:
                    verdict = _verdict_word(value)
                else:
                    awaiting_verdict = True
            if bare:
                sections.append(Section("verdict", value))
            continue
        pair = _key_value(stripped)
        score = _score(pair)
        if score is not None:
            scores.append(score)
            continue
        if pair is not None and pair[0] in _FAILED_KEYS:
            numbers = _numbers(pair[1])
            failed.update(dict.fromkeys(numbers))
            listing_failed = not numbers and pair[1].strip("[ ") == ""
            sections.append(Section("failed_subtasks", pair[1]))
            continue
        heading = split_heading(stripped, VERDICT_SECTIONS)
        if heading is not None:
            sections.append(Section(heading[0], heading[1]))
        elif sections:
            sections[-1].lines.append(line)
        else:
            preamble.append(line)
    if verdict is None:
        first = next((line for line in preamble if line.strip()), "")
        verdict = _verdict_word(first) if len(first.split()) <= 2 else None

    def collect(name: str) -> tuple[str, ...]:
        return tuple(i for s in sections if s.name == name for i in items_of(s))

    return ReviewVerdict(
        accepted=accepted, raw=raw, span=span, closed=closed, verdict=verdict or "conditional",
        scores=Scores(scores), failed_subtasks=tuple(failed), findings=collect("findings"),
        recommendations=collect("recommendations"),
    )  # fmt: skip


def read_consensus(body: str, *, accepted: bool, raw: str, span: tuple[int, int], closed: bool) -> Consensus:
    """Build a :class:`Consensus` from the text between the consensus markers.

    Text before any section heading counts as consensus.
    """
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    preamble, sections = split_sections(lines, CONSENSUS_SECTIONS)
    if any(line.strip() for line in preamble):
        sections.insert(0, Section("consensus", "", preamble))

    def collect(name: str) -> tuple[str, ...]:
        return tuple(i for s in sections if s.name == name for i in items_of(s))

    return Consensus(
        accepted=accepted, raw=raw, span=span, closed=closed, consensus=collect("consensus"),
        contested=collect("contested"), dissent=collect("dissent"),
    )  # fmt: skip
