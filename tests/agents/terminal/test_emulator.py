"""The pane's VT emulator: what a program's output leaves on the screen, fed as small byte streams."""

from __future__ import annotations

from tunaflow_tui.agents.terminal.csi_filter import PrivateCsiFilter
from tunaflow_tui.agents.terminal.emulator import Emulator

ESC = b"\x1b"
CSI = b"\x1b["


def screen(columns: int = 20, lines: int = 5, scrollback: int = 100) -> tuple[Emulator, list[bytes]]:
    replies: list[bytes] = []
    return Emulator(columns, lines, scrollback=scrollback, reply=replies.append), replies


def test_text_colours_and_cursor_moves_land_where_the_program_put_them() -> None:
    emu, _ = screen()
    emu.feed(CSI + b"2J" + CSI + b"H" + b"top" + CSI + b"3;5H" + CSI + b"31;1m" + b"red" + CSI + b"0m" + b" plain")
    assert emu.display[0].rstrip() == "top"
    assert emu.display[2].rstrip() == "    red plain"
    runs = emu.row(2)
    red = next(attrs for text, attrs in runs if text == "red")
    assert red[0] == "red" and red[2] is True  # fg red, bold
    assert emu.cursor.x == 13 and emu.cursor.y == 2


def test_leaving_the_alternate_screen_brings_the_primary_screen_and_cursor_back() -> None:
    emu, _ = screen()
    emu.feed(b"shell line 1\r\nshell line 2")
    before = emu.display
    cursor = emu.cursor
    emu.feed(CSI + b"?1049h" + CSI + b"2J" + CSI + b"H" + b"FULLSCREEN APP")
    assert emu.alternate_screen
    assert emu.display[0].rstrip() == "FULLSCREEN APP"
    assert "shell line 1" not in "".join(emu.display)
    emu.feed(CSI + b"?1049l")
    assert not emu.alternate_screen
    assert emu.display == before
    assert (emu.cursor.x, emu.cursor.y) == (cursor.x, cursor.y)


def test_the_older_alternate_screen_modes_restore_too() -> None:
    for mode in (b"47", b"1047"):
        emu, _ = screen()
        emu.feed(b"kept")
        emu.feed(CSI + b"?" + mode + b"h" + b"\r\nother")
        emu.feed(CSI + b"?" + mode + b"l")
        assert emu.display[0].rstrip() == "kept"
        assert "other" not in "".join(emu.display)


def test_a_cursor_position_query_is_answered_to_the_program() -> None:
    emu, replies = screen()
    emu.feed(CSI + b"4;7H" + CSI + b"6n")
    assert replies == [b"\x1b[4;7R"]
    emu.feed(CSI + b"c")  # primary device attributes
    assert replies[-1] == b"\x1b[?6c"
    emu.feed(CSI + b"5n")
    assert replies[-1] == b"\x1b[0n"


def test_private_csi_forms_neither_print_nor_change_the_look() -> None:
    emu, _ = screen()
    # modifyOtherKeys (pyte reads it as underline), kitty keyboard push/pop/query, a private SGR
    emu.feed(CSI + b">4;2m" + CSI + b"<u" + CSI + b"=1;1u" + CSI + b"?u" + CSI + b"?4m" + b"ok")
    assert emu.display[0].rstrip() == "ok"
    text, attrs = emu.row(0)[0]
    assert text.startswith("ok") and attrs[4] is False  # not underlined


def test_a_private_sequence_split_across_reads_is_still_removed() -> None:
    emu, _ = screen()
    emu.feed(b"a\x1b")
    emu.feed(b"[>4")
    emu.feed(b";2mb")
    assert emu.display[0].rstrip() == "ab"
    assert all(attrs[4] is False for _, attrs in emu.row(0))  # "b" not underlined


def test_the_filter_holds_only_unfinished_sequences() -> None:
    f = PrivateCsiFilter()
    assert f.feed("x\x1b[?25h") == "x\x1b[?25h"  # complete: passes at once
    assert f.feed("y\x1b[") == "y"
    assert f.feed("1mz") == "\x1b[1mz"
    assert f.feed("\x1b[4:3m!") == "!"


