"""Property tests: the parser is total on random and adversarial text."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tunaflow_tui.core.markers import ImplComplete, MarkerStream, parse_markers, scrub_markers
from tunaflow_tui.core.markers.quotes import find_fences
from tunaflow_tui.core.markers.scanner import iter_tunaflow_comments

FRAGMENTS = [
    "<!-- tunaflow:plan-proposal -->", "<!-- /tunaflow:plan-proposal -->", "<!--tunaflow:review-verdict-->",
    "<!-- /tunaflow:review-verdict -->", "<!-- tunaflow:consensus -->", "<!-- /tunaflow:consensus -->",
    "<!-- tunaflow:subtask-done:", "<!-- tunaflow:impl-complete -->", "<!--", "-->", "tunaflow", ":", "/",
    "```", "```markdown\n", "~~~", "`", "``", "\n", "\r\n", " ", "1. ", "- ", "| 1 | a |", "|---|",
    "### Task 1 — ", "subtasks\n", "서브태스크\n", "verdict: PASS\n", "plan_coverage: 4/5\n",
    "failed_subtask_ids: [2, 3]\n", "findings:\n", "반대 의견:\n", "**", "#", "0", "7", "42", "제목: ", "ß",
]  # fmt: skip
ROLES = st.sampled_from([None, "architect", "developer", "reviewer", "verifier", "synthesizer", "user", "x"])
adversarial = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=60).map("".join)
texts = st.one_of(st.text(), adversarial)


@settings(max_examples=300, deadline=None)
@given(texts, ROLES)
def test_parser_never_raises_and_json_is_serialisable(text: str, role: str | None) -> None:
    import json

    result = parse_markers(text, role)
    json.dumps(result.to_json(), ensure_ascii=False)
    for marker in result.markers:
        assert marker.raw and marker.raw in text


@settings(max_examples=300, deadline=None)
@given(texts)
def test_accepted_markers_leave_no_trace_in_display_text(text: str) -> None:
    result = parse_markers(text)
    removed, covered = 0, 0  # single markers inside an accepted block are removed with the block
    for marker in result.markers:
        start, end = marker.span
        if marker.accepted and start >= covered:
            removed += marker.raw.count("tunaflow:")
            covered = end
    assert result.display_text.count("tunaflow:") <= text.count("tunaflow:") - removed


@settings(max_examples=200, deadline=None)
@given(texts)
def test_scrub_leaves_no_marker(text: str) -> None:
    scrubbed = scrub_markers(text)
    assert list(iter_tunaflow_comments(scrubbed)) == []
    assert parse_markers(scrubbed).markers == ()


@settings(max_examples=150, deadline=None)
@given(adversarial, st.lists(st.integers(min_value=0, max_value=400), max_size=6))
def test_stream_output_does_not_depend_on_chunking(text: str, cuts: list[int]) -> None:
    def run(chunks: list[str]) -> str:
        stream = MarkerStream()
        return "".join(stream.feed(c) for c in chunks) + stream.finish()

    points = sorted({min(c, len(text)) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    assert run(chunks) == run([text])


@settings(max_examples=300, deadline=None)
@given(texts)
def test_a_single_marker_on_its_own_line_is_never_swallowed_by_an_earlier_block(text: str) -> None:
    assume(text.rfind("<!--") == -1 or text.rfind("<!--") + 4 <= text.rfind("-->"))
    full = text + "\n<!-- tunaflow:impl-complete -->\n"
    pos = len(text) + 1
    assume(not any(f.start <= pos < f.end for f in find_fences(full)))
    last = parse_markers(full, "developer").markers[-1]
    assert isinstance(last, ImplComplete) and last.accepted and last.span[0] == pos
