"""Closing the terminal window of the app (SIGHUP) ends the agent it runs and records the interruption."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from run_phases import group_alive, kill_groups, pids, query, script_phase
from runtime_harness import make_harness
from waiting import HANG_LIMIT

pytestmark = pytest.mark.e2e


def _parent_of(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[1])


def _wait(condition: Callable[[], bool], what: str, timeout: float = HANG_LIMIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_closing_the_window_stops_an_agent_that_ignores_sigterm(
        tmux: Callable[[int, int], Any], e2e_env: dict[str, str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    harness = make_harness(tmp_path / "scripted", monkeypatch)
    run = script_phase(harness, "architect", ignore_sigterm=True)
    e2e_env.update(harness.env())
    session = tmux(100, 30)
    session.start([sys.executable, "-m", "tunaflow_tui", str(harness.project), "--no-mouse"], harness.project)
    session.wait_for("→")  # the composer names who gets the message
    session.send_text("Please add multiplication")
    session.press("Enter")
    agent: list[int] = []
    try:
        _wait(lambda: all(p.exists() and p.read_text().strip() for p in run.started), "the agent to start")
        agent = pids(run)
        app = _parent_of(agent[0])
        _wait(lambda: bool(query(harness, "SELECT id FROM messages WHERE status = 'streaming' AND content != ''")),
              "the agent's first paragraph to be stored")

        session.kill_window()

        _wait(lambda: not Path(f"/proc/{app}").exists(), "the app to end")
        _wait(lambda: not group_alive(agent[0]), "the agent's process group to end")
    finally:
        kill_groups(agent)
    rows = query(harness, "SELECT status, error_message, content FROM messages WHERE role = 'assistant'")
    assert [(status, error) for status, error, _content in rows] == [
        ("interrupted", "stopped: the terminal was closed (SIGHUP)")]
    assert rows[0][2].strip(), "what the agent had written is kept"
    assert query(harness, "SELECT * FROM running_processes") == []


def _app_pid(project: Path) -> int | None:
    """The tunaflow process that has ``project`` open (found by its command line)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[1:3] == [b"-m", b"tunaflow_tui"] and str(project).encode() in argv:
            return int(entry.name)
    return None


@pytest.mark.embeddings  # the embedding backlog is what keeps it drawing
def test_closing_the_window_while_the_app_keeps_drawing_ends_it_and_frees_the_project(
        tmux: Callable[[int, int], Any], e2e_env: dict[str, str], tmp_path: Path) -> None:
    """The embedding backlog of a long conversation keeps the status line redrawing when the terminal
    goes: the app still ends (the last writes of its exit go nowhere) and the next start owns the project."""
    import fcntl
    import subprocess

    from tunaflow_tui.core.storage import Store

    project = tmp_path / "long-project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                    "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    with Store.open(project) as store:
        store.add_messages("main", (
            {"role": "user" if n % 2 else "assistant",
             "content": f"Message {n}: the parser keeps its state between chunks, and test {n} covers it."}
            for n in range(3000)))
    session = tmux(100, 30)
    session.start([sys.executable, "-m", "tunaflow_tui", str(project)], project)  # the mouse on, as by default
    # the app is up with a backlog to embed in the background (its memory line redraws once the embedding
    # worker reports, which on a loaded machine may take a while): the terminal goes while it works
    session.wait_for("long-project")
    app = _app_pid(project)
    assert app is not None

    session.close()  # the terminal goes: its server and the pty with it

    _wait(lambda: not Path(f"/proc/{app}").exists(), "the app to end")
    with (project / ".tunaflow" / "owner.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if a process still owns the project
