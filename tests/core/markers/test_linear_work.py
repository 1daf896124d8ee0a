"""The parser's work grows linearly with the reply, for the dense shapes agents (or attacks) produce.

Work is counted, not timed (see ``work_meter``): lines executed in the marker package plus the
characters its whole-string operations handle. Each shape is parsed at one size and at four times
that size; the work per character of the reply stays the same when it is linear, and grows about
4× when a step cuts a new string per character (or per marker) of a line.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from work_meter import growth

from tunaflow_tui.core.markers import parse_markers

PACKAGE = "/tunaflow_tui/core/markers/"
LINEAR = 1.15  # work per character at 4× the size over that at 1×, with room for fixed costs


def title_wrapped_in_marks(pairs: int) -> str:
    """A proposal whose title sits inside ``pairs`` layers of ``**`` / ``__`` on each side."""
    return ("<!-- tunaflow:plan-proposal -->\n" + "** " * pairs + "Cache the lookups" + " __" * pairs
            + "\n1. Add the cache\n2. Test it\n")


def verdict_quoted_deep(depth: int) -> str:
    """Verdict lines behind ``depth`` quote marks (lines stay under the 2,000-character cap)."""
    line = ">" * depth + " verdict: fail\n"
    return "<!-- tunaflow:review-verdict -->\n" + line * 8 + "- code_quality: 2\n<!-- /tunaflow:review-verdict -->\n"


def unclosed_openers(units: int) -> str:
    """A proposal opener repeated and never closed, over heading-like lines."""
    return "".join(
        f"<!-- tunaflow:plan-proposal -->\n**Title**: plan {n}\n## Subtasks\n1. **Step** — do {n}\n"
        f"### Task {n} — tests\n| # | Task |\n|---|---|\n| {n} | Measure |\nDescription: more\n"
        for n in range(units)
    )


def mixed_kinds(units: int) -> str:
    """Verdict and consensus openers taking turns, each cutting the previous block short."""
    return "".join(
        f"<!-- tunaflow:{('review-verdict', 'consensus')[n % 2]} -->\n## Verdict\n**Overall verdict**: fail\n"
        f"> verdict: PASS\n- code_quality: 4/5\n| Plan coverage | 3 |\nfailed_subtask_ids: [{n}]\n"
        f"## Findings\n- Quality: 2 - error handling\n  more {n}\n**Consensus**: yes\n반대 의견:\n- 없음\n"
        for n in range(units)
    )


def long_line(markers: int) -> str:
    """One line holding ``markers`` tiny markers between code spans and ordinary comments."""
    return "".join(
        f"`a` ``b ` c`` <!--tunaflow:subtask-done:{n % 9 + 1}--> <!----> ```` d ```` <!--tunaflow:impl-complete--> "
        for n in range(markers)
    ) + "\n"


def tiny_markers(units: int) -> str:
    """Short lines of markers and near-markers: quoted, indented, in code spans, plain."""
    return "".join(
        f"<!--tunaflow:subtask-done:{n % 50 + 1}-->\n> <!--tunaflow:impl-complete-->\n"
        f"\n    <!--tunaflow:impl-complete-->\n`<!--tunaflow:impl-complete-->`\n<!--x-->\n<!-- tunaflow:nope -->\n"
        for n in range(units)
    )


def deep_list(depth: int) -> str:
    """One list nested ``depth`` levels (tabs and spaces), a marker under every tenth item."""
    lines = []
    for level in range(depth):
        indent = ("\t" if level % 3 == 0 else "  ") * level
        lines.append(f"{indent}- item {level}\n")
        if level % 10 == 9:
            lines.append(f"{indent}  <!-- tunaflow:subtask-done:{level % 9 + 1} -->\n")
    return "".join(lines)


SHAPES: dict[str, tuple[Callable[[int], str], int]] = {
    "title wrapped in ** pairs (read_proposal)": (title_wrapped_in_marks, 200),
    "verdict quoted deep (read_verdict)": (verdict_quoted_deep, 100),
    "unclosed proposal openers (split_heading)": (unclosed_openers, 40),
    "verdict and consensus taking turns (read_verdict, read_consensus)": (mixed_kinds, 40),
    "tiny markers on one long line (scanner, code spans)": (long_line, 60),
    "tiny markers, quoted and indented (scanner, quoted lines)": (tiny_markers, 40),
    "deeply nested list (indent widths)": (deep_list, 40),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_parsing_work_grows_linearly(shape: str) -> None:
    make, size = SHAPES[shape]
    assert growth(make, parse_markers, PACKAGE, size) <= LINEAR


def test_the_shapes_are_read_as_written() -> None:
    """The shapes measured are the ones meant: markers found, titles and verdicts read."""
    proposal = parse_markers(title_wrapped_in_marks(3)).markers[0]
    assert proposal.title == "Cache the lookups"  # type: ignore[attr-defined]
    verdict = parse_markers(verdict_quoted_deep(50)).markers[0]
    assert verdict.verdict == "fail"  # type: ignore[attr-defined]
    assert len(parse_markers(unclosed_openers(5)).markers) == 1  # one block: the same opener stays text
    assert len(parse_markers(mixed_kinds(6)).markers) == 6
    assert len(parse_markers(long_line(10)).markers) == 20
    assert len(parse_markers(tiny_markers(4)).markers) == 4  # quoted, indented and spanned ones are quotes
    assert len(parse_markers(deep_list(40)).markers) == 4
