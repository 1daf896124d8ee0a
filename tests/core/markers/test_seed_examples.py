"""The examples of the original articles parse the way the articles describe them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tunaflow_tui.core.markers import PlanProposal, ReviewVerdict, parse_markers

SEEDS = Path("/work/shared/seeds")
pytestmark = pytest.mark.skipif(not SEEDS.is_dir(), reason="source articles not available")


def _seed(prefix: str) -> str:
    return next(SEEDS.glob(f"{prefix}_*.txt")).read_text(encoding="utf-8")


def _between(text: str, start: str, end: str) -> str:
    i = text.index(start)
    return text[i : text.index(end, i) + len(end)]


def test_korean_original_proposal_example() -> None:
    block = _between(_seed("002"), "<!-- tunaflow:plan-proposal -->\n", "<!-- /tunaflow:plan-proposal -->")
    result = parse_markers("제안합니다.\n" + block + "\n승인해 주세요.", role="architect")
    (proposal,) = result.markers
    assert isinstance(proposal, PlanProposal) and proposal.accepted and proposal.closed
    assert proposal.title == "인증 미들웨어 OAuth2 전환"
    assert [s.title for s in proposal.subtasks] == [
        "JWT 검증 로직을 OAuth2 PKCE로 교체",
        "Route guard 어댑터 수정",
        "테스트 업데이트",
    ]
    assert [s.index for s in proposal.subtasks] == [1, 2, 3]
    assert proposal.description.startswith("현재 JWT 기반 인증을 OAuth2 PKCE로")
    assert result.display_text == "제안합니다.\n승인해 주세요."


def test_korean_original_verdict_example() -> None:
    block = _between(_seed("002"), "<!-- tunaflow:review-verdict -->\nverdict", "<!-- /tunaflow:review-verdict -->")
    (verdict,) = parse_markers(block, role="reviewer").markers
    assert isinstance(verdict, ReviewVerdict)
    assert verdict.verdict == "pass"
    assert verdict.findings == ("구현이 Plan과 일치합니다", "테스트 커버리지 양호")
    assert verdict.recommendations == ("ws_handler.rs에서 인증 호출 방식 확인 필요",)


@pytest.mark.parametrize(
    ("prefix", "heading", "title", "first_subtask"),
    [
        ("001", "## Authentication", "Authentication Middleware OAuth2 Migration",
         "Replace JWT validation logic with OAuth2 PKCE"),
        ("000", "## Transisi", "Transisi Middleware Autentikasi ke OAuth2", "Ganti logika validasi JWT dengan OAuth2 PKCE"),
    ],
)  # fmt: skip
def test_translated_proposal_examples_with_markdown_sections(
    prefix: str, heading: str, title: str, first_subtask: str
) -> None:
    body = _between(_seed(prefix), heading, "PKCE...")
    message = f"<!-- tunaflow:plan-proposal -->\n{body}\n<!-- /tunaflow:plan-proposal -->"
    (proposal,) = parse_markers(message).markers
    assert isinstance(proposal, PlanProposal)
    assert proposal.title == title
    assert len(proposal.subtasks) == 3 and proposal.subtasks[0].title == first_subtask
    assert proposal.description.endswith("OAuth2 PKCE...")


def test_translated_verdict_example() -> None:
    body = _between(_seed("001"), "verdict: pass", "ws_handler.rs")
    (verdict,) = parse_markers(f"<!--tunaflow:review-verdict-->\n{body}\n<!--/tunaflow:review-verdict-->").markers
    assert isinstance(verdict, ReviewVerdict)
    assert verdict.verdict == "pass"
    assert verdict.findings == ("Implementation matches Plan", "Good test coverage")
    assert verdict.recommendations == ("Check authentication call method in ws_handler.rs",)


def test_developer_prompt_placeholder_is_not_a_marker() -> None:
    result = parse_markers("각 완료 시 <!-- tunaflow:subtask-done:N -->", role="developer")
    assert result.markers == ()
