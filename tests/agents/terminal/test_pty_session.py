"""A program under a PTY, read on the loop into the emulator: the stand-in TUI in tests/fakes/tty_app.py."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from waiting import until

from tunaflow_tui.agents.terminal import pty_session
from tunaflow_tui.agents.terminal.pty_session import PtySession, PtySpec
from tunaflow_tui.core.processes import LIVE_GROUPS

TTY_APP = Path(__file__).resolve().parents[2] / "fakes" / "tty_app.py"
LIMIT = 30.0


def screen_has(session: PtySession, text: str) -> Callable[[], bool]:
    return lambda: any(text in row for row in session.emulator.display)


@pytest.fixture
async def started(tmp_path: Path) -> AsyncIterator[Callable[..., PtySession]]:
    sessions: list[PtySession] = []
    exits: list[int | None] = []

    def start(*args: str, env: dict[str, str] | None = None, lines: int = 12, columns: int = 60) -> PtySession:
        session = PtySession(PtySpec([sys.executable, str(TTY_APP), *args], tmp_path, env or {}, lines, columns,
                                     scrollback=500), on_exit=exits.append)
        session.start()
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        await session.close()


async def test_the_program_draws_in_its_folder_with_colours_and_reads_keys(started: Callable[..., PtySession],
                                                                         tmp_path: Path) -> None:
    session = started("--resume", "abc", columns=200)
    await until(None, screen_has(session, "ready"), "the stand-in's first screen", LIMIT)
    rows = [row.rstrip() for row in session.emulator.display]
    assert rows[0] == "tty-app --resume abc"
    assert rows[1] == f"cwd: {tmp_path}"
    assert rows[2] == "size: 12x200"
    colours = {text.strip(): attrs for text, attrs in session.emulator.row(3) if text.strip()}
    assert colours["red"][0] == "red"
    assert colours["bold green"][0] == "green" and colours["bold green"][2]
    assert colours["on blue"][1] == "blue"
    session.write(b"x")
    await until(None, screen_has(session, "key: b'x'"), "the key echoed", LIMIT)


async def test_the_alternate_screen_comes_and_goes_and_the_cursor_query_is_answered(
        started: Callable[..., PtySession]) -> None:
    session = started()
    await until(None, screen_has(session, "ready"), "the first screen", LIMIT)
    session.write(b"a")
    await until(None, screen_has(session, "ALT SCREEN"), "the alternate screen", LIMIT)
    assert session.emulator.alternate_screen
    assert not screen_has(session, "ready")()
    session.write(b"b")
    await until(None, lambda: not session.emulator.alternate_screen, "the primary screen back", LIMIT)
    assert screen_has(session, "ready")()
    session.write(b"c")
    await until(None, screen_has(session, "cpr: ESC["), "the cursor position reply reaching the program", LIMIT)


async def test_a_resize_reaches_the_program(started: Callable[..., PtySession]) -> None:
    session = started()
    await until(None, screen_has(session, "ready"), "the first screen", LIMIT)
    session.resize(20, 90)
    await until(None, screen_has(session, "size: 20x90"), "the program seeing its new size", LIMIT)
    assert (session.emulator.lines, session.emulator.columns) == (20, 90)


async def test_the_programs_end_is_seen_with_its_exit_code_and_no_zombie(started: Callable[..., PtySession]) -> None:
    ended: list[int | None] = []
    session = started()
    session.on_exit = ended.append
    await until(None, screen_has(session, "ready"), "the first screen", LIMIT)
    pid = session.pid
    assert pid is not None
    session.write(b"q")
    await until(None, lambda: session.ended, "the end seen", LIMIT)
    assert ended == [3] and session.exit_code == 3
    assert screen_has(session, "key: b'q'")()  # its last output was parsed before the end
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped already
    assert pid not in {g.pgid for g in LIVE_GROUPS.snapshot()}
    session.write(b"ignored")  # writing to an ended session is harmless


async def test_close_ends_a_program_that_ignores_hangup_and_terminate(started: Callable[..., PtySession]) -> None:
    session = started(env={"TTY_APP_STUBBORN": "1"})
    await until(None, screen_has(session, "ready"), "the first screen", LIMIT)
    pid = session.pid
    assert pid is not None
    began = time.monotonic()
    await session.close(grace_s=0.3)
    assert session.ended and session.exit_code == -9
    assert time.monotonic() - began < 5
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_flood_is_parsed_in_small_steps_and_the_program_is_held_back(
        started: Callable[..., PtySession], monkeypatch: pytest.MonkeyPatch) -> None:
    # a PTY read brings about 4 KB, as much as one parsing step takes: a small cap shows the pause
    monkeypatch.setattr(pty_session, "PAUSE_ABOVE", 2048)
    session = started(env={"TTY_APP_FLOOD": str(256 * 1024)})
    await until(None, screen_has(session, "ready"), "the first screen", LIMIT)
    session.write(b"f")
    lateness: list[float] = []
    done = screen_has(session, "flood done")
    deadline = time.monotonic() + 120
    while not done() and time.monotonic() < deadline:
        before = time.monotonic()
        await asyncio.sleep(0.005)
        lateness.append(time.monotonic() - before - 0.005)
        assert session.backlog <= 2048 + 65536  # never more than the cap plus one read
    assert done(), "the flood never finished"
    assert session.pauses > 0, "reading never paused while the backlog was over the cap"
    lateness.sort()
    assert lateness[len(lateness) // 2] < 0.05  # the loop kept turning while the flood was parsed
    assert session.emulator.history_size == 500  # the scrollback stayed at its cap


async def test_an_ended_session_collected_later_leaves_a_newer_terminal_alone(tmp_path: Path) -> None:
    # the next terminal opened gets the lowest free descriptor: the one the ended session had
    first = PtySession(PtySpec([sys.executable, str(TTY_APP)], tmp_path, {}, 12, 60, scrollback=10))
    first.start()
    await until(None, screen_has(first, "ready"), "the first program's screen", LIMIT)
    number = first.fd
    await first.close()
    second = PtySession(PtySpec([sys.executable, str(TTY_APP)], tmp_path, {}, 12, 60, scrollback=10))
    second.start()
    try:
        assert second.fd == number
        del first
        gc.collect()  # what was left of the first session goes now
        await until(None, screen_has(second, "ready"), "the second program's screen", LIMIT)
        second.write(b"x")
        await until(None, screen_has(second, "key: b'x'"), "a key echoed by the second program", LIMIT)
        second.write(b"q")
        await until(None, lambda: second.ended, "the second program's end seen", LIMIT)
        assert second.exit_code == 3
    finally:
        await second.close()
