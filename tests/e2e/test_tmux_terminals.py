"""`tunaflow demo` in terminals of other kinds: truecolour and 256 colours, 240×70, wide characters."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from rich.cells import cell_len

pytestmark = pytest.mark.e2e

KOREAN = "단어 빈도 보고서를 추가해 주세요"
TRUECOLOUR = re.compile(r"\x1b\[[0-9;]*[34]8;2;\d+;\d+;\d+")
PALETTE = re.compile(r"\x1b\[[0-9;]*[34]8;5;\d+")


@pytest.mark.parametrize("colorterm", ["truecolor", None], ids=["truecolour", "256-colour"])
def test_colours_follow_what_the_terminal_supports(
        demo: Callable[[int, int], Any], quit_demo: Callable[[Any], None], e2e_env: dict[str, str],
        colorterm: str | None) -> None:
    e2e_env.pop("COLORTERM", None)
    if colorterm:
        e2e_env["COLORTERM"] = colorterm
    session = demo(80, 24)
    styled = session.styled_screen()
    if colorterm:
        assert TRUECOLOUR.search(styled), "a truecolour terminal gets 24-bit colours"
    else:
        assert PALETTE.search(styled) and not TRUECOLOUR.search(styled), "a 256-colour terminal gets its palette"
    quit_demo(session)


def test_wide_characters_keep_the_layout_aligned_at_240x70(
        demo: Callable[[int, int], Any], quit_demo: Callable[[Any], None]) -> None:
    session = demo(240, 70)
    session.send_text(f"{KOREAN} — add a word frequency report")
    typed = session.wait_for(KOREAN)
    _assert_aligned(typed, 240)
    session.press("Enter")
    # the sent message stays readable in the chat above the proposal
    screen = session.wait_for(lambda s: "Plan 1 proposal" in s and KOREAN in s)
    _assert_aligned(screen, 240)
    quit_demo(session)


def _assert_aligned(screen: str, width: int) -> None:
    """Every row fits the terminal and the sidebar's edge is in one column on every row."""
    lines = screen.splitlines()
    assert all(cell_len(line) <= width for line in lines), "a row is wider than the terminal"
    edges = {cell_len(line[: line.index("▕")]) for line in lines if "▕" in line}
    assert len(edges) == 1, f"the sidebar's edge moved: columns {sorted(edges)}\n{screen}"
    korean_rows = [line for line in lines if KOREAN in line]
    assert korean_rows and all("▕" in line for line in korean_rows)
