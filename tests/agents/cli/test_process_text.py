"""The stderr tail an error card shows: the last lines, decoded whatever the bytes, as they were."""

from __future__ import annotations

from tunaflow_tui.agents.process import tail_text


def test_the_tail_keeps_the_last_forty_lines_as_written() -> None:
    lines = [f"line {number}" for number in range(50)]
    assert tail_text(("\n".join(lines) + "\n").encode()) == "\n".join(lines[-40:])
    assert tail_text(b"\n\nfirst came two blank lines\nfix X  \n\n") == "\n\nfirst came two blank lines\nfix X  "
    assert tail_text(b"a\nb\nc", max_lines=2) == "b\nc"
    assert tail_text(b"fix X\n") == "fix X"


def test_bytes_that_are_not_utf8_are_replaced_not_raised() -> None:
    assert tail_text(b"bad \xff byte\n") == "bad \ufffd byte"
