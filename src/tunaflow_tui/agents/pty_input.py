"""Type a prompt into a program on a pseudo-terminal, whole, however long it is.

A terminal in canonical (line-editing) mode holds at most 4095 characters of an unfinished line
and silently drops the rest (Linux's ``N_TTY_BUF_SIZE``), so a long prompt sent as one line
reaches the program cut. When the line is longer than that and the program left its terminal in
canonical mode, line editing is switched off first (the program still reads one line: the
characters, then the newline). The line goes to the program's :class:`.PtySession`, which sends it as
the terminal takes it; what the program prints meanwhile reaches the session's reader as always, so
neither side ever waits on a full buffer.

Control characters in the prompt would act as keystrokes (ctrl+c interrupts, ctrl+d ends the
input, ESC starts a key sequence), so they are removed before it is typed.
"""

from __future__ import annotations

import asyncio
import re
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass

from tunaflow_tui.agents.terminal.pty_session import PtySession

#: the longest line a terminal in canonical mode accepts (4096 with the newline)
CANONICAL_LINE_MAX = 4095
_POLL_S = 0.02
_KEYSTROKES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(frozen=True, slots=True)
class Typed:
    """How typing a line went: whether it all went in (or the program ended first)."""

    complete: bool
    sent_bytes: int
    total_bytes: int
    exited: bool = False


def as_one_line(prompt: str) -> str:
    """The prompt as one typed line: whitespace runs become one space, control characters go."""
    return " ".join(_KEYSTROKES.sub(" ", prompt).split())


def _canonical_mode_off(fd: int) -> None:
    """Switch off line editing on the terminal behind the pty master ``fd`` (reads return at once)."""
    attrs = termios.tcgetattr(fd)
    attrs[3] &= ~termios.ICANON
    cc = attrs[6]
    cc[termios.VMIN] = 1
    cc[termios.VTIME] = 0
    termios.tcsetattr(fd, termios.TCSANOW, attrs)


def needs_raw_input(fd: int, line_bytes: int) -> bool:
    """Whether a line of ``line_bytes`` would be cut by the terminal's canonical-mode limit."""
    if line_bytes < CANONICAL_LINE_MAX:
        return False
    try:
        return bool(termios.tcgetattr(fd)[3] & termios.ICANON)
    except termios.error:
        return False


async def type_line(session: PtySession, line: str, *, stall_s: float,
                    cancelled: Callable[[], bool]) -> Typed:
    """Type ``line`` and a newline into the program; give up when its terminal takes nothing for ``stall_s``.

    Returns early, incomplete, as soon as ``cancelled()`` is true or the program ends.
    """
    data = (line + "\n").encode("utf-8")
    fd = session.fd
    if fd is not None and needs_raw_input(fd, len(data)):
        _canonical_mode_off(fd)
    waiting_before = session.unsent  # e.g. a reply to the program's query, queued already
    session.write(data)
    sent, last_progress = 0, time.monotonic()
    while True:
        now_sent = max(0, min(len(data), len(data) + waiting_before - session.unsent))
        if now_sent > sent:
            sent, last_progress = now_sent, time.monotonic()
        if sent == len(data):
            return Typed(True, sent, len(data))
        if session.ended:
            return Typed(False, sent, len(data), exited=True)
        if cancelled() or time.monotonic() - last_progress > stall_s:
            return Typed(False, sent, len(data))
        await asyncio.sleep(_POLL_S)
