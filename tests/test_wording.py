"""Counted words read as people write them: "1 failed review", "3 files" — never "review(s)"."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from tunaflow_tui.core.counting import counted, plural

ROOT = Path(__file__).resolve().parents[1]
HEDGED_PLURAL = re.compile(r"[A-Za-z]\(s\)")


def _strings(path: Path) -> list[tuple[int, str]]:
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    found: list[tuple[int, str]] = []
    for token in tokens:
        if token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            found.append((token.start[0], token.string))
    return found


def test_no_text_of_the_product_hedges_a_plural() -> None:
    hedged = [f"{path.relative_to(ROOT)}:{line}: {text.strip()[:80]}"
              for path in sorted((ROOT / "src").rglob("*.py"))
              for line, text in _strings(path) if HEDGED_PLURAL.search(text)]
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        hedged += [f"{doc.relative_to(ROOT)}:{number}: {line.strip()[:80]}"
                   for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1)
                   if HEDGED_PLURAL.search(line)]
    assert hedged == []


def test_counted_says_one_and_many() -> None:
    assert counted(1, "failed review") == "1 failed review"
    assert counted(2, "failed review") == "2 failed reviews"
    assert counted(0, "file") == "0 files"
    assert plural(3, "was", "were") == "were" and plural(1, "was", "were") == "was"
