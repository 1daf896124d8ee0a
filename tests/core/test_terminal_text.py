"""Agent output is made inert: no control sequence survives, ordinary text is untouched."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from tunaflow_tui.core.terminal_text import StreamNeutralizer, neutralize

DANGEROUS = ("\x1b", "\x07", "\x9b", "\x9d", "\x90", "\x9f", "\x00", "\x7f", "\r", "\u202e")


def test_plain_text_and_korean_pass_through() -> None:
    text = "# 제목\n\n- item\twith tab\n한국어 문장 😀"
    assert neutralize(text) == text


def test_clear_screen_and_cursor_moves_are_removed() -> None:
    assert neutralize("a\x1b[2J\x1b[Hb\x1b[10;20Hc\x1b[?1049h") == "abc"


def test_colours_are_removed_text_kept() -> None:
    assert neutralize("\x1b[1;31merror\x1b[0m: boom") == "error: boom"


def test_title_clipboard_and_hyperlink_osc_are_removed() -> None:
    assert neutralize("x\x1b]0;pwned\x07y") == "xy"
    assert neutralize("x\x1b]2;pwned\x1b\\y") == "xy"
    assert neutralize("\x1b]52;c;cm0gLXJmIC8=\x07copy") == "copy"
    assert neutralize("\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\") == "click"


def test_dcs_apc_and_unterminated_strings_are_removed() -> None:
    assert neutralize("a\x1bPq#0;2;0;0;0\x1b\\b") == "ab"
    assert neutralize("a\x1b_Gf=100;AAAA\x1b\\b") == "ab"
    assert neutralize("a\x1b]0;never terminated") == "a"


def test_eight_bit_c1_forms_are_removed() -> None:
    assert neutralize("a\x9b2Jb") == "ab"
    assert neutralize("a\x9d0;title\x07b") == "ab"
    assert neutralize("a\x85b\x8dc") == "abc"


def test_two_character_escapes_and_lone_esc() -> None:
    assert neutralize("a\x1bcb\x1b7c\x1b") == "abc"


def test_line_endings_and_c0_controls() -> None:
    assert neutralize("one\r\ntwo\rthree\x08\x00\x07") == "one\ntwo\nthree"


def test_bidi_overrides_are_removed() -> None:
    assert neutralize("abc\u202edef\u2066x\u2069") == "abcdefx"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab\n\t[];0P_\\7") + list(DANGEROUS)), max_size=200))
def test_output_never_contains_a_control(text: str) -> None:
    out = neutralize(text)
    assert not any(ch in out for ch in DANGEROUS)
    assert neutralize(out) == out  # idempotent


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.lists(st.integers(min_value=0, max_value=300), max_size=8))
def test_streaming_never_leaks_and_matches_whole_text_without_escapes(text: str, cuts: list[int]) -> None:
    stream = StreamNeutralizer()
    pieces, last = [], 0
    for cut in sorted(set(cuts)):
        pieces.append(text[last:cut])
        last = max(last, cut)
    pieces.append(text[last:])
    out = "".join(stream.feed(p) for p in pieces) + stream.flush()
    assert not any(ch in out for ch in DANGEROUS)
    if not any(ch in text for ch in "\x1b\x90\x98\x9b\x9d\x9e\x9f"):
        assert out == neutralize(text)


def test_stream_joins_split_sequences() -> None:
    stream = StreamNeutralizer()
    out = stream.feed("line\r") + stream.feed("\nnext\x1b[") + stream.feed("2Jend") + stream.flush()
    assert out == "line\nnextend"


def test_linear_time_on_hostile_input() -> None:
    hostile = ["\x1b[" + "0" * 200_000, "\x1b]" * 100_000, "\x1b" * 200_000, "\r" * 200_000]
    for text in hostile:
        started = time.perf_counter()
        neutralize(text)
        stream = StreamNeutralizer()
        for i in range(0, len(text), 4096):
            stream.feed(text[i : i + 4096])
        stream.flush()
        assert time.perf_counter() - started < 2.0
