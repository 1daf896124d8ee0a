"""MarkerStream: streamed text never shows a marker, and markers only appear once finished."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.markers import MarkerStream, PlanProposal, SubtaskDone, parse_markers

MESSAGE = ("Working on it.\n<!--  tunaflow : subtask-done : 2  -->\nNow the plan: <!-- keep this comment -->\n"
           "<!-- tunaflow:plan-proposal -->\nAdd cache\nsubtasks\n- store\n<!-- /tunaflow:plan-proposal -->\n"
           "Tail <3 and <!- not a marker\n<!--tunaflow:impl-complete-->")  # fmt: skip


def _stream(chunks: list[str], role: str | None = None) -> tuple[str, MarkerStream]:
    stream = MarkerStream(role)
    shown = []
    for chunk in chunks:
        shown.append(stream.feed(chunk))
        assert stream.result() is None
    shown.append(stream.finish())
    return "".join(shown), stream


def test_whole_message_preview_drops_markers_keeps_everything_else() -> None:
    shown, stream = _stream([MESSAGE])
    assert "tunaflow" not in shown
    assert "<!-- keep this comment -->" in shown and "Tail <3 and <!- not a marker" in shown
    assert "Add cache" in shown
    result = stream.result()
    assert result is not None and result == parse_markers(MESSAGE)


@pytest.mark.parametrize("role", [None, "developer"])
def test_split_at_every_position_gives_the_same_text_and_no_early_marker(role: str | None) -> None:
    expected, _ = _stream([MESSAGE], role)
    for cut in range(len(MESSAGE) + 1):
        shown, stream = _stream([MESSAGE[:cut], MESSAGE[cut:]], role)
        assert shown == expected, cut
        assert stream.result() == parse_markers(MESSAGE, role)


def test_split_into_single_characters() -> None:
    expected, _ = _stream([MESSAGE])
    shown, stream = _stream(list(MESSAGE))
    assert shown == expected
    result = stream.result()
    assert result is not None
    assert [type(m) for m in result.markers] == [SubtaskDone, PlanProposal, type(result.markers[2])]


def test_partial_marker_is_held_back_then_released_when_it_is_not_a_marker() -> None:
    stream = MarkerStream()
    assert stream.feed("hello <!-- tuna") == "hello "
    assert stream.feed("fish -->") == "<!-- tunafish -->"


def test_unclosed_comment_released_at_finish() -> None:
    stream = MarkerStream()
    assert stream.feed("x <!-- tunaflow:impl-comp") == "x "
    assert stream.finish() == "<!-- tunaflow:impl-comp"
    assert stream.feed("more") == ""


def test_held_back_text_is_bounded() -> None:
    stream = MarkerStream()
    shown = stream.feed("<!-- tunaflow:" + "x" * 500)
    assert shown.startswith("<!-- tunaflow:")


def test_markers_seen_counts_each_dropped_marker_once_as_it_arrives() -> None:
    stream = MarkerStream("developer")
    counts = []
    for chunk in ("Did one.\n<!-- tunaf", "low:subtask-done:1 -->\nand <!-- a comment --> ",
                  "<!-- tunaflow:subtask-done:2 -->", " end"):
        stream.feed(chunk)
        counts.append(stream.markers_seen)
    stream.finish()
    assert counts == [0, 1, 2, 2]  # held back until decided; an ordinary comment is not a marker
    assert stream.markers_seen == 2
    # the caller learns what the markers say by parsing the text so far
    assert [m.index for m in parse_markers(stream.text, "developer").markers if isinstance(m, SubtaskDone)] == [1, 2]
