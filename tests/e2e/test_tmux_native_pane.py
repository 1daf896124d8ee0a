"""A native CLI live in the pane, in a real terminal (tmux): the stand-in TUI configured as claude resumes the
conversation's session inside tunaflow, takes typed keys, gives the focus back with ctrl+], and ends with the app."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from terminal_rig import TTY_APP
from waiting import until_sync

from tunaflow_tui.core.storage import Store

pytestmark = pytest.mark.e2e


def _project(tmp_path: Path) -> Path:
    """A git project whose main conversation has a claude session to resume."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("hello\n", encoding="utf-8")
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                 ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "start"]):
        subprocess.run(argv, cwd=project, check=True)
    store = Store.open(project)
    try:
        store.set_native_session("main", "claude", "sess-e2e")
    finally:
        store.close()
    return project


def test_a_native_session_opens_in_the_pane_and_takes_typed_keys(
        tmux: Callable[[int, int], Any], e2e_env: dict[str, str], tmp_path: Path) -> None:
    project = _project(tmp_path)
    claude = tmp_path / "claude"
    claude.write_text(f"#!/bin/sh\nexec {sys.executable} {TTY_APP} \"$@\"\n", encoding="utf-8")
    claude.chmod(0o755)
    config = Path(e2e_env["XDG_CONFIG_HOME"]) / "tunaflow" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[engines.claude]\ntype = "claude"\ncommand = "{claude}"\n', encoding="utf-8")
    pidfile = tmp_path / "cli.pid"
    e2e_env["TTY_APP_PIDFILE"] = str(pidfile)

    session = tmux(140, 40)
    session.start([sys.executable, "-m", "tunaflow_tui", str(project), "--no-mouse"], tmp_path)
    # the project is open and laid out: the composer names its recipient, the footer ends with the palette
    session.wait_for(lambda s: "→ Architect" in s and "└── Main" in s and any(
        line.rstrip().endswith("palette") for line in s.splitlines()))
    session.press("C-p")
    session.wait_for("Search for commands")
    session.send_text("Open native CLI")
    session.wait_for(lambda s: "Continue this conversation" in s)
    session.press("Enter")
    screen = session.wait_for(lambda s: "tty-app --resume sess-e2e" in s and "ready" in s)
    assert "Traceback" not in screen

    session.send_text("z")
    session.wait_for("key: b'z'")
    session.press("Up")
    session.wait_for("key: b'\\x1b[A'")
    session.press("C-g")  # tunaflow's decision key: the CLI's while its pane has the focus
    session.wait_for("key: b'\\x07'")

    session.press("C-]")  # back to tunaflow; the CLI runs on
    session.send_text("typed in tunaflow")
    screen = session.wait_for("typed in tunaflow")
    assert "key: b't'" not in screen
    pid = int(pidfile.read_text())
    os.kill(pid, 0)  # still running

    session.press("C-q")
    assert session.wait_exit(timeout=30) == 0, session.screen()

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    until_sync(gone, "the native CLI ended with the app", limit=15)
