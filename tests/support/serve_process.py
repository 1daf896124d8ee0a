"""A `tunaflow serve` in its own process, as a user starts it, and the address with the token it prints."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.Popen(
        [sys.executable, "-m", "tunaflow_tui", "serve", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env,
    )


class Served:
    """A running `tunaflow serve` and the address with the token it printed."""

    def __init__(self, process: subprocess.Popen[str], port: int, timeout: float = 30.0) -> None:
        self.process, self.port = process, port
        self.lines: list[str] = []
        found = threading.Event()

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                self.lines.append(line)
                if "?token=" in line:
                    found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(timeout):
            stop(process)
            err = process.stderr.read() if process.stderr else ""
            pytest.fail(f"tunaflow serve printed no address with a token: {self.lines} {err}")
        match = re.search(r"(http://\S+/\?token=(\S+))", "".join(self.lines))
        assert match
        self.url, self.token = match.group(1), match.group(2)
        self.base = f"http://127.0.0.1:{port}"
        self.origin = self.base


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
