"""The parser's shared line pass and its quicker pieces decide exactly as the reference parser's pieces.

Each piece is compared with its counterpart in ``reference_parser/`` (the parser before the shared
line pass) on lines built to reach its edges: decoration and names that fold to a section name, tabs
and blanks, runs of backticks of every length.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st
from marker_reference import REFERENCE

from tunaflow_tui.core.markers import ImplComplete, parse_markers, proposal, quotes, scanner, sections
from tunaflow_tui.core.markers.marker_model import (
    Consensus,
    ReviewVerdict,
    Scores,
    Subtask,
    SubtaskDone,
    assemble,
    impl_complete,
    subtask,
    subtask_done,
)
from tunaflow_tui.core.markers.sections import LINE_CACHE, heading_candidates, shared_memo, split_heading

ref_sections = REFERENCE.sections
ref_proposal = REFERENCE.proposal
ref_quotes = REFERENCE.quotes

PIECES = [
    "#", "## ", "**", "__", "`", "-", "_", " ", "\t", "\u3000", "\u00a0", "\x1c", ":", "：", "Title", "TITLE",
    "title", "Subtasks", "sub_tasks", "sub-tasks", "Non-Goals", "non", "goals", "설명", "제약 사항", "Deskripsi",
    "verdict", "Findings", "ẞ", "İ", "ﬂ", "ﬆ", "con", "raints", "ſ", "K", "x", "1.", "text after", "consensus",
    "Dissent", "반대 의견", "Task 3", "Step", "— write", "plan", "task list", "a" * 41,
]  # fmt: skip
pieced_lines = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)
BODY_LINES = [
    "**Title**: Cache", "## Subtasks", "1. **Add a cache** — keep", "   details under", "### Task 1 — tests",
    "Description: more", "| # | Task |", "**Constraints**", "- no new dependency", "Expected outcome: x",
    "## Verdict", "**Overall verdict**: does not pass", "> verdict: PASS", "- code_quality: 4/5",
    "failed_subtask_ids: [2]", "## Findings", "**Consensus**: yes", "반대 의견:", "- 없음", "", "\t## Step 2",
]  # fmt: skip
any_line = st.one_of(pieced_lines, st.sampled_from(BODY_LINES), st.text(max_size=30).map(lambda t: t.replace("\n", " ")))
ALLOWED = [None, frozenset({"title", "subtasks"}), frozenset({"dissent"}), frozenset({"findings", "verdict"})]


@settings(max_examples=600, deadline=None)
@given(st.lists(any_line, max_size=12))
def test_every_line_that_heads_a_section_or_a_task_is_a_candidate(lines: list[str]) -> None:
    candidates = set(heading_candidates(lines))
    hashes = set(heading_candidates(lines, hashes_only=True))
    for index, line in enumerate(lines):
        heads = ref_sections.split_heading.__wrapped__(line, None) is not None
        task = ref_proposal._task_heading.__wrapped__(line) is not None
        if heads or task:
            assert index in candidates, line
        if task:
            assert index in hashes, line
        assert (index in hashes) == line.strip().startswith("#")


def test_plain_prose_and_list_items_are_not_candidates() -> None:
    lines = ["plain text", "1. **Add a cache** — keep `tokens`", "   details under the item 3", "| 1 | a |",
             "- no new dependency", "", "Title: x", "### Task 2", "  ## Findings", "설명"]  # fmt: skip
    assert heading_candidates(lines) == [6, 7, 8, 9]


@settings(max_examples=600, deadline=None)
@given(any_line, st.sampled_from(ALLOWED))
def test_split_heading_reads_as_the_reference_reads(line: str, allowed: frozenset[str] | None) -> None:
    assert split_heading.__wrapped__(line, allowed) == ref_sections.split_heading.__wrapped__(line, allowed)


backtick_lines = st.lists(st.sampled_from(["`", "``", "```", "````", "a", " ", "<!-- x -->", "\\`"]), max_size=40)


@settings(max_examples=400, deadline=None)
@given(backtick_lines.map("".join), st.text(alphabet="`a", max_size=4))
def test_code_spans_are_found_as_the_reference_finds_them(line: str, before: str) -> None:
    text = before + "\n" + line + "\nrest"
    start, end = len(before) + 1, len(before) + 1 + len(line)
    ours: list[tuple[int, int]] = []
    theirs: list[tuple[int, int]] = []
    quotes.inline_spans(text, start, end, ours)
    ref_quotes._inline_spans(text, start, end, theirs)
    assert ours == theirs


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=14), min_size=2, max_size=60), st.sampled_from(["x", " a ", "\\"]))
def test_code_spans_on_lines_with_many_run_lengths_are_found_as_the_reference_finds_them(
    runs: list[int], gap: str
) -> None:
    line = gap.join("`" * run for run in runs)  # up to 14 lengths: both ways of pairing the runs
    ours: list[tuple[int, int]] = []
    theirs: list[tuple[int, int]] = []
    quotes.inline_spans(line, 0, len(line), ours)
    ref_quotes._inline_spans(line, 0, len(line), theirs)
    assert ours == theirs


@given(st.text(alphabet=" \t", max_size=12), st.sampled_from(["", "x", "- item"]))
def test_indent_width_counts_tab_stops_as_the_reference_does(lead: str, rest: str) -> None:
    assert quotes._indent_width(lead + rest) == ref_quotes._indent_width(lead + rest)


@st.composite
def texts_and_spans(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, str]]]:
    """A text of blanks, line ends and words, and sorted spans in it (touching, overlapping or empty)."""
    text = draw(st.lists(st.sampled_from(["a", " ", "\t", "\n", "\r", "<!--c-->"]), max_size=30).map("".join))
    spans = []
    for _ in range(draw(st.integers(0, 5))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 8)))
        spans.append((start, end, draw(st.sampled_from(["", "", "R", "&lt;"]))))
    return text, sorted(spans)


@settings(max_examples=500, deadline=None)
@given(texts_and_spans())
def test_spans_are_removed_as_the_reference_removes_them(case: tuple[str, list[tuple[int, int, str]]]) -> None:
    text, spans = case
    assert scanner.remove_spans(text, spans) == REFERENCE.scanner.remove_spans(text, spans)


QUOTE_PIECES = [" ", "  ", "   ", "    ", "\t", " \t", "\u3000", "\x1c", "> ", ">", "- ", "-", "* ", "+", "• ", "•",
                "1. ", "12) ", "1234567890. ", "123456789.", "x", "text", "<!-- tunaflow:impl-complete -->", "\r"]  # fmt: skip
quote_lines = st.lists(st.sampled_from(QUOTE_PIECES), max_size=4).map("".join)


@settings(max_examples=500, deadline=None)
@given(st.lists(quote_lines, max_size=12))
def test_quoted_and_indented_code_lines_are_told_apart_as_the_reference_tells_them(lines: list[str]) -> None:
    text = "\n".join(lines)
    ours, theirs = quotes.QuotedLines(text), ref_quotes.QuotedLines(text)
    start = 0
    for line in lines:
        end = start + len(line)
        assert ours.line_quoted(start, end) == theirs.line_quoted(start, end), (text, line)
        assert quotes._starts_list_item(line) == ref_quotes._starts_list_item(line), line
        start = end + 1


def test_markers_made_quickly_equal_markers_made_by_their_constructor() -> None:
    made = [
        (assemble(SubtaskDone, {"accepted": True, "raw": "r", "span": (1, 2), "index": 3}),
         SubtaskDone(index=3, accepted=True, raw="r", span=(1, 2))),
        (subtask_done(3, False, "r", (4, 5)), SubtaskDone(index=3, accepted=False, raw="r", span=(4, 5))),
        (impl_complete(True, "r", (4, 5)), ImplComplete(raw="r", span=(4, 5))),
        (subtask(2, "t", "d"), Subtask(2, "t", "d")),
        (assemble(ImplComplete, {"accepted": False, "raw": "r", "span": (0, 1)}),
         ImplComplete(accepted=False, raw="r", span=(0, 1))),
        (assemble(ReviewVerdict, {"accepted": True, "raw": "", "span": (0, 0), "verdict": "fail",
                                  "scores": Scores([("convention", 2)]), "failed_subtasks": (2,), "findings": ("f",),
                                  "recommendations": (), "closed": False}),
         ReviewVerdict(verdict="fail", scores=Scores([("convention", 2)]), failed_subtasks=(2,), findings=("f",),
                       closed=False)),
        (assemble(Consensus, {"accepted": True, "raw": "", "span": (0, 0), "consensus": ("a",), "contested": (),
                              "dissent": ("d",), "closed": True}),
         Consensus(consensus=("a",), dissent=("d",))),
    ]  # fmt: skip
    for quick, built in made:
        assert quick == built and hash(quick) == hash(built) and repr(quick) == repr(built)
        assert list(vars(quick)) == [f.name for f in dataclasses.fields(built)]
        assert quick.span == built.span if isinstance(built, SubtaskDone | ImplComplete) else True


def test_every_marker_parsed_holds_every_field_in_order() -> None:
    text = ("<!-- tunaflow:review-verdict -->\nverdict: fail\n<!-- /tunaflow:review-verdict -->\n"
            "<!-- tunaflow:consensus -->\n- a\n<!-- /tunaflow:consensus -->\n"
            "<!-- tunaflow:subtask-done:2 -->\n<!-- tunaflow:impl-complete -->\n")  # fmt: skip
    markers = parse_markers(text).markers
    assert len(markers) == 4
    for marker in markers:
        assert list(vars(marker)) == [f.name for f in dataclasses.fields(marker)]


def test_the_memo_parses_share_stays_bounded() -> None:
    reply = "<!-- tunaflow:consensus -->\n" + "".join(f"- point {n}\n" for n in range(5 * LINE_CACHE))
    assert len(parse_markers(reply).markers[0].consensus) == 5 * LINE_CACHE  # type: ignore[attr-defined]
    parse_markers("<!-- tunaflow:consensus -->\n- one\n")
    assert shared_memo().size() < LINE_CACHE


def test_readers_called_alone_read_as_inside_a_parse() -> None:
    body = "\n# Plan\n## Subtasks\n### Task 1 — a\ntext\n### Task 2 — b\n**Constraints**\n- none\n"
    alone = proposal.read_proposal(body, accepted=True, raw="", span=(0, 0), closed=True)
    parsed = parse_markers("<!-- tunaflow:plan-proposal -->" + body + "<!-- /tunaflow:plan-proposal -->").markers[0]
    assert [s.title for s in alone.subtasks] == ["a", "b"] and alone.constraints == ("none",)
    assert dataclasses.replace(parsed, raw="", span=(0, 0)) == alone
    assert sections.items_of(sections.Section("findings", "", ["- a", "  b", "- c"])) == ("a b", "c")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["|", "\\|", "\\", " ", "a", "1", "**b**", "---", ":", "\t"]), max_size=20).map("".join))
def test_table_cells_are_cut_as_the_reference_cuts_them(row: str) -> None:
    assert sections.table_cells(row) == ref_sections.table_cells(row)
