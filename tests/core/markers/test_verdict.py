"""Review verdicts and roundtable consensus blocks."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.markers import Consensus, ReviewVerdict, parse_markers

OPEN, CLOSE = "<!-- tunaflow:review-verdict -->", "<!-- /tunaflow:review-verdict -->"


def _verdict(body: str) -> ReviewVerdict:
    (verdict,) = parse_markers(f"{OPEN}\n{body}\n{CLOSE}", role="reviewer").markers
    assert isinstance(verdict, ReviewVerdict) and verdict.accepted
    return verdict


@pytest.mark.parametrize(
    ("line", "expected"),
    [("verdict: pass", "pass"), ("Verdict: PASS", "pass"), ("**Verdict**: fail", "fail"),
     ("**Verdict:** Conditional", "conditional"), ("## Verdict\n\nFAIL", "fail"), ("판정: 통과", "pass"),
     ("Putusan: gagal", "fail"), ("verdict: ✅ pass", "pass")],
)  # fmt: skip
def test_verdict_line_forms(line: str, expected: str) -> None:
    assert _verdict(f"{line}\nfindings:\n- ok").verdict == expected


def test_block_without_verdict_line_is_conditional() -> None:
    assert _verdict("findings:\n- looks fine").verdict == "conditional"


def test_scores_in_every_accepted_form_and_out_of_range_ignored() -> None:
    body = ("verdict: pass\nplan_coverage: 4\n- code_quality: 4/5\n| test coverage | 3 |\n"
            "**Convention**: 5 (clean)\ndoc_quality: 9\n")  # fmt: skip
    verdict = _verdict(body)
    assert verdict.scores == {"plan_coverage": 4, "code_quality": 4, "test_coverage": 3, "convention": 5}
    assert verdict.to_json()["scores"] == {"plan_coverage": 4, "code_quality": 4, "test_coverage": 3, "convention": 5}


def test_scores_table_with_header() -> None:
    verdict = _verdict("verdict: fail\n| metric | score |\n|---|---|\n| plan_coverage | 2/5 |\n| doc_quality | 1 |")
    assert dict(verdict.scores) == {"plan_coverage": 2, "doc_quality": 1}


def test_a_finding_that_mentions_a_score_name_stays_a_finding() -> None:
    verdict = _verdict("verdict: fail\nfindings:\n- Test coverage: no tests for the parser\n- Code quality: 3 TODOs left")
    assert verdict.scores == {}
    assert verdict.findings == ("Test coverage: no tests for the parser", "Code quality: 3 TODOs left")


@pytest.mark.parametrize("line", ["failed_subtasks: [2, 3]", "failed_subtask_ids: [2,3]", "Failed subtasks: 2, 3",
                                  "- **failed_subtasks**: [2, 3]"])  # fmt: skip
def test_failed_subtasks(line: str) -> None:
    assert _verdict(f"verdict: fail\n{line}").failed_subtasks == (2, 3)


def test_findings_and_recommendations_lists_in_korean_and_indonesian() -> None:
    verdict = _verdict("verdict: fail\n## 발견 사항\n- 테스트 누락\n  세부 설명\n- 오타\nRekomendasi:\n* tambah tes\n")
    assert verdict.findings == ("테스트 누락 세부 설명", "오타")
    assert verdict.recommendations == ("tambah tes",)


def test_unclosed_verdict_runs_to_end() -> None:
    (verdict,) = parse_markers(f"{OPEN}\nverdict: pass\nfindings:\n- fine").markers
    assert isinstance(verdict, ReviewVerdict)
    assert not verdict.closed and verdict.verdict == "pass" and verdict.findings == ("fine",)


def test_consensus_sections() -> None:
    message = ("Summary of the round.\n<!-- tunaflow:consensus -->\n## Consensus\n- use SQLite\n- keep WAL\n"
               "## 쟁점\n- FTS tokenizer\nPerbedaan pendapat:\n- Gemini prefers DuckDB\n<!-- /tunaflow:consensus -->")  # fmt: skip
    result = parse_markers(message, role="synthesizer")
    (consensus,) = result.markers
    assert isinstance(consensus, Consensus) and consensus.accepted and consensus.closed
    assert consensus.consensus == ("use SQLite", "keep WAL")
    assert consensus.contested == ("FTS tokenizer",)
    assert consensus.dissent == ("Gemini prefers DuckDB",)
    assert result.display_text == "Summary of the round.\n"
    assert consensus.to_json()["kind"] == "consensus"