def test_scrollback_keeps_scrolled_lines_up_to_its_cap() -> None:
    emu, _ = screen(lines=3, scrollback=4)
    emu.feed(b"\r\n".join(b"line %d" % n for n in range(10)))
    assert emu.display[2].rstrip() == "line 9"
    assert emu.history_text() == ["line 3", "line 4", "line 5", "line 6"]
    assert emu.history_size == 4
    assert emu.scrolled_total == 7


def test_the_alternate_screen_adds_nothing_to_the_scrollback() -> None:
    emu, _ = screen(lines=3)
    emu.feed(CSI + b"?1049h" + b"\r\n".join(b"frame %d" % n for n in range(10)) + CSI + b"?1049l")
    assert emu.history_text() == []


def test_a_shorter_screen_keeps_the_cursor_row_and_sends_the_top_to_scrollback() -> None:
    emu, _ = screen(lines=5)
    emu.feed(b"a\r\nb\r\nc\r\nd\r\ne")
    emu.resize(3, 20)
    assert [line.rstrip() for line in emu.display] == ["c", "d", "e"]
    assert emu.history_text() == ["a", "b"]
    assert emu.cursor.y == 2


def test_wide_characters_take_two_cells_and_joiners_do_not_stop_drawing() -> None:
    emu, _ = screen()
    emu.feed("한글 ok".encode())
    assert emu.display[0].startswith("한글 ok")
    assert emu.cursor.x == 7
    emu.feed("\r\n👍\u200d👍 after".encode())
    assert "after" in emu.display[1]


def test_utf8_split_across_reads_is_decoded_whole() -> None:
    emu, _ = screen()
    data = "é가".encode()
    for i in range(len(data)):
        emu.feed(data[i:i + 1])
    assert emu.display[0].startswith("é가")


def test_modes_the_pane_acts_on_follow_the_program() -> None:
    emu, _ = screen()
    assert not (emu.application_cursor_keys or emu.bracketed_paste or emu.mouse_reporting)
    emu.feed(CSI + b"?1h" + CSI + b"?2004h" + CSI + b"?1000;1006h" + CSI + b"?2026h")
    assert emu.application_cursor_keys and emu.bracketed_paste and emu.mouse_reporting and emu.mouse_sgr
    assert emu.synchronized_output
    emu.feed(CSI + b"?1l" + CSI + b"?2004l" + CSI + b"?1000l" + CSI + b"?2026l" + CSI + b"?25l")
    assert not (emu.application_cursor_keys or emu.bracketed_paste or emu.mouse_reporting)
    assert not emu.synchronized_output
    assert not emu.cursor.visible


def test_scroll_up_moves_the_region_and_feeds_the_scrollback() -> None:
    emu, _ = screen(lines=3)
    emu.feed(b"1\r\n2\r\n3" + CSI + b"2S")
    assert [line.rstrip() for line in emu.display] == ["3", "", ""]
    assert emu.history_text() == ["1", "2"]


def test_dirty_rows_are_reported_once() -> None:
    emu, _ = screen()
    emu.take_dirty()
    emu.feed(CSI + b"3;1Hx")
    assert emu.take_dirty() == {2}
    assert emu.take_dirty() == set()


def test_long_lines_wrap_and_scroll_like_pyte_draws_them() -> None:
    import pyte

    text = (b"\x1b[32m" + b"0123456789" * 7 + b"\x1b[0m tail\r\n" + b"short\r\n") * 5
    emu, _ = screen(columns=23, lines=6)
    emu.feed(text + b"\x1b[?7l" + b"x" * 30 + b"\x1b[?7h" + b"\x1b(0qqq\x1b(B" + b"\x1b[4h" + b"ins" + b"\x1b[4l")
    reference = pyte.Screen(23, 6)
    pyte.ByteStream(reference).feed(text + b"\x1b[?7l" + b"x" * 30 + b"\x1b[?7h" + b"\x1b(0qqq\x1b(B" + b"\x1b[4h" +
                                     b"ins" + b"\x1b[4l")
    assert emu.display == reference.display
    assert (emu.cursor.x, emu.cursor.y) == (reference.cursor.x, reference.cursor.y)
    for y in range(6):
        for x in range(23):
            mine, theirs = emu._screen.buffer[y][x], reference.buffer[y][x]
            assert mine == theirs, (y, x, mine, theirs)
