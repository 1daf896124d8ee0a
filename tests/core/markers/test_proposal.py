"""Plan proposals: every lenient form an Architect may write is understood."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.markers import PlanProposal, parse_markers

OPEN, CLOSE = "<!-- tunaflow:plan-proposal -->", "<!-- /tunaflow:plan-proposal -->"


def _proposal(body: str, close: bool = True) -> PlanProposal:
    result = parse_markers(f"{OPEN}\n{body}\n{CLOSE if close else ''}", role="architect")
    (proposal,) = result.markers
    assert isinstance(proposal, PlanProposal) and proposal.accepted
    return proposal


def test_missing_closing_marker_runs_to_end_of_message() -> None:
    result = parse_markers(f"Here it is.\n{OPEN}\nAdd login\n## Subtasks\n1. Model\n2. Form", role="architect")
    (proposal,) = result.markers
    assert isinstance(proposal, PlanProposal)
    assert not proposal.closed
    assert [s.title for s in proposal.subtasks] == ["Model", "Form"]
    assert result.display_text == "Here it is.\n"


def test_proposal_without_subtasks_is_still_a_proposal() -> None:
    proposal = _proposal("Tidy the README\n\nDescription: fix typos and broken links")
    assert proposal.title == "Tidy the README"
    assert proposal.subtasks == ()
    assert proposal.description == "fix typos and broken links"


def test_numbered_list_with_details_under_each_item() -> None:
    proposal = _proposal("Title: Cache\n## Subtasks\n1. Add cache\n   keyed by path\n   - evict on write\n2) Bench it\n")
    assert proposal.title == "Cache"
    assert [(s.index, s.title) for s in proposal.subtasks] == [(1, "Add cache"), (2, "Bench it")]
    assert proposal.subtasks[0].details == "keyed by path\n- evict on write"


def test_bullets_and_bold_titles() -> None:
    proposal = _proposal("**Cache**\n**Subtasks:**\n- **Store** — keep results\n* Invalidate\n")
    assert proposal.title == "Cache"
    assert [(s.title, s.details) for s in proposal.subtasks] == [("Store", "keep results"), ("Invalidate", "")]


def test_markdown_table_of_subtasks() -> None:
    body = "# Cache\n## Subtasks\n| # | Task | Details |\n|---|:---|---|\n| 1 | Store | keep |\n| 2 | Evict | on write |"
    proposal = _proposal(body)
    assert [(s.index, s.title, s.details) for s in proposal.subtasks] == [(1, "Store", "keep"), (2, "Evict", "on write")]


def test_task_headings_with_text_under_each() -> None:
    body = "# Split the parser\n### Task 1 — Scanner\nFind comments.\n\n### Task 2: Sections\nRead headings.\n"
    proposal = _proposal(body)
    assert proposal.title == "Split the parser"
    assert [(s.title, s.details) for s in proposal.subtasks] == [("Scanner", "Find comments."), ("Sections", "Read headings.")]


@pytest.mark.parametrize(
    ("subtasks", "description", "outcome", "constraints", "non_goals"),
    [
        ("Subtasks", "Description", "Expected outcome", "Constraints", "Non-goals"),
        ("## 서브태스크", "## 설명", "## 기대 결과", "## 제약 조건", "## 비목표"),
        ("하위 작업:", "설명:", "기대 결과:", "제약:", "비목표:"),
        ("**Subtugas**", "**Deskripsi**:", "Hasil yang diharapkan", "BATASAN", "### Bukan tujuan:"),
        ("SUBTASKS:", "description", "EXPECTED_OUTCOME", "constraints:", "non_goals"),
    ],
)
def test_section_names_in_three_languages_any_case(
    subtasks: str, description: str, outcome: str, constraints: str, non_goals: str
) -> None:
    body = (f"Judul: Migrasi\n{subtasks}\n1. Satu\n2. Dua\n{description}\nPenjelasan.\n{outcome}\nSemua hijau.\n"
            f"{constraints}\n- tanpa dependensi baru\n{non_goals}\n- SSO\n")  # fmt: skip
    proposal = _proposal(body)
    assert proposal.title == "Migrasi"
    assert [s.title for s in proposal.subtasks] == ["Satu", "Dua"]
    assert proposal.description == "Penjelasan."
    assert proposal.expected_outcome == "Semua hijau."
    assert proposal.constraints == ("tanpa dependensi baru",)
    assert proposal.non_goals == ("SSO",)


@pytest.mark.parametrize("first", ["# Migrate auth", "**Migrate auth**", "Title: Migrate auth", "제목: Migrate auth",
                                   "## **Judul:** Migrate auth"])  # fmt: skip
def test_title_is_first_line_stripped_of_decoration(first: str) -> None:
    assert _proposal(f"\n\n{first}\nSubtasks\n- one").title == "Migrate auth"


def test_title_section_wins_over_first_line() -> None:
    proposal = _proposal("Some preface line\n## Title\nReal title\n## Subtasks\n- one")
    assert proposal.title == "Real title"
    assert proposal.description == "Some preface line"


def test_crlf_line_endings() -> None:
    message = f"{OPEN}\r\nAdd login\r\nsubtasks\r\n1. Model\r\n2. Form\r\ndescription\r\nWhy.\r\n{CLOSE}\r\nok\r\n"
    result = parse_markers(message, role="architect")
    (proposal,) = result.markers
    assert isinstance(proposal, PlanProposal)
    assert proposal.title == "Add login"
    assert [s.title for s in proposal.subtasks] == ["Model", "Form"]
    assert proposal.description == "Why."
    assert result.display_text == "ok\r\n"


def test_oddly_spaced_and_upper_case_markers() -> None:
    message = "<!--TUNAFLOW:Plan-Proposal-->\nX\n- a\n<!--  / tunaflow : plan-proposal  -->\nafter"
    result = parse_markers(message, role="architect")
    assert len(result.markers) == 1 and result.markers[0].accepted
    assert result.display_text == "after"


def test_raw_is_the_original_block_and_json_shape() -> None:
    message = f"intro\n{OPEN}\nX\nsubtasks\n- a\n{CLOSE}"
    (proposal,) = parse_markers(message).markers
    assert proposal.raw == message[len("intro\n") :]
    assert proposal.to_json() == {
        "kind": "plan-proposal", "accepted": True, "closed": True, "title": "X",
        "subtasks": [{"index": 1, "title": "a", "details": ""}], "description": "",
        "expected_outcome": None, "constraints": [], "non_goals": [],
    }  # fmt: skip


def test_second_opening_marker_of_the_same_kind_is_text_of_the_open_block() -> None:
    result = parse_markers(f"{OPEN}\nFirst\n{OPEN}\nSecond\n{CLOSE}")
    assert [(m.title, m.closed) for m in result.markers if isinstance(m, PlanProposal)] == [("First", True)]
