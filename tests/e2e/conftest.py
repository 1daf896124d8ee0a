"""A small tmux driver: run tunaflow in a real terminal of a fixed size, type, and read the screen.

Each session gets its own tmux server (``-L`` socket name), started with the test's environment,
so nothing leaks in from (or out to) the user's tmux, and the server is killed afterwards.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from rich.cells import cell_len
from waiting import HANG_LIMIT

POLL_S = 0.1


class TmuxSession:
    """One detached tmux session running one command; the pane stays after the command exits."""

    def __init__(self, width: int, height: int, env: Mapping[str, str]) -> None:
        self.width = width
        self.height = height
        self.env = dict(env)
        self.socket = f"tunaflow-e2e-{uuid.uuid4().hex[:12]}"
        self.name = "e2e"
        self._started = False
        self._status_file: Path | None = None

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", os.devnull, *args],
            capture_output=True, text=True, encoding="utf-8", errors="replace",
            env=self.env, timeout=20, check=check,
        )

    def start(self, argv: Sequence[str], cwd: Path) -> None:
        """Run ``argv`` in a new session of ``width`` × ``height``.

        A tiny ``sh`` wrapper waits for the command and writes its exit status to a file (the
        arguments are passed as positional parameters, never pasted into the script): tmux only
        knows a pane's exit status once it has reaped the process, which can lag behind.
        """
        self._status_file = cwd / f".exit-status-{self.socket}"
        wrapper = ["sh", "-c", 'status_file=$1; shift; "$@"; echo $? > "$status_file"', "sh",
                   str(self._status_file), *argv]
        self._tmux(
            "new-session", "-d", "-s", self.name, "-x", str(self.width), "-y", str(self.height),
            "-c", str(cwd), *wrapper,
            ";", "set-option", "-t", self.name, "remain-on-exit", "on",
            ";", "set-option", "-t", self.name, "status", "off",
        )
        self._started = True

    def send_text(self, text: str) -> None:
        """Type ``text`` literally."""
        self._tmux("send-keys", "-t", self.name, "-l", text)

    def press(self, *keys: str) -> None:
        """Press keys by tmux name: ``Enter``, ``C-q``, ``a``, ``Escape``…"""
        for key in keys:
            self._tmux("send-keys", "-t", self.name, key)

    def screen(self) -> str:
        """The visible screen as plain text."""
        return self._tmux("capture-pane", "-p", "-t", self.name, check=False).stdout

    def styled_screen(self) -> str:
        """The visible screen with its colour and style escape sequences, as tmux holds them."""
        return self._tmux("capture-pane", "-e", "-p", "-t", self.name, check=False).stdout

    def _pane(self, fmt: str) -> str:
        return self._tmux("display-message", "-p", "-t", self.name, fmt, check=False).stdout.strip()

    def exit_status(self) -> int | None:
        """The command's exit status (128 + N if signal N ended it), None while it runs."""
        if self._status_file is None or not self._status_file.is_file():
            return None
        text = self._status_file.read_text(encoding="utf-8").strip()
        return int(text) if text.isdigit() else None

    def exited(self) -> bool:
        """True once the command has exited (or the pane is gone)."""
        return self.exit_status() is not None or self._pane("#{pane_dead}") in ("1", "")

    def wait_for(self, what: str | Callable[[str], bool], timeout: float = HANG_LIMIT) -> str:
        """Poll the screen until it contains ``what`` (or ``what(screen)`` is true); fail with the screen.

        ``timeout`` only turns a hang into a failure: the wait ends as soon as the screen shows it.
        """
        seen, screen = self._poll(what, timeout)
        if seen:
            return screen
        state = f"exited with {self.exit_status()}" if self.exited() else "still running"
        pytest.fail(f"waited {timeout}s for {what!r}; the program is {state}; the screen:\n{screen}")

    def _poll(self, what: str | Callable[[str], bool], timeout: float) -> tuple[bool, str]:
        """Look at the screen until it shows ``what``, the program exits or ``timeout`` passes: (shown, last screen)."""
        test = (lambda screen: what in screen) if isinstance(what, str) else what
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if test(screen):
                return True, screen
            if self.exited():
                break
            time.sleep(POLL_S)
        return False, screen

    def press_until(self, keys: str | Sequence[str], what: str | Callable[[str], bool], tries: int = 3,
                    each: float = 30.0) -> str:
        """Press ``keys`` until the screen shows ``what``, at most ``tries`` times; fail with the screen.

        For a key pressed right after one that moves the focus: Textual queues each key for the widget
        that has the focus when the key is read, so when both arrive together (a loaded machine, an SSH
        packet) the second reaches the widget the first one left. Use it only with keys that are harmless
        wherever they land (a cursor move, deleting an empty field), so that pressing again is safe.
        """
        keys = (keys,) if isinstance(keys, str) else tuple(keys)
        for _ in range(tries):
            self.press(*keys)
            seen, screen = self._poll(what, each)
            if seen:
                return screen
        return self.wait_for(what, timeout=POLL_S)

    def wait_exit(self, timeout: float = 15.0) -> int | None:
        """Wait until the command has exited; its exit status (None if it is still running)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.exit_status()
            if status is not None:
                return status
            time.sleep(POLL_S)
        return None

    def kill_window(self) -> None:
        """Close the window the command runs in, as a user closing a terminal does (its programs get SIGHUP)."""
        self._tmux("kill-window", "-t", self.name, check=False)

    def close(self) -> None:
        """Kill the session and its server."""
        if self._started:
            self._tmux("kill-server", check=False)


def lines_matching(screen: str, pattern: str) -> list[str]:
    """The screen lines matching a regular expression."""
    return [line for line in screen.splitlines() if re.search(pattern, line)]


@pytest.fixture
def e2e_env(tmp_path: Path) -> dict[str, str]:
    """An environment with its own config/data/state dirs, a 256-colour terminal and no demo pacing."""
    home = tmp_path / "home"
    env = {key: value for key, value in os.environ.items()  # the test run's memory settings stay (tests/conftest.py)
           if not (key.startswith(("TMUX", "TUNAFLOW_")) and not key.startswith("TUNAFLOW_MEMORY__"))
           and key not in ("COLUMNS", "LINES")}  # a parallel runner sets them; the terminal gives the size
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(home / "cache"),
        TMPDIR=str(tmp_path),
        TERM="xterm-256color",
        LANG="C.UTF-8",
        LC_ALL="C.UTF-8",
        PYTHONIOENCODING="utf-8",
        TUNAFLOW_ENGINES__DEMO__DEMO_DELAY_S="0",
    )
    for key in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        Path(env[key]).mkdir(parents=True, exist_ok=True)
    return env


@pytest.fixture
def tmux(e2e_env: dict[str, str]) -> Iterator[Callable[[int, int], TmuxSession]]:
    """Make tmux sessions of a given size; every one is killed at the end of the test."""
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed (CI installs it with apt-get; locally: apt-get install tmux)")
    sessions: list[TmuxSession] = []

    def make(width: int, height: int) -> TmuxSession:
        session = TmuxSession(width, height, e2e_env)
        sessions.append(session)
        return session

    try:
        yield make
    finally:
        for session in sessions:
            session.close()


DEMO_ARGV = [sys.executable, "-m", "tunaflow_tui", "demo", "--no-mouse"]
# The footer starts with the help key; the composer shows who receives the next message.
FOOTER = re.compile(r"\bf1 Help\b|\^q Quit")
COMPOSER = re.compile(r"→ .*\(demo\)")


def start_demo(make: Callable[[int, int], TmuxSession], size: tuple[int, int], cwd: Path) -> TmuxSession:
    """Start `tunaflow demo --no-mouse` and wait for its first screen (the composer and the footer)."""
    session = make(*size)
    session.start(DEMO_ARGV, cwd)
    width = size[0]

    def fills_the_terminal(screen: str) -> bool:  # laid out at the terminal's size, not a default one
        return any(line.rstrip().endswith("palette") and cell_len(line.rstrip()) >= width - 2
                   for line in screen.splitlines())

    session.wait_for(lambda s: bool(FOOTER.search(s)) and bool(COMPOSER.search(s)) and fills_the_terminal(s))
    return session


def quit_cleanly(session: TmuxSession) -> None:
    """ctrl+q ends the app with exit status 0 (fails with the screen otherwise)."""
    session.press("C-q")
    status = session.wait_exit(timeout=30)
    screen = session.screen()
    if status is None:
        pytest.fail(f"the process was still running 30 s after ctrl+q; the screen:\n{screen}")
    assert status == 0, f"tunaflow demo exited with {status}; the screen:\n{screen}"


@pytest.fixture
def demo(tmux: Callable[[int, int], TmuxSession], tmp_path: Path) -> Callable[[int, int], TmuxSession]:
    """Start `tunaflow demo` in a terminal of the given size (in the test's folder) and wait for it."""
    return lambda width, height: start_demo(tmux, (width, height), tmp_path)


@pytest.fixture
def quit_demo() -> Callable[[TmuxSession], None]:
    """Quit a demo session with ctrl+q and check that it exited cleanly."""
    return quit_cleanly
