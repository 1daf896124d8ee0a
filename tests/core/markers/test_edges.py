"""Forms agents really write that must not be misread: negated verdicts, verdict lines in lists,
quotes and tables, single markers after an unclosed block, `Name:` lines inside subtasks, markers
mentioned in prose, and markers in indented code or block quotes."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.markers import ImplComplete, PlanProposal, ReviewVerdict, SubtaskDone, parse_markers

P_OPEN, P_CLOSE = "<!-- tunaflow:plan-proposal -->", "<!-- /tunaflow:plan-proposal -->"
V_OPEN, V_CLOSE = "<!-- tunaflow:review-verdict -->", "<!-- /tunaflow:review-verdict -->"


def _verdict(body: str) -> ReviewVerdict:
    (verdict,) = parse_markers(f"{V_OPEN}\n{body}\n{V_CLOSE}", role="reviewer").markers
    assert isinstance(verdict, ReviewVerdict) and verdict.accepted
    return verdict


def _proposal(body: str) -> PlanProposal:
    (proposal,) = parse_markers(f"{P_OPEN}\n{body}\n{P_CLOSE}", role="architect").markers
    assert isinstance(proposal, PlanProposal) and proposal.accepted
    return proposal


# -- negated verdicts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [("Verdict: not approved", "fail"), ("Verdict: does not pass", "fail"), ("Verdict: NOT PASS", "fail"),
     ("verdict: doesn't pass", "fail"), ("verdict: never approved", "fail"), ("Putusan: tidak lulus", "fail"),
     ("Putusan: bukan lulus", "fail"), ("판정: 통과 아님", "fail"), ("판정: 미통과", "fail"), ("판정: 불통과", "fail"),
     ("판정: 미승인", "fail"), ("verdict: not failed", "conditional"), ("verdict: not conditional", "conditional"),
     ("verdict: no", "conditional"), ("verdict: pass/fail", "conditional"),
     ("verdict: pass | fail | conditional", "conditional"), ("verdict: pass or fail", "conditional"),
     ("Verdict: fail — tests pass but docs missing", "fail"), ("Verdict: PASS, no blockers", "pass"),
     ("Verdict: is approved", "pass")],
)  # fmt: skip
def test_a_negated_verdict_never_reads_as_pass(line: str, expected: str) -> None:
    assert _verdict(f"{line}\nfindings:\n- x").verdict == expected


def test_the_verdict_is_the_first_word_after_the_label() -> None:
    assert _verdict("Verdict: tests pass but coverage dropped").verdict == "conditional"


# -- verdict line forms ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [("- verdict: fail\n- findings: x", "fail"), ("* **Verdict**: PASS", "pass"), ("Overall verdict: FAIL", "fail"),
     ("**Final verdict:** pass", "pass"), ("> Verdict: FAIL", "fail"), ("> > **Verdict:** pass", "pass"),
     ("Verdict — FAIL", "fail"), ("Verdict - pass", "pass"), ("Verdict – conditional", "conditional"),
     ("| Verdict | FAIL |\n|---|---|", "fail"), ("| Item | Value |\n|---|---|\n| verdict | pass |", "pass"),
     ("### Overall verdict\n\n**FAIL**", "fail"), ("판정 — 통과", "pass")],
)  # fmt: skip
def test_common_verdict_line_forms(body: str, expected: str) -> None:
    assert _verdict(body).verdict == expected


def test_a_verdict_line_inside_findings_is_still_a_finding_not_the_verdict() -> None:
    verdict = _verdict("Verdict: fail\nFindings:\n- Verdict: pass was claimed by the old report")
    assert verdict.verdict == "fail"
    assert verdict.findings == ("Verdict: pass was claimed by the old report",)


# -- single markers after or inside a block --------------------------------------------------------


def test_single_markers_after_an_unclosed_opener_in_prose_are_found() -> None:
    text = ("I left the old <!-- tunaflow:review-verdict --> comment in README.\nDone.\n"
            "<!-- tunaflow:subtask-done:1 -->\n<!-- tunaflow:impl-complete -->\n")  # fmt: skip
    result = parse_markers(text, "developer")
    assert [(m.kind, m.accepted) for m in result.markers] == [
        ("review-verdict", False), ("subtask-done", True), ("impl-complete", True)]  # fmt: skip
    assert "tunaflow:subtask-done" not in result.display_text
    assert "tunaflow:impl-complete" not in result.display_text
    assert "`` <!-- tunaflow:review-verdict --> ``" in result.display_text


def test_single_markers_inside_a_closed_block_are_found_in_order() -> None:
    text = f"{P_OPEN}\nPlan\n1. a\n<!-- tunaflow:subtask-done:2 -->\n{P_CLOSE}\n<!-- tunaflow:impl-complete -->"
    result = parse_markers(text, "developer")
    assert [m.kind for m in result.markers] == ["plan-proposal", "subtask-done", "impl-complete"]
    done = result.markers[1]
    assert isinstance(done, SubtaskDone) and done.index == 2 and done.accepted
    assert isinstance(result.markers[2], ImplComplete) and result.markers[2].accepted
    assert "tunaflow:subtask-done" not in result.display_text


def test_a_single_marker_inside_an_accepted_block_is_hidden_with_the_block() -> None:
    text = f"{V_OPEN}\nverdict: pass\n<!-- tunaflow:impl-complete -->\n{V_CLOSE}\nafter"
    result = parse_markers(text, "reviewer")
    assert [(m.kind, m.accepted) for m in result.markers] == [("review-verdict", True), ("impl-complete", False)]
    assert result.display_text == "after"


# -- Name: lines inside subtasks -------------------------------------------------------------------


def test_description_line_under_task_headings_stays_in_the_task() -> None:
    proposal = _proposal("# Login\n## Subtasks\n### Task 1 — Add form\nDescription: implement form\n"
                         "### Task 2 — Tests\nwrite tests\n## Description\nWhole plan.")  # fmt: skip
    assert [(s.title, s.details) for s in proposal.subtasks] == [
        ("Add form", "Description: implement form"), ("Tests", "write tests")]  # fmt: skip
    assert proposal.description == "Whole plan."


def test_bold_description_under_task_headings_without_a_subtasks_section() -> None:
    proposal = _proposal("# Login\n### Task 1 — Add form\n**Description:** implement\n### Task 2 — Tests\n"
                         "**Constraints**\n- no new deps")  # fmt: skip
    assert [(s.title, s.details) for s in proposal.subtasks] == [
        ("Add form", "**Description:** implement"), ("Tests", "")]  # fmt: skip
    assert proposal.constraints == ("no new deps",)


def test_indented_title_line_inside_a_numbered_item_stays_in_its_details() -> None:
    proposal = _proposal("Title: Auth\nSubtasks:\n1. Do A\n   Title: should not matter\n2. Do B")
    assert proposal.title == "Auth"
    assert [(s.title, s.details) for s in proposal.subtasks] == [("Do A", "Title: should not matter"), ("Do B", "")]


def test_numbered_list_right_under_the_title_is_the_subtasks() -> None:
    proposal = _proposal("Title: X\n1. a\n2. b")
    assert [s.title for s in proposal.subtasks] == ["a", "b"]
    assert proposal.description == ""
    proposal = _proposal("# Cache\n- store\n- evict\n\nWhy: runs are slow.")
    assert [s.title for s in proposal.subtasks] == ["store", "evict"]
    assert proposal.description == "Why: runs are slow."


def test_a_list_after_prose_is_still_description() -> None:
    proposal = _proposal("Title: X\nWe will:\n1. a\n2. b")
    assert proposal.subtasks == ()
    assert proposal.description == "We will:\n1. a\n2. b"


def test_escaped_pipe_in_a_table_cell_is_not_a_column() -> None:
    proposal = _proposal("Title: Auth\n## Subtasks\n| # | Task |\n|---|---|\n| 1 | use a \\| b |\n| 2 | B |")
    assert [s.title for s in proposal.subtasks] == ["use a | b", "B"]


# -- markers mentioned in prose inside a block -----------------------------------------------------


def test_marker_mentioned_in_a_description_does_not_make_a_second_proposal() -> None:
    text = f"{P_OPEN}\nTitle: Real\nDescription: The architect emits {P_OPEN} blocks\nSubtasks:\n1. a\n{P_CLOSE}"
    result = parse_markers(text, "architect")
    (proposal,) = result.markers
    assert isinstance(proposal, PlanProposal) and proposal.closed
    assert proposal.title == "Real" and [s.title for s in proposal.subtasks] == ["a"]
    assert proposal.description.startswith("The architect emits")
    assert result.display_text == ""


def test_same_kind_opener_alone_on_its_line_inside_an_open_block_is_text() -> None:
    text = f"{P_OPEN}\nTitle: Real\nThe format is\n{P_OPEN}\nSubtasks:\n1. a\n{P_CLOSE}"
    (proposal,) = parse_markers(text, "architect").markers
    assert isinstance(proposal, PlanProposal) and proposal.title == "Real" and len(proposal.subtasks) == 1


def test_other_kind_opener_in_prose_inside_a_block_is_text() -> None:
    text = f"{P_OPEN}\nTitle: Real\nReviewers answer with a {V_OPEN} block.\n1. a\n{P_CLOSE}"
    result = parse_markers(text)
    assert [m.kind for m in result.markers] == ["plan-proposal"]


def test_other_kind_opener_alone_on_its_line_still_ends_an_unclosed_block() -> None:
    text = f"{P_OPEN}\nTitle: A\n{V_OPEN}\nverdict: pass\n{V_CLOSE}"
    result = parse_markers(text)
    assert [m.kind for m in result.markers] == ["plan-proposal", "review-verdict"]
    assert isinstance(result.markers[0], PlanProposal) and not result.markers[0].closed


# -- failed subtasks and scores --------------------------------------------------------------------


def test_failed_subtasks_as_a_list_on_the_following_lines() -> None:
    verdict = _verdict("verdict: fail\nfailed_subtasks:\n- 2\n- 3\nfindings:\n- broken")
    assert verdict.failed_subtasks == (2, 3)
    assert verdict.findings == ("broken",)
    assert _verdict("verdict: fail\nFailed subtasks:\n\n  - #4 (login form)\n  - Subtask 5\n").failed_subtasks == (4, 5)


def test_score_words_in_findings_stay_findings() -> None:
    verdict = _verdict("verdict: fail\nFindings:\n- Quality: 2 - error handling missing\n- Tests: 1. none\n"
                       "Recommendations:\n- Docs: 3 pages to fix\nplan_coverage: 4")  # fmt: skip
    assert verdict.findings == ("Quality: 2 - error handling missing", "Tests: 1. none")
    assert verdict.recommendations == ("Docs: 3 pages to fix",)
    assert verdict.scores == {"plan_coverage": 4}


def test_scores_outside_findings_are_read() -> None:
    verdict = _verdict("verdict: pass\n- code_quality: 4/5\nScores:\n- tests: 3\n| convention | 5 |")
    assert verdict.scores == {"code_quality": 4, "test_coverage": 3, "convention": 5}


# -- quotes: indented code and block quotes --------------------------------------------------------


def test_marker_in_an_indented_code_block_is_a_quote() -> None:
    text = "Format:\n\n    <!-- tunaflow:impl-complete -->\n\ndone"
    result = parse_markers(text, "developer")
    assert result.markers == () and result.display_text == text


def test_marker_in_a_block_quote_is_a_quote() -> None:
    text = "> <!-- tunaflow:impl-complete -->\n> said the old log\n"
    result = parse_markers(text, "developer")
    assert result.markers == () and result.display_text == text


@pytest.mark.parametrize(
    "text",
    ["1. Did the thing\n    <!-- tunaflow:subtask-done:1 -->", "- item\n\n    <!-- tunaflow:subtask-done:1 -->",
     "1. a\n   - b\n\n     <!-- tunaflow:subtask-done:1 -->", "Done\n    <!-- tunaflow:subtask-done:1 -->"],
)  # fmt: skip
def test_indented_marker_continuing_a_list_item_or_paragraph_counts(text: str) -> None:
    (done,) = parse_markers(text, "developer").markers
    assert isinstance(done, SubtaskDone) and done.accepted and done.index == 1
