"""A credential an agent prints one character per piece reaches no screen, stdout, database, export or search.

The stand-in is the fake `claude` replaying its captured stream's shape with the reply dripped one
character per text delta; the credential is in the environment `tunaflow ask` runs in, as an API key
would be. The turn ends normally, crashes in the middle of the credential, times out there, or is
stopped by the user there: in no case may any part of it (4+ characters) be kept anywhere.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from waiting import until_sync

pytestmark = pytest.mark.e2e

FAKES_BIN = Path(__file__).resolve().parents[1] / "fakes" / "bin"
CANARY = "canary-7f3Qx9LmZ2pWv8Rk"
HALF = CANARY[: len(CANARY) // 2]


def _project(tmp_path: Path, scenario: str) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "project"
    (project / ".tunaflow").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".tunaflow" / "config.toml").write_text(
        "[roles]\narchitect = \"fclaude\"\n\n"
        f"[engines.fclaude]\ntype = \"claude\"\ncommand = \"{FAKES_BIN / 'claude'}\"\ntimeout_idle_s = 3\n",
        encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "FAKE_CLI_SCENARIO": scenario, "LEAKY_API_KEY": CANARY,
           "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"), "XDG_DATA_HOME": str(tmp_path / "xdg-data"), "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
           "TUNAFLOW_MEMORY__EMBEDDINGS": "false"}
    return project, env


def _tunaflow(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tunaflow_tui", *args], capture_output=True, text=True,
                          encoding="utf-8", timeout=120, env=env, cwd=project)


def _leaks(text: str | bytes) -> list[str]:
    """The parts of the canary (whole, or its first half) found in ``text``."""
    found = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return [part for part in (CANARY, HALF, CANARY[-8:]) if part in found]


def _assert_kept_nowhere(project: Path, env: dict[str, str]) -> str:
    """No part of the canary in the database files, an export or a search; the stored reply."""
    state = project / ".tunaflow"
    for name in ("state.db", "state.db-wal", "state.db-journal"):
        if (state / name).exists():
            assert _leaks((state / name).read_bytes()) == [], name
    exported = _tunaflow(project, env, "export", str(project))
    assert exported.returncode == 0, exported.stderr
    assert "Your key is" in exported.stdout
    assert _leaks(exported.stdout + exported.stderr) == []
    found = _tunaflow(project, env, "search", str(project), "key", "--mode", "fts", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert [hit["role"] for hit in hits] == ["user", "assistant"] or [h["role"] for h in hits] == ["assistant", "user"]
    assert _leaks(found.stdout + found.stderr) == []
    for query in (CANARY, HALF):  # the query is echoed back; what matters is that nothing is found
        found = _tunaflow(project, env, "search", str(project), query, "--mode", "fts", "--json")
        assert json.loads(found.stdout)["hits"] == [], query
    with sqlite3.connect(state / "state.db") as db:
        (content, error), = db.execute(
            "select content, coalesce(error_message, '') from messages where role = 'assistant'").fetchall()
    return f"{content}\n{error}"


def test_a_dripped_credential_never_reaches_stdout_or_storage(tmp_path: Path) -> None:
    project, env = _project(tmp_path, "drip")
    out = _tunaflow(project, env, "ask", str(project), "what is my key?", "--trust")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Your key is *** - keep it safe.\n"
    assert _leaks(out.stderr) == []
    assert "Your key is *** - keep it safe." in _assert_kept_nowhere(project, env)


@pytest.mark.parametrize("scenario", ["drip-crash", "drip-hang"])
def test_a_turn_that_ends_mid_credential_keeps_none_of_it(tmp_path: Path, scenario: str) -> None:
    project, env = _project(tmp_path, scenario)
    out = _tunaflow(project, env, "ask", str(project), "what is my key?", "--trust")
    assert out.returncode != 0
    assert _leaks(out.stdout + out.stderr) == []
    assert out.stdout.startswith("Your key is ***")
    stored = _assert_kept_nowhere(project, env)
    assert stored.startswith("Your key is ***")


def test_a_turn_stopped_by_the_user_mid_credential_keeps_none_of_it(tmp_path: Path) -> None:
    project, env = _project(tmp_path, "drip-hang")
    env = {**env, "FAKE_CLI_LOG": str(tmp_path / "calls.jsonl")}
    process = subprocess.Popen([sys.executable, "-m", "tunaflow_tui", "ask", str(project), "what is my key?", "--trust"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=project)
    try:
        database = project / ".tunaflow" / "state.db"

        def streamed() -> bool:
            if not database.exists():
                return False
            try:
                with sqlite3.connect(database) as db:
                    rows = db.execute("select content from messages where role = 'assistant'").fetchall()
            except sqlite3.OperationalError:  # the schema is still being made
                return False
            return bool(rows) and rows[0][0].startswith("Your key is")

        until_sync(streamed, "the reply streaming into the database")
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert _leaks(out + err) == []
    # what was held back to decide whether it is a credential is dropped, not stored
    assert _assert_kept_nowhere(project, env).startswith("Your key is")
