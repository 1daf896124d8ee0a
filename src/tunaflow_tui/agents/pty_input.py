"""Type a prompt into a program on a pseudo-terminal, whole, however long it is.

A terminal in canonical (line-editing) mode holds at most 4095 characters of an unfinished line
and silently drops the rest (Linux's ``N_TTY_BUF_SIZE``), so a long prompt sent as one line
reaches the program cut. When the line is longer than that and the program left its terminal in
canonical mode, line editing is switched off first (the program still reads one line: the
characters, then the newline). The line is written in pieces as the program reads it, and what
the program prints meanwhile is kept for the reply, so neither side ever waits on a full buffer.

Control characters in the prompt would act as keystrokes (ctrl+c interrupts, ctrl+d ends the
input, ESC starts a key sequence), so they are removed before it is typed.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass

import pexpect

#: the longest line a terminal in canonical mode accepts (4096 with the newline)
CANONICAL_LINE_MAX = 4095
_WRITE_PIECE = 1024
_POLL_S = 0.05
_KEYSTROKES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(frozen=True, slots=True)
class Typed:
    """How typing a line went: whether it all went in, and what the program printed meanwhile."""

    complete: bool
    sent_bytes: int
    total_bytes: int
    output: str
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


def type_line(child: pexpect.spawn, line: str, *, stall_s: float,
              cancelled: Callable[[], bool]) -> Typed:
    """Type ``line`` and a newline into ``child``; give up when the program reads nothing for ``stall_s``.

    Returns early, incomplete, as soon as ``cancelled()`` is true or the program exits.
    """
    data = (line + "\n").encode("utf-8")
    fd = child.child_fd
    if needs_raw_input(fd, len(data)):
        _canonical_mode_off(fd)
    output: list[str] = []
    sent = 0
    last_progress = time.monotonic()
    blocking = os.get_blocking(fd)
    os.set_blocking(fd, False)
    try:
        while sent < len(data):
            if cancelled():
                break
            if time.monotonic() - last_progress > stall_s:
                break
            readable, writable, _ = select.select([fd], [fd], [], _POLL_S)
            if readable:
                try:
                    output.append(child.read_nonblocking(65536, timeout=0))
                except pexpect.TIMEOUT:
                    pass
                except pexpect.EOF:
                    return Typed(False, sent, len(data), "".join(output), exited=True)
            if writable:
                try:
                    written = os.write(fd, data[sent:sent + _WRITE_PIECE])
                except BlockingIOError:
                    written = 0
                except OSError:  # the program closed its terminal
                    return Typed(False, sent, len(data), "".join(output), exited=True)
                if written:
                    sent += written
                    last_progress = time.monotonic()
    finally:
        with contextlib.suppress(OSError):
            os.set_blocking(fd, blocking)
    return Typed(sent == len(data), sent, len(data), "".join(output))
