"""A marker block streams as a line of prose; the text around it streams as it is, however it is cut."""

from __future__ import annotations

import random
import re

import pytest

from tunaflow_tui.core.marker_prose import ProseStream

PLAN = (
    "Here is the plan.\n\n<!-- tunaflow:plan-proposal -->\n# Add multiplication\n\n## Subtasks\n"
    "1. Add `mul(a, b)`\n2. Test `mul`\n3. Document it\n\n## Description\nMultiply.\n"
    "<!-- /tunaflow:plan-proposal -->\n\nApprove it with a."
)
VERDICT = ("I read the diff.\n\n<!-- tunaflow:review-verdict -->\nverdict: fail\nscores: correctness=2\n"
           "findings:\n- no test\n<!-- /tunaflow:review-verdict -->\n")


def _stream(text: str, seed: int) -> tuple[str, list[str]]:
    prose, shown, lines = ProseStream(), [], []
    cut = random.Random(seed)
    position = 0
    while position < len(text):
        size = cut.randint(1, 25)
        step = prose.feed(text[position : position + size])
        position += size
        shown.append(step.text)
        if step.activity is not None:
            lines.append(step.activity)
    last = prose.finish()
    shown.append(last.text)
    if last.activity is not None:
        lines.append(last.activity)
    return "".join(shown), lines


@pytest.mark.parametrize("seed", range(40))
def test_a_plan_streams_as_prose_whatever_the_chunks(seed: int) -> None:
    shown, lines = _stream(PLAN, seed)
    assert shown == "Here is the plan.\n\n\n\nApprove it with a."
    assert lines[0] == "drafting a plan…"
    counts = [int(re.search(r"\((\d)", line).group(1)) for line in lines[1:-1]]  # type: ignore[union-attr]
    assert counts == sorted(counts) and all(line.endswith("so far)") for line in lines[1:-1])
    assert lines[-1] == "plan drafted (3 subtasks)"


def test_each_subtask_line_counts_as_it_arrives() -> None:
    prose, lines = ProseStream(), []
    for line in PLAN.splitlines(keepends=True):
        step = prose.feed(line)
        if step.activity is not None:
            lines.append(step.activity)
    assert lines == ["drafting a plan…", "drafting a plan… (1 subtask so far)", "drafting a plan… (2 subtasks so far)",
                     "drafting a plan… (3 subtasks so far)", "plan drafted (3 subtasks)"]


def test_a_verdict_streams_as_reviewing() -> None:
    shown, lines = _stream(VERDICT, 1)
    assert "verdict:" not in shown and "scores:" not in shown
    assert shown.startswith("I read the diff.")
    assert lines == ["reviewing…", "verdict written"]


def test_text_without_blocks_streams_unchanged_and_says_nothing() -> None:
    text = "Plain answer with a <!-- comment --> and <!-- tunaflow:subtask-done:1 --> done."
    shown, lines = _stream(text, 3)
    assert shown == "Plain answer with a <!-- comment --> and  done."
    assert lines == []


def test_an_unclosed_block_stays_held_back() -> None:
    shown, lines = _stream("Start.\n<!-- tunaflow:plan-proposal -->\ntitle: X\nsubtasks:\n1. a\n", 5)
    assert shown == "Start.\n"
    assert lines[-1] == "drafting a plan… (1 subtask so far)"
