"""scrub_markers: files written to disk never carry a marker comment."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tunaflow_tui.core.markers import parse_markers, scrub_markers
from tunaflow_tui.core.markers.scanner import find_marker_comments, iter_tunaflow_comments, scrub_known


def test_scrub_removes_block_markers_and_their_lines_but_keeps_content() -> None:
    text = "# Plan\n<!-- tunaflow:plan-proposal -->\nSwitch auth to OAuth2\n<!-- /tunaflow:plan-proposal -->\nEnd\n"
    assert scrub_markers(text) == "# Plan\nSwitch auth to OAuth2\nEnd\n"


def test_scrub_removes_inline_and_oddly_spaced_markers() -> None:
    text = "done <!--  TunaFlow : subtask-done : 3  --> and <!--tunaflow:impl-complete-->!"
    assert scrub_markers(text) == "done  and !"


def test_scrub_removes_crlf_marker_lines() -> None:
    text = "a\r\n<!-- tunaflow:impl-complete -->\r\nb\r\n"
    assert scrub_markers(text) == "a\r\nb\r\n"


def test_scrub_removes_malformed_and_quoted_markers_too() -> None:
    text = "use `<!-- tunaflow:subtask-done:N -->` after each task"
    assert "tunaflow" not in scrub_markers(text)


def test_scrub_leaves_ordinary_comments_and_text_alone() -> None:
    text = "<!-- a normal comment -->\ntunaflow: is a word here\n<!-- unclosed tunaflow:impl-complete"
    assert scrub_markers(text) == text


def test_scrub_never_leaves_a_marker_formed_by_joining_neighbours() -> None:
    nested = "<!-" * 10 + "<!-- tunaflow:x -->" + "- tunaflow:impl-complete -->" * 10
    for text in ("<!-<!-- tunaflow:x -->- tunaflow:impl-complete -->", nested):
        scrubbed = scrub_markers(text)
        assert parse_markers(scrubbed).markers == ()
        assert list(iter_tunaflow_comments(scrubbed)) == []


JOIN_PIECES = ["<!-- tunaflow:consensus -->", "<!--tunaflow:impl-complete-->", "<!-- /tunaflow:plan-proposal -->",
               "<!-", "-", "->", "<!--", "-->", " tunaflow:review-verdict ", "<", "!", " ", "\n", "\t", "x", "`"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(JOIN_PIECES), max_size=30).map("".join))
def test_scrub_told_where_the_markers_are_scrubs_as_scrub_markers_does(text: str) -> None:
    markers = [(c.start, c.end) for c in find_marker_comments(text)]
    assert scrub_known(text, markers) == scrub_markers(text)
    assert scrub_known(text, markers[1:]) == scrub_markers(text)  # not told of them all: scrubbed as any text
