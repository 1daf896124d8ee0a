"""Differential tests: the parser gives exactly what the reference parser (``reference_parser/``, the
parser as it stood before its shared line pass) gives, on generated and adversarial replies.

Exactly: the same markers (every field, spans and raw text included), in the same order, and the same
display text, for every role; ``scrub_markers`` the same text.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marker_reference import REFERENCE

from tunaflow_tui.core.markers import ParseResult, parse_markers, scrub_markers

ROLE_NAMES = [None, "architect", "developer", "reviewer", "verifier", "synthesizer", "user"]


def _facts(result: ParseResult) -> list[object]:
    return [result, [(m.span, m.raw, m.to_json()) for m in result.markers]]


def assert_same(text: str, roles: list[str | None] | None = None) -> None:
    """The parser and the reference agree on ``text`` for every role, and so do their scrubs."""
    for role in roles if roles is not None else ROLE_NAMES:
        assert _facts(parse_markers(text, role)) == _facts(REFERENCE.parse_markers(text, role)), role
    assert scrub_markers(text) == REFERENCE.scrub_markers(text)


OPENERS = [
    "<!-- tunaflow:plan-proposal -->", "<!-- tunaflow:review-verdict -->", "<!-- tunaflow:consensus -->",
    "<!--tunaflow:plan_proposal-->", "<!--  TunaFlow : Review-Verdict -->", "<!-- tuna\ufb02ow:consensus -->",
]  # fmt: skip
CLOSERS = [
    "<!-- /tunaflow:plan-proposal -->", "<!-- /tunaflow:review-verdict -->", "<!-- /tunaflow:consensus -->",
    "<!--/tunaflow:plan-proposal-->", "<!-- / tunaflow : consensus -->",
]  # fmt: skip
SINGLES = [
    "<!-- tunaflow:impl-complete -->", "<!--tunaflow:subtask-done:3-->", "<!-- tunaflow:subtask-done:#12 -->",
    "<!-- tunaflow:subtask-done:0 -->", "<!-- tunaflow:subtask-done:1234567 -->", "<!-- todo -->", "<!---->",
    "<!--x-->", "<!-- tunaflow:nothing -->", "<!-- <!-- tunaflow:impl-complete -->", "<!-- unclosed",
]  # fmt: skip
#: Lines the block readers treat specially, and lines that only look like them.
BODY_LINES = [
    "## Subtasks", "subtasks", "Subtasks:", "**Subtasks**", "서브태스크", "Title: Add login", "**Title**: Cache",
    "# Plan 7", "제목: 로그인", "Description: Replace JWT", "description", "Expected outcome: faster",
    "**Constraints**", "constraints:", "Non-goals:", "- no new dependency", "* bullet", "+ plus", "• dot",
    "· mid", "1. **Add a cache** — keep `tokens`", "2) second", "(3) third", "10. tenth", "   details under",
    "\tdetails in a tab", "    indented code", "### Task 1 — write the tests", "### Step 2: measure",
    "## 작업 3 — 정리", "| # | Task | Details |", "|---|---|---|", "| 1 | Measure | before \\| after |",
    "| Verdict | FAIL |", "| Plan coverage | 3 |", "## Verdict", "verdict: PASS", "**Overall verdict**: does not pass",
    "Verdict: pass | fail", "> verdict: PASS (quoted)", "> > verdict: fail", "판정: 통과", "결과: 미통과",
    "putusan: tidak lulus", "Verdict", "PASS", "approved", "- code_quality: 4/5", "plan_coverage: 4",
    "test coverage: 9", "**Docs**: 3 out of 5", "점수: 4점", "failed_subtask_ids: [2, 3]", "Failed subtasks:",
    "- 2", "- #4 (login)", "- Subtask 5", "## Findings", "findings:", "- Quality: 2 - error handling missing",
    "  continues under the finding", "## Recommendations", "- add tests", "Consensus: use the cache",
    "**Consensus**: agreed", "반대 의견:", "- 없음", "Contested", "dissent:", "Open questions:", "```",
    "```markdown", "```python", "~~~", "````", "> quoted line", "   > quoted after blanks", "`inline`",
    "``double ` tick``", "plain prose line", "Ünïcödé prose ß ﬁnd", "K\u212aelvin ſcore: 3", "", " ", "\t",
]  # fmt: skip


def _line(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 9))
    if kind <= 5:
        line = draw(st.sampled_from(BODY_LINES))
    elif kind == 6:
        line = draw(st.sampled_from(OPENERS + CLOSERS + SINGLES))
    elif kind == 7:
        line = draw(st.text(max_size=12))
    elif kind == 8:
        marker = draw(st.sampled_from(OPENERS + CLOSERS + SINGLES))
        line = draw(st.sampled_from(["`{}`", "> {}", "    {}", "- {}", "text {} text", "``{}``", "{}  ", "\t{}"]))
        line = line.format(marker)
    else:
        line = draw(st.sampled_from(BODY_LINES)) + draw(st.sampled_from(SINGLES + OPENERS + CLOSERS))
    indent = draw(st.sampled_from(["", "", "", " ", "  ", "   ", "    ", "\t", "  \t"]))
    return indent + line


@st.composite
def replies(draw: st.DrawFn) -> str:
    """A reply of marker blocks, single markers, fences, quotes and lists, with any line ending."""
    lines = [_line(draw) for _ in range(draw(st.integers(0, 40)))]
    ending = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    return ending.join(lines) + draw(st.sampled_from(["", ending]))


FRAGMENTS = [*OPENERS, *CLOSERS, *SINGLES, *BODY_LINES, "\n", "\r\n", "`", "``", "<!--", "-->", ">", "#", "**", " "]
fragment_soup = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=80).map("".join)


@settings(max_examples=400, deadline=None)
@given(replies())
def test_generated_replies_parse_as_the_reference_parses_them(text: str) -> None:
    assert_same(text)


@settings(max_examples=400, deadline=None)
@given(fragment_soup)
def test_fragment_soup_parses_as_the_reference_parses_it(text: str) -> None:
    assert_same(text)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_arbitrary_text_parses_as_the_reference_parses_it(text: str) -> None:
    assert_same(text, [None, "developer"])


def _repeat(unit: Callable[[int], str], count: int) -> str:
    return "".join(unit(n) for n in range(1, count + 1))


SHAPES: dict[str, Callable[[int], str]] = {
    "unclosed openers": lambda n: (
        f"<!-- tunaflow:plan-proposal -->\n**Title**: Cache the token lookups ({n})\n## Subtasks\n"
        f"1. **Add a cache** — keep `tokens` per file\n   details under the item {n}\n### Task {n} — write tests\n"
        f"Description: cleared on save\n| # | Task | Details |\n|---|---|---|\n| {n} | Measure | before |\n"
        f"**Constraints**\n- no new dependency\nExpected outcome: faster lookups\n\n"
    ),
    "mixed kinds": lambda n: (
        f"<!-- tunaflow:{('review-verdict', 'consensus')[n % 2]} -->\n## Verdict\n**Overall verdict**: does not pass\n"
        f"> verdict: PASS (quoted)\n- code_quality: 4/5\n| Plan coverage | 3 |\nfailed_subtask_ids: [{n}, 2]\n"
        f"## Findings\n- Quality: 2 - error handling missing\n  continues {n}\n**Consensus**: use it\n반대 의견:\n- 없음\n\n"
    ),
    "long lines": lambda n: (
        f"the `cache` and ``double ` tick`` <!--tunaflow:subtask-done:{n % 9 + 1}--> then <!---->"
        f" ```` run ```` <!-- note --> `{n}` <!--tunaflow:impl-complete--> and more " + ("\n" if n % 40 == 0 else "")
    ),
    "tiny markers": lambda n: (
        f"<!--tunaflow:subtask-done:{n % 50 + 1}-->\n> <!--tunaflow:impl-complete-->\n    <!--tunaflow:impl-complete-->\n"
        f"`<!--tunaflow:impl-complete-->`\n<!--x-->\n<!-- tunaflow:subtask-done:0 -->\nplain text line {n}\n\n"
    ),
    "deep lists": lambda n: "".join(
        ("\t" if n % 3 == 0 else "  ") * depth + f"- item {depth} of list {n}\n" for depth in range(30)
    ) + ("\t" if n % 3 == 0 else "  ") * 30 + f"<!-- tunaflow:subtask-done:{n % 9 + 1} -->\n\n",
    "closed blocks in fences": lambda n: (
        f"intro {n}\n```markdown\n<!-- tunaflow:review-verdict -->\nverdict: PASS\n<!-- /tunaflow:review-verdict -->\n```\n"
        f"```\n<!-- tunaflow:consensus -->\n- agreed\n<!-- /tunaflow:consensus -->\n```\n"
        f"~~~md\n<!-- tunaflow:plan-proposal -->\n# Plan\n1. a\n<!-- /tunaflow:plan-proposal -->\n~~~\n"
        f"```python\n<!-- tunaflow:impl-complete -->\n```\n"
    ),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_dense_shapes_parse_as_the_reference_parses_them(name: str, ending: str) -> None:
    text = _repeat(SHAPES[name], 60).replace("\n", ending)
    assert_same(text)
    assert_same(text[: len(text) // 3])  # cut anywhere: unclosed blocks, half a marker


def test_mixed_shapes_and_very_long_lines_parse_as_the_reference_parses_them() -> None:
    mixed = "".join(_repeat(make, 8) for make in SHAPES.values())
    assert_same(mixed)
    long_line = "x" * 70_000 + "<!-- tunaflow:impl-complete -->" + "`" * 5_000 + " <!-- tunaflow:subtask-done:2 -->"
    assert_same(long_line + "\n" + long_line.replace("x", "## Findings ", 10))
