"""The parser's fast paths decide exactly as the full reading would, on the lines that reach their edges."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunaflow_tui.core.markers import parse_markers, proposal, scanner, sections, verdict
from tunaflow_tui.core.markers.scanner import (
    BODY_STARTS,
    MarkerComment,
    classify,
    find_marker_comments,
    iter_tunaflow_comments,
)
from tunaflow_tui.core.markers.sections import SECTION_ALIASES, split_heading


class _Everything:
    def __contains__(self, item: object) -> bool:
        return True


HEADING_PIECES = [
    "#", "## ", "**", "__", "`", "-", "_", " ", "\t", "\u3000", "\u00a0", ":", "：", "Title", "TITLE",
    "title", "Subtasks", "sub_tasks", "sub-tasks", "Non-Goals", "설명", "제약 사항", "Deskripsi", "verdict",
    "Findings", "ẞ", "İ", "ﬂ", "x", "1.", "text after", "consensus", "Dissent", "반대 의견",
]  # fmt: skip
heading_lines = st.lists(st.sampled_from(HEADING_PIECES), max_size=8).map("".join)


def _reference_split_heading(line: str, allowed: frozenset[str] | None) -> tuple[str, str] | None:
    """split_heading with its first-character test switched off (and its cache of lines passed by)."""
    saved = sections._NAME_STARTS
    sections._NAME_STARTS = _Everything()  # type: ignore[assignment]
    try:
        return split_heading.__wrapped__(line, allowed)
    finally:
        sections._NAME_STARTS = saved


@settings(max_examples=400, deadline=None)
@given(heading_lines, st.sampled_from([None, frozenset({"title", "subtasks"}), frozenset({"dissent"})]))
def test_split_heading_rejects_early_only_lines_it_would_reject_anyway(line: str, allowed) -> None:
    assert split_heading(line, allowed) == _reference_split_heading(line, allowed)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("\u3000**Title**: Cache the lookups", ("title", "Cache the lookups")),  # an ideographic space first
        ("\u00a0## Subtasks", ("subtasks", "")),
        ("## `Description`", None),  # a code span is no section name
        ("**_Expected outcome_**:", ("expected_outcome", "")),
        ("TITLE: Big", ("title", "Big")),
        ("## Übersicht", None),
        ("- title: not a heading", None),
        ("non\x1cgoals: x", ("non_goals", "x")),  # \x1c-\x1f split words (str.split), though ASCII patterns miss them
        ("## Expected\x1foutcome", ("expected_outcome", "")),
        ("a plain sentence of prose", None),
    ],
)
def test_headings_behind_decoration_and_blanks_are_still_found(line: str, expected) -> None:
    assert split_heading(line) == expected


VERDICT_PIECES = [
    "verdict", "Verdict", "VERDICT", "Overall verdict", "판정", "결과", "putusan", "Vonis", "keputusan", "**",
    "> ", "- ", "| ", " | ", "#", ":", " - ", "=", "—", "PASS", "fail", "not", "통과", "x", " ", "`", "é",
]  # fmt: skip
verdict_lines = st.lists(st.sampled_from(VERDICT_PIECES), max_size=8).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(verdict_lines, max_size=6).map("\n".join))
def test_verdict_lines_without_a_label_word_are_passed_over_as_before(body: str) -> None:
    fast = verdict.read_verdict(body, accepted=True, raw=body, span=(0, len(body)), closed=True)
    saved = verdict._LABEL_IN_LINE
    verdict._LABEL_IN_LINE = re.compile("")  # every line goes through the full reading
    verdict._verdict_line.cache_clear()  # (not the lines read before)
    try:
        full = verdict.read_verdict(body, accepted=True, raw=body, span=(0, len(body)), closed=True)
    finally:
        verdict._LABEL_IN_LINE = saved
        verdict._verdict_line.cache_clear()
    assert fast == full


def _reference_scan(text: str) -> list[tuple[int, int, str]]:
    """Every comment the plain comment pattern finds, compacted and checked one by one."""
    found = []
    match = scanner._COMMENT.search(text)
    while match is not None:
        compact = "".join(match.group(1).split()).casefold()
        if compact.startswith(("tunaflow:", "/tunaflow:")):
            found.append((match.start(), match.end(), compact))
            match = scanner._COMMENT.search(text, match.end())
        else:
            match = scanner._COMMENT.search(text, match.start() + 1)
    return found


def _reference_comments(text: str) -> list[MarkerComment]:
    found = []
    for start, end, compact in _reference_scan(text):
        shape = classify(compact)
        if shape is not None:
            found.append(MarkerComment(start, end, *shape))
    return found


COMMENT_PIECES = [
    "<!--", "-->", "<!-- tunaflow:impl-complete -->", "<!--TUNAFLOW : Subtask_Done : #3-->", "tunaflow",
    ":", "/", " ", "\u2003", "T", "ẗ", "x", "<!-- /tunaflow:consensus -->", "<!--x-->", "<!---->",
    "subtask-done:", "7", "0", "plan-proposal", "<!-- t u n a f l o w : impl-complete -->",
    ">", "->", "--", "<!-- tunaflow:consensus > -->", "<!--tunaflow:impl-complete--->",
]  # fmt: skip
comment_texts = st.lists(st.one_of(st.sampled_from(COMMENT_PIECES), st.text(max_size=4)), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(comment_texts)
def test_find_marker_comments_finds_what_the_comment_scanner_and_classify_find(text: str) -> None:
    assert list(iter_tunaflow_comments(text)) == _reference_scan(text)
    assert find_marker_comments(text) == _reference_comments(text)


def test_body_starts_are_every_character_that_folds_to_t_or_slash() -> None:
    every = frozenset(c for c in map(chr, range(0x110000)) if c.casefold()[:1] in ("t", "/"))
    assert every == BODY_STARTS


def test_spaced_and_cased_markers_still_count() -> None:
    text = (
        "<!--  TunaFlow : subtask-done : 3 -->\n<!-- t u n a f l o w : impl-complete -->\n"
        "<!--\u2003\u3000tunaflow:subtask-done:4-->\n<!--\n\tTUNAFLOW:impl-complete-->\n"
    )
    kinds = [(m.__class__.__name__, getattr(m, "index", None)) for m in parse_markers(text).markers]
    assert kinds == [("SubtaskDone", 3), ("ImplComplete", None), ("SubtaskDone", 4), ("ImplComplete", None)]


def test_every_section_alias_starts_with_a_listed_character() -> None:
    assert all(alias[0] in sections._NAME_STARTS for alias in SECTION_ALIASES)


LINE_READERS = [sections.split_heading, sections.list_item, verdict._verdict_line, verdict._key_value,
                proposal._task_heading, proposal._heading_level]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(heading_lines, verdict_lines), max_size=12))
def test_remembered_lines_read_as_a_first_reading_does(lines: list[str]) -> None:
    for line in lines + lines:  # the second time round every line comes from the cache
        for reader in LINE_READERS:
            assert reader(line) == reader.__wrapped__(line)
    for line in lines:
        for allowed in (None, frozenset({"title"}), verdict.VERDICT_SECTIONS):
            assert split_heading(line, allowed) == split_heading.__wrapped__(line, allowed)


def test_the_garbage_collector_runs_again_after_a_parse_and_stays_off_if_it_was() -> None:
    import gc

    text = "<!-- tunaflow:review-verdict -->\nverdict: pass\n<!-- tunaflow:impl-complete -->\n"
    assert gc.isenabled()
    assert parse_markers(text).markers
    assert gc.isenabled()
    gc.disable()
    try:
        parse_markers(text)
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(TypeError):
        parse_markers(None)  # type: ignore[arg-type]
    assert gc.isenabled()  # even when the parse fails
