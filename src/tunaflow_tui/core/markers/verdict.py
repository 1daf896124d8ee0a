"""Read the body of ``review-verdict`` and ``consensus`` blocks.

A verdict line (``verdict: pass``, ``**Verdict**: PASS``, ``## Verdict`` with the value on the next
line) decides pass/fail/conditional; without one the verdict is ``conditional``. Score lines
(``plan_coverage: 4``, ``- code_quality: 4/5``, table rows) anywhere in the block give 1–5 scores;
values outside 1–5 are ignored.
"""

from __future__ import annotations

import re
from typing import Final

from tunaflow_tui.core.markers.model import Consensus, ReviewVerdict, Scores, VerdictValue
from tunaflow_tui.core.markers.sections import BULLETS, Section, items_of, normalize_name, split_sections

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
    "lgtm": "pass", "통과": "pass", "승인": "pass", "lulus": "pass", "disetujui": "pass",
    "fail": "fail", "failed": "fail", "fails": "fail", "reject": "fail", "rejected": "fail",
    "실패": "fail", "반려": "fail", "gagal": "fail", "ditolak": "fail",
    "conditional": "conditional", "conditionally": "conditional", "partial": "conditional",
    "조건부": "conditional", "bersyarat": "conditional",
}  # fmt: skip
_FAILED_KEYS: Final = frozenset({"failed subtasks", "failed subtask ids", "failed subtask", "failed ids"})


def _key_value(line: str) -> tuple[str, str] | None:
    """``(normalized key, value)`` of a ``key: value`` line, a bullet of one, or a table row."""
    text = line.strip()
    if text.startswith("|"):
        cells = [c.strip() for c in text.strip("|").split("|")]
        if len(cells) >= 2:
            return normalize_name(cells[0]), next((c for c in cells[1:] if c), "")
        return None
    if text.startswith(BULLETS):
        text = text[2:].strip()
    for sep in (":", "：", "="):
        pos = text.find(sep)
        if 0 < pos <= 40:
            key, value = text[:pos], text[pos + 1 :]
            if key.endswith("**") or not key.startswith("**"):
                return normalize_name(key), value.strip().strip("*").strip()
            close = value.find("**")
            return normalize_name(key), value[close + 2 :].strip() if close != -1 else value.strip()
    return None


def _score(line: str) -> tuple[str, int] | None:
    """A ``(score name, value)`` if the line states an in-range score."""
    pair = _key_value(line)
    if pair is None:
        return None
    name = SCORE_KEYS.get(pair[0])
    match = _SCORE_VALUE.fullmatch(pair[1]) if name else None
    if name is None or match is None:
        return None
    value = int(match.group(1))
    return (name, value) if 1 <= value <= 5 else None


def _verdict_word(text: str) -> VerdictValue | None:
    words = text.replace("*", " ").replace("`", " ").replace("✅", " ").replace("❌", " ").split()
    for word in words[:3]:
        found = _VERDICT_WORDS.get(word.strip(".,;:!()[]").casefold())
        if found is not None:
            return found
    return None


def _numbers(text: str) -> tuple[int, ...]:
    out: list[int] = []
    digits = ""
    for ch in text + " ":
        if ch.isascii() and ch.isdigit():
            digits += ch
        else:
            if digits and len(digits) <= 6 and int(digits) > 0:
                out.append(int(digits))
            digits = ""
    return tuple(dict.fromkeys(out))


def read_verdict(body: str, *, accepted: bool, raw: str, span: tuple[int, int], closed: bool) -> ReviewVerdict:
    """Build a :class:`ReviewVerdict` from the text between the verdict markers."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    scores: list[tuple[str, int]] = []
    failed: dict[int, None] = {}
    kept: list[str] = []
    for line in lines:
        score = _score(line)
        pair = _key_value(line) if score is None else None
        if score is not None:
            scores.append(score)
        elif pair is not None and pair[0] in _FAILED_KEYS:
            failed.update(dict.fromkeys(_numbers(pair[1])))
        else:
            kept.append(line)
    preamble, sections = split_sections(kept, VERDICT_SECTIONS)
    verdict: VerdictValue | None = None
    for section in sections:
        if section.name == "verdict" and verdict is None:
            filled = [line for line in [section.inline, *section.lines] if line.strip()]
            verdict = _verdict_word(filled[0]) if filled else None
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
