#!/usr/bin/env python3
"""A stand-in interactive terminal program (stdlib only), run under a PTY by the terminal pane's tests.

It draws like the agents' TUIs do: clears the screen, prints its arguments, its folder and its
terminal size, a coloured line, then reads keys in raw mode and echoes each read as ``key: <repr>``
on the line below the last one. Keys that act:

- ``a`` / ``b``: enter / leave the alternate screen (drawing ``ALT SCREEN`` there);
- ``c``: ask the terminal for the cursor position (``ESC[6n``) and print the reply as ``cpr: …``;
- ``s``: print the terminal size again; a resize (SIGWINCH) prints it too, as ``size: ROWSxCOLS``;
- ``f``: print ``TTY_APP_FLOOD`` bytes (default 5 MB) of coloured lines as fast as it can, then ``flood done``;
- ``q``: exit with code 3.

Environment: ``TTY_APP_PASTE=1`` turns bracketed paste on (``ESC[?2004h``); ``TTY_APP_STUBBORN=1``
ignores SIGHUP and SIGTERM (a program that will not end politely); ``TTY_APP_MOUSE=1`` asks for SGR mouse
reports; ``TTY_APP_CKM=1`` sets application cursor keys; ``TTY_APP_RECORD=<file>``: its folder, its arguments and
then ``CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN`` as it got it are written there, one a line, at start; ``TTY_APP_PIDFILE=<file>``: its pid is written there.
"""

from __future__ import annotations

import os
import signal
import sys
import termios
import tty

OUT = sys.stdout.fileno()
IN = sys.stdin.fileno()
row = 1


def write(text: str) -> None:
    data = text.encode()
    while data:
        data = data[os.write(OUT, data):]


def line(text: str) -> None:
    """Print ``text`` on the next free row (scrolling once the screen is full)."""
    global row
    rows = os.get_terminal_size(OUT).lines
    if row > rows:
        write("\r\n" + text)
    else:
        write(f"\x1b[{row};1H\x1b[2K{text}")
        row += 1


def size() -> str:
    cols, rows = os.get_terminal_size(OUT)
    return f"size: {rows}x{cols}"


def on_winch(_signum: int, _frame: object) -> None:
    line(size())


def flood() -> None:
    total = int(os.environ.get("TTY_APP_FLOOD", str(5 * 1024 * 1024)))
    chunk = "".join(f"\x1b[3{n % 8}mflood line {n:06d} " + "x" * 60 + "\x1b[0m\r\n" for n in range(200)).encode()
    sent = 0
    while sent < total:
        piece = chunk[: total - sent]
        while piece:
            piece = piece[os.write(OUT, piece):]
        sent += len(chunk[: total - sent])
    line("flood done")


def read_cpr() -> str:
    write("\x1b[6n")
    reply = b""
    while not reply.endswith(b"R"):
        reply += os.read(IN, 1)
    return reply.decode(errors="replace").replace("\x1b", "ESC")


def main() -> int:
    global row
    if os.environ.get("TTY_APP_STUBBORN") == "1":
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGWINCH, on_winch)
    if os.environ.get("TTY_APP_PIDFILE"):
        with open(os.environ["TTY_APP_PIDFILE"], "w", encoding="utf-8") as pidfile:
            pidfile.write(str(os.getpid()))
    if os.environ.get("TTY_APP_RECORD"):
        with open(os.environ["TTY_APP_RECORD"], "w", encoding="utf-8") as record:
            alt_off = os.environ.get("CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN", "")
            record.write("\n".join([os.getcwd(), *sys.argv[1:], f"alt-screen-off={alt_off}"]) + "\n")
    saved = termios.tcgetattr(IN)
    tty.setraw(IN)
    try:
        write("\x1b[2J\x1b[H")
        if os.environ.get("TTY_APP_PASTE") == "1":
            write("\x1b[?2004h")
        if os.environ.get("TTY_APP_MOUSE") == "1":
            write("\x1b[?1000h\x1b[?1006h")
        if os.environ.get("TTY_APP_CKM") == "1":
            write("\x1b[?1h")
        line("tty-app " + " ".join(sys.argv[1:]))
        line("cwd: " + os.getcwd())
        line(size())
        line("\x1b[31mred\x1b[0m \x1b[1;32mbold green\x1b[0m \x1b[44mon blue\x1b[0m")
        line("ready")
        while True:
            try:
                data = os.read(IN, 1024)
            except InterruptedError:
                continue
            if not data:
                return 0
            line("key: " + repr(data))
            if data == b"q":
                return 3
            if data == b"a":
                write("\x1b[?1049h\x1b[2J\x1b[H\x1b[7mALT SCREEN\x1b[0m")
            elif data == b"b":
                write("\x1b[?1049l")
            elif data == b"c":
                line("cpr: " + read_cpr())
            elif data == b"s":
                line(size())
            elif data == b"f":
                flood()
    finally:
        termios.tcsetattr(IN, termios.TCSADRAIN, saved)


if __name__ == "__main__":
    sys.exit(main())
