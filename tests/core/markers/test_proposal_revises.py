"""``revises: #N`` in the opening proposal marker: the proposal is a new version of plan N.

Strict: only ``revises: #N`` with a positive number and nothing after it; any other suffix makes the
comment no marker at all, as a misspelt ``subtask-done`` is.
"""

from __future__ import annotations

import pytest

from tunaflow_tui.core.markers import MarkerStream, PlanProposal, parse_markers

BODY = "title: Faster search\nsubtasks:\n1. Index the titles\n"
CLOSE = "<!-- /tunaflow:plan-proposal -->"


def _reply(opener: str) -> str:
    return f"Here is the new version.\n{opener}\n{BODY}{CLOSE}\n"


@pytest.mark.parametrize("opener", [
    "<!-- tunaflow:plan-proposal revises: #3 -->",
    "<!--tunaflow:plan-proposal revises:#3-->",
    "<!--  TunaFlow : plan_proposal  Revises : #3 -->",
])
def test_the_opening_marker_names_the_plan_it_revises(opener: str) -> None:
    result = parse_markers(_reply(opener), role="architect")
    (proposal,) = result.markers
    assert isinstance(proposal, PlanProposal) and proposal.accepted
    assert proposal.revises == 3 and proposal.title == "Faster search"
    assert proposal.to_json()["revises"] == 3
    assert result.display_text == "Here is the new version.\n", "the marker is hidden like any proposal's"


def test_a_proposal_without_it_revises_nothing_and_its_json_is_as_before() -> None:
    (proposal,) = parse_markers(_reply("<!-- tunaflow:plan-proposal -->"), role="architect").markers
    assert isinstance(proposal, PlanProposal) and proposal.revises is None
    assert "revises" not in proposal.to_json()


@pytest.mark.parametrize("suffix", ["revises: 3", "revises: #0", "revises: #3 and #4", "revises: #three",
                                    "revise: #3", "revises: #1234567", "revises: #٣"])
def test_any_other_suffix_is_no_marker(suffix: str) -> None:
    text = _reply(f"<!-- tunaflow:plan-proposal {suffix} -->")
    result = parse_markers(text, role="architect")
    assert result.markers == (), "no plan is made from a marker the Architect misspelt"
    assert suffix in result.display_text, "the text stays visible"


def test_a_closing_marker_takes_no_plan_number() -> None:
    text = f"<!-- tunaflow:plan-proposal revises: #2 -->\n{BODY}<!-- /tunaflow:plan-proposal revises: #2 -->\n"
    (proposal,) = parse_markers(text, role="architect").markers
    assert isinstance(proposal, PlanProposal) and not proposal.closed, "the odd closer is not a closing marker"


def test_from_another_role_it_is_rejected_and_shown_inert() -> None:
    result = parse_markers(_reply("<!-- tunaflow:plan-proposal revises: #3 -->"), role="developer")
    (proposal,) = result.markers
    assert not proposal.accepted
    assert "`` <!-- tunaflow:plan-proposal revises: #3 --> ``" in result.display_text


def test_quoted_as_an_example_it_does_nothing() -> None:
    text = "Write `<!-- tunaflow:plan-proposal revises: #3 -->` to revise plan 3.\n"
    assert parse_markers(text, role="architect").markers == ()


def test_the_stream_hides_it_as_it_hides_the_plain_marker() -> None:
    stream = MarkerStream("architect")
    text = _reply("<!-- tunaflow:plan-proposal revises: #3 -->")
    shown = "".join(stream.feed(text[i:i + 7]) for i in range(0, len(text), 7)) + stream.finish()
    assert "revises" not in shown
