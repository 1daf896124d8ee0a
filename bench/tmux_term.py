"""A real terminal for the benchmarks: tmux, driven through one control-mode connection.

The benchmarks run the app the way a user does, in a terminal, and read what the terminal shows.
tmux runs on a private socket (nothing of the user's tmux is touched) and a control-mode client
(``tmux -C``) sends the keys and reads the screen: no process is started per key or per look, and
tmux reports every write of the app (``%output``) as it arrives, so a benchmark looks at the
screen right after each one. A time is taken when tmux answers the look that first shows what was
waited for, so a figure never ends before the terminal had it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shlex
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping


class TmuxError(RuntimeError):
    """tmux refused a command or the app's pane went away."""


class Terminal:
    """One tmux session of ``width`` × ``height`` on a private server; use as a context manager."""

    def __init__(self, width: int = 120, height: int = 40) -> None:
        self.socket = f"tunaflow-bench-{uuid.uuid4().hex[:8]}"
        self.width, self.height = width, height
        self._lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self._client: subprocess.Popen[str] | None = None
        self._output_seen = threading.Event()

    # -- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> Terminal:
        self._tmux("new-session", "-d", "-s", "bench", "-x", str(self.width), "-y", str(self.height), "cat")
        self._tmux("set-option", "-t", "bench", "remain-on-exit", "on")
        self._tmux("set-option", "-t", "bench", "window-size", "manual")
        self._tmux("set-option", "-s", "escape-time", "0")
        self._client = subprocess.Popen(
            ["tmux", "-L", self.socket, "-C", "attach-session", "-t", "bench"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            encoding="utf-8", errors="replace", bufsize=1,
        )  # fmt: skip
        threading.Thread(target=self._read, daemon=True).start()
        self._answer("attach-session")  # tmux answers the attach itself first
        self.command("refresh-client", "-C", f"{self.width},{self.height}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None and self._client.stdin is not None:
            with contextlib.suppress(OSError):
                self._client.stdin.close()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
        if self._client is not None:
            self._client.wait(timeout=10)

    def _tmux(self, *args: str) -> str:
        out = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True)
        if out.returncode != 0:
            raise TmuxError(f"tmux {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def _read(self) -> None:
        assert self._client is not None and self._client.stdout is not None
        for line in self._client.stdout:
            now = time.perf_counter()
            if line.startswith("%output"):
                self._output_seen.set()
                continue  # what was written is read from the screen itself
            self._lines.put((now, line.rstrip("\n")))

    # -- commands --------------------------------------------------------------------------------

    def command(self, *args: str) -> tuple[float, list[str]]:
        """Run a tmux command over the control connection: (time tmux answered, its output lines)."""
        assert self._client is not None and self._client.stdin is not None
        self._client.stdin.write(" ".join(shlex.quote(a) for a in args) + "\n")
        self._client.stdin.flush()
        return self._answer(" ".join(args))

    def _answer(self, what: str) -> tuple[float, list[str]]:
        body: list[str] = []
        inside = False
        while True:
            stamp, line = self._lines.get(timeout=30)
            if line.startswith("%begin"):
                inside, body = True, []
            elif line.startswith("%end") and inside:
                return stamp, body
            elif line.startswith("%error") and inside:
                raise TmuxError(f"tmux {what}: {' '.join(body)}")
            elif line.startswith("%exit"):
                raise TmuxError("the tmux server went away")
            elif inside:
                body.append(line)

    def run(self, argv: list[str], env: Mapping[str, str]) -> float:
        """Start ``argv`` in the pane (replacing what ran there); returns the time it was started."""
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        line = f"exec env {exports} {' '.join(shlex.quote(a) for a in argv)}"
        if "\n" in line:
            raise ValueError("a control-mode command is one line: pass a script file, not code with newlines")
        self._output_seen.clear()
        started = time.perf_counter()
        self.command("respawn-pane", "-k", "-t", "bench", line)
        return started

    def pid(self) -> int:
        """The process running in the pane."""
        return int(self.command("display-message", "-p", "-t", "bench", "#{pane_pid}")[1][0])

    def rss_mb(self) -> float:
        """Resident memory of the pane's process (MB)."""
        with open(f"/proc/{self.pid()}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the pane's process has used so far."""
        with open(f"/proc/{self.pid()}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def send(self, *keys: str, literal: bool = False) -> float:
        """Press ``keys`` (tmux key names, or text with ``literal``); returns when tmux took them."""
        args = ["send-keys", "-t", "bench", *(["-l"] if literal else []), *keys]
        sent = time.perf_counter()
        self.command(*args)
        return sent

    def screen(self) -> tuple[float, list[str]]:
        """(time tmux answered, the visible lines)."""
        return self.command("capture-pane", "-p", "-t", "bench")

    def wait_for(self, shows: Callable[[list[str]], bool], timeout: float, poll: float = 0.05) -> float | None:
        """Look at the screen after every write of the app (and every ``poll`` s); the time it first
        ``shows`` what is waited for, or None after ``timeout`` seconds."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            self._output_seen.wait(poll)
            self._output_seen.clear()
            stamp, lines = self.screen()
            if shows(lines):
                return stamp
        return None

    def dead(self) -> bool:
        """True if the app in the pane has exited."""
        return self.command("display-message", "-p", "-t", "bench", "#{pane_dead}")[1][:1] == ["1"]


def env_for(root: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a benchmarked app runs in: user folders under ``root``, no TUNAFLOW_* settings."""
    keep = {k: v for k, v in os.environ.items() if not k.upper().startswith("TUNAFLOW_")}
    keep.update({"XDG_CONFIG_HOME": f"{root}/config", "XDG_DATA_HOME": f"{root}/data",
                 "XDG_STATE_HOME": f"{root}/state", "TERM": "tmux-256color", "COLORTERM": "truecolor"})
    keep.update(extra or {})
    return {k: v for k, v in keep.items() if k in _PASSED or k.startswith(("XDG_", "PYTHON", "LC_", "LANG"))}


_PASSED = frozenset({"PATH", "HOME", "TERM", "COLORTERM", "VIRTUAL_ENV", "TMPDIR", "USER"})
