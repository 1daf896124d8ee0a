"""`tunaflow doctor` asks the ACP agents it finds who they are and whether the user is signed in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from acp_rig import CAPTURES, FAKE_AGENT

PYTHON_DIR = str(Path(sys.executable).parent)


def doctor_with(tmp_path: Path, **agents: str) -> str:
    """`tunaflow doctor`'s report with stand-in agents on PATH (binary name → capture it replays)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, capture in agents.items():
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\nexport FAKE_ACP_CAPTURE='{CAPTURES / (capture + '.jsonl')}'\n"
                          f"exec '{sys.executable}' '{FAKE_AGENT}' \"$@\"\n")
        script.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "project").mkdir()
    env = {"PATH": f"{bin_dir}{os.pathsep}{PYTHON_DIR}", "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-m", "tunaflow_tui", "doctor", str(tmp_path / "project")], env=env,
                         capture_output=True, text=True, timeout=120, cwd=tmp_path / "project")
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_doctor_lists_acp_agents_with_their_sign_in_state(tmp_path: Path) -> None:
    text = doctor_with(tmp_path, **{"codex-acp": "codex-nocreds", "claude-code-acp": "claude-fake-ok"})
    assert "codex-acp" in text and "(ACP: Codex 0.16.0)" in text
    assert "not signed in: Authentication required" in text
    assert "Use CODEX_API_KEY: set CODEX_API_KEY" in text
    assert "(ACP: Claude Code 0.16.2)" in text and "the agent opens a session" in text


def test_an_acp_agent_alone_does_not_hide_that_the_roles_use_the_demo(tmp_path: Path) -> None:
    text = doctor_with(tmp_path, **{"codex-acp": "codex-nocreds"})
    assert "(ACP: Codex 0.16.0)" in text
    assert "demo engine will be used" in text  # no role runs on an ACP agent until one is named
