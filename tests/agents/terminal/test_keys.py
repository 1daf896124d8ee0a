"""What keys, pastes and mouse events send to a program in the terminal pane (xterm's encodings)."""

from __future__ import annotations

import pytest

from tunaflow_tui.agents.terminal.keys import key_bytes, mouse_bytes, paste_bytes


@pytest.mark.parametrize(("key", "character", "sent"), [
    ("up", None, b"\x1b[A"), ("down", None, b"\x1b[B"), ("right", None, b"\x1b[C"), ("left", None, b"\x1b[D"),
    ("home", None, b"\x1b[H"), ("end", None, b"\x1b[F"),
    ("ctrl+left", None, b"\x1b[1;5D"), ("shift+up", None, b"\x1b[1;2A"), ("ctrl+shift+right", None, b"\x1b[1;6C"),
    ("pageup", None, b"\x1b[5~"), ("pagedown", None, b"\x1b[6~"), ("insert", None, b"\x1b[2~"),
    ("delete", None, b"\x1b[3~"), ("shift+delete", None, b"\x1b[3;2~"),
    ("f1", None, b"\x1bOP"), ("f4", None, b"\x1bOS"), ("f5", None, b"\x1b[15~"), ("f12", None, b"\x1b[24~"),
    ("ctrl+f2", None, b"\x1b[1;5Q"),
    ("enter", "\r", b"\r"), ("tab", "\t", b"\t"), ("shift+tab", None, b"\x1b[Z"), ("backspace", "\x7f", b"\x7f"),
    ("escape", "\x1b", b"\x1b"), ("space", " ", b" "),
    ("ctrl+a", "\x01", b"\x01"), ("ctrl+c", "\x03", b"\x03"), ("ctrl+z", "\x1a", b"\x1a"),
    ("ctrl+g", None, b"\x07"), ("ctrl+@", None, b"\x00"), ("ctrl+backslash", None, b"\x1c"),
    ("alt+x", "x", b"\x1bx"), ("alt+shift+x", "X", b"\x1bX"), ("alt+enter", None, b"\x1b\r"),
    ("alt+backspace", None, b"\x1b\x7f"), ("alt+left", None, b"\x1b[1;3D"),
    ("a", "a", b"a"), ("exclamation_mark", "!", b"!"), ("한", "한", "한".encode()),
])
def test_keys_send_what_xterm_sends(key: str, character: str | None, sent: bytes) -> None:
    assert key_bytes(key, character) == sent


def test_application_cursor_mode_sends_arrows_as_ss3() -> None:
    assert key_bytes("up", None, application_cursor=True) == b"\x1bOA"
    assert key_bytes("home", None, application_cursor=True) == b"\x1bOH"
    assert key_bytes("ctrl+up", None, application_cursor=True) == b"\x1b[1;5A"  # modified: CSI form still


def test_keys_with_nothing_to_send_send_nothing() -> None:
    assert key_bytes("ctrl+shift+f13", None) is None


def test_a_paste_is_bracketed_only_when_the_program_asked() -> None:
    assert paste_bytes("one\ntwo", bracketed=False) == b"one\rtwo"
    assert paste_bytes("one\ntwo", bracketed=True) == b"\x1b[200~one\rtwo\x1b[201~"


def test_a_pasted_end_marker_cannot_end_the_paste_early() -> None:
    sent = paste_bytes("safe\x1b[201~rm -rf ~\n", bracketed=True)
    assert sent == b"\x1b[200~saferm -rf ~\r\x1b[201~"
    assert sent.count(b"\x1b[201~") == 1
    nested = paste_bytes("\x1b[20\x1b[201~1~x", bracketed=True)  # removing one must not form another
    assert nested.count(b"\x1b[201~") == 1


def test_mouse_reports_are_sgr_with_one_based_cells() -> None:
    assert mouse_bytes(0, 0, 0, pressed=True) == b"\x1b[<0;1;1M"
    assert mouse_bytes(0, 9, 4, pressed=False) == b"\x1b[<0;10;5m"
    assert mouse_bytes(64, 2, 3, pressed=True, ctrl=True) == b"\x1b[<80;3;4M"


def test_alt_letters_without_a_character_still_send_the_letter() -> None:
    assert key_bytes("alt+x", None) == b"\x1bx"
    assert key_bytes("alt+shift+x", None) == b"\x1bX"
