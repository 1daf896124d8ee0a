"""The proposal as editable Markdown: written with the marker protocol's section names, read back
exactly, and bad input refused with the line it is on."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunaflow_tui.core.proposal_editing import (
    EditedProposal,
    EditedSubtask,
    ProposalTextError,
    parse_edited_proposal,
    proposal_changes,
    proposal_to_editable_text,
)

PLAN = EditedProposal(
    title="Add OAuth login",
    subtasks=(
        EditedSubtask("Register the OAuth client", "Read the client id from `OAUTH_CLIENT_ID`.\n\n```\nexport X=1\n```"),
        EditedSubtask("Handle the callback", "- exchange the code\n  - store the token"),
        EditedSubtask("Test the flow"),
    ),
    description="Users sign in with their company account.\n\n## Background\nSessions stay as they are.",
    expected_outcome="A user can log in with Google.",
    constraints=("No new dependency", "Keep the session cookie\nname unchanged"),
    non_goals=("SAML",),
)


def test_the_text_uses_the_protocol_section_names_and_reads_back_unchanged() -> None:
    text = proposal_to_editable_text(PLAN)
    assert "# Add OAuth login\n" in text
    for heading in ("## Subtasks", "## Description", "## Expected outcome", "## Constraints", "## Non-goals"):
        assert f"\n{heading}\n" in text
    assert "1. Register the OAuth client\n   Read the client id" in text
    assert parse_edited_proposal(text) == PLAN


def test_moving_deleting_adding_and_rewording_lines_is_editing_the_subtasks() -> None:
    text = proposal_to_editable_text(PLAN)
    edited = (text.replace("1. Register the OAuth client", "9. Register the OAuth app")
              .replace("3. Test the flow", "3. Test the flow end to end\n- Document the setup"))
    edited = edited.replace("2. Handle the callback\n   - exchange the code\n     - store the token\n", "")
    result = parse_edited_proposal(edited)
    assert [s.title for s in result.subtasks] == ["Register the OAuth app", "Test the flow end to end",
                                                  "Document the setup"]
    assert result.subtasks[0].details == PLAN.subtasks[0].details
    changes = proposal_changes(PLAN, result)
    assert changes == (
        "subtask 1 reworded: “Register the OAuth client” → “Register the OAuth app”",
        "subtask removed: “Handle the callback”",
        "subtask 2 reworded: “Test the flow” → “Test the flow end to end”",
        "subtask 3 added: “Document the setup”",
    )


def test_reordering_is_named_as_such() -> None:
    reordered = EditedProposal(PLAN.title, (PLAN.subtasks[2], PLAN.subtasks[0], PLAN.subtasks[1]), PLAN.description,
                               PLAN.expected_outcome, PLAN.constraints, PLAN.non_goals)
    assert proposal_changes(PLAN, reordered) == ("subtasks reordered (new order of the old numbers: 3, 1, 2)",)
    assert proposal_changes(PLAN, PLAN) == ()


def test_section_names_are_matched_as_the_marker_parser_matches_them() -> None:
    text = textwrap.dedent("""\
        # 로그인 수정

        ## 서브태스크
        - 재현
        - 수정
          세부 사항

        ## 설명
        세션이 만료된다.

        ## Hasil yang diharapkan
        Login works.
        """)
    result = parse_edited_proposal(text)
    assert result.title == "로그인 수정"
    assert result.subtasks == (EditedSubtask("재현"), EditedSubtask("수정", "세부 사항"))
    assert result.description == "세션이 만료된다." and result.expected_outcome == "Login works."


def test_an_empty_outcome_and_missing_sections_are_empty_not_errors() -> None:
    result = parse_edited_proposal("# Only a title\n\n## Expected outcome\n\n")
    assert result == EditedProposal("Only a title")


@pytest.mark.parametrize(("text", "line", "problem"), [
    ("", 1, "no title"),
    ("\n\nJust prose\n", 3, "starts with its title"),
    ("# Add OAuth\nstray text\n## Subtasks\n", 2, "outside any section"),
    ("# Add OAuth\n## Subtasks\n1. One\nnot indented\n", 4, "not a list item"),
    ("# Add OAuth\n## Subtasks\n1. One\n2.\n", 4, "subtask 2 has no text"),
    ("# Add OAuth\n## Subtasks\n1. One\n## Extras\n", 4, "not a section of a plan"),
    ("# Add OAuth\n## Subtasks\n## Description\nx\n## Summary\ny\n", 5, "a second 'Description' section"),
    ("# Add OAuth\n<!-- left open\n## Subtasks\n", 2, "never closed"),
    ("# Add OAuth\n## Constraints\nno bullet\n", 3, "start each constraint with '-'"),
])
def test_bad_text_names_the_line_and_changes_nothing(text: str, line: int, problem: str) -> None:
    with pytest.raises(ProposalTextError) as bad:
        parse_edited_proposal(text)
    assert bad.value.line == line and problem in str(bad.value)
    assert str(bad.value).startswith(f"line {line}: ")


def test_the_guide_comment_and_crlf_do_not_get_in_the_way() -> None:
    text = proposal_to_editable_text(PLAN).replace("\n", "\r\n")
    assert text.startswith("<!--")
    assert parse_edited_proposal(text) == PLAN


@pytest.mark.parametrize("title", ["Description", "Title: the login page", "Summary: faster login", "#1 fix"])
def test_a_title_that_reads_as_a_section_name_survives(title: str) -> None:
    plan = EditedProposal(title, (EditedSubtask("x"),))
    assert parse_edited_proposal(proposal_to_editable_text(plan)) == plan


_line = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=30)
_title = _line.map(lambda t: " ".join(t.replace("<!--", "").split())).filter(
    lambda t: bool(t) and not t.startswith("#") and t[0] not in "-*+•·" and not t[:1].isdigit()
)
_body = st.lists(_title, max_size=3).map("\n".join)


@settings(max_examples=150, deadline=None)
@given(title=_title, subtasks=st.lists(st.tuples(_title, _body), max_size=4), description=_body,
       outcome=_body, constraints=st.lists(_title, max_size=3))
def test_round_trip(title: str, subtasks: list[tuple[str, str]], description: str, outcome: str,
                    constraints: list[str]) -> None:
    plan = EditedProposal(title, tuple(EditedSubtask(t, d) for t, d in subtasks), description, outcome or None,
                          tuple(constraints))
    assert parse_edited_proposal(proposal_to_editable_text(plan)) == plan
