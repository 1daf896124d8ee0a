"""`tunaflow doctor` run as a command with the fake CLIs (or nothing) on PATH (two tests in a process of its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tunaflow_cli import tunaflow

FAKES_BIN = Path(__file__).resolve().parents[2] / "fakes" / "bin"
PYTHON_DIR = str(Path(sys.executable).parent)


def doctor(tmp_path: Path, path: str, *args: str, in_process: bool = True, **env: str) -> subprocess.CompletedProcess[str]:
    """``tunaflow doctor ARGS PROJECT`` with only ``path`` on PATH and ``env``: in this process
    (``tunaflow_cli``, which gives it that environment) unless ``in_process`` is False."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    base = {"PATH": path, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    return tunaflow(["doctor", *args, str(project)], cwd=project, env={**base, **env}, in_process=in_process)


def test_finds_the_installed_clis_with_versions(tmp_path: Path) -> None:
    out = doctor(tmp_path, f"{FAKES_BIN}{os.pathsep}{PYTHON_DIR}", in_process=False, FAKE_CODEX_LOGGED_IN="1")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "2.1.197 (Claude Code)" in text and "codex-cli 0.171.0" in text and "(0.61.0)" in text
    assert "✓ codex: `codex login status` reports a login" in text
    assert "! claude: no credentials found" in text and "ANTHROPIC_API_KEY" in text
    assert "lacks" not in text  # the fakes print the real --help texts: every flag is there
    assert "SQLite" in text and "FTS5" in text
    assert "demo engine will be used" not in text


def test_json_report(tmp_path: Path) -> None:
    out = doctor(tmp_path, f"{FAKES_BIN}{os.pathsep}{PYTHON_DIR}", "--json", GEMINI_API_KEY="x" * 20,
                 COLORTERM="truecolor", TMUX="/tmp/tmux-0/default,1,0")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["core_ok"] is True
    assert set(report["engines_found"]) >= {"claude", "codex", "gemini"}
    checks = {(c["section"], c["name"]): c for c in report["checks"]}
    assert checks[("credentials", "gemini")]["status"] == "ok"
    assert checks[("credentials", "codex")]["status"] == "warn"
    assert checks[("terminal", "colours")]["detail"] == "truecolor"
    assert "tmux" in checks[("terminal", "session")]["detail"]


def test_nothing_installed_still_works_with_the_demo(tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    out = doctor(tmp_path, str(empty))
    assert out.returncode == 0, out.stderr
    assert "claude not found" in out.stdout and "gemini not found" in out.stdout
    assert "demo engine will be used" in out.stdout


def test_secret_values_are_never_printed(tmp_path: Path) -> None:
    secret = "sk-ant-do-not-print-me-0123456789"
    for args in ((), ("--json",)):
        out = doctor(tmp_path, f"{FAKES_BIN}{os.pathsep}{PYTHON_DIR}", *args, in_process=False,
                     ANTHROPIC_API_KEY=secret, CODEX_API_KEY=secret, GEMINI_API_KEY=secret)
        assert out.returncode == 0, out.stderr
        assert "ANTHROPIC_API_KEY set" in out.stdout
        assert secret not in out.stdout + out.stderr


def test_a_cli_missing_a_flag_is_reported(tmp_path: Path) -> None:
    old = tmp_path / "old-bin"
    old.mkdir()
    script = old / "gemini"
    script.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 0.10.0; exit 0; fi\n"
                      "echo '  -m, --model   Model'\necho '  -o, --output-format  Format'\n", encoding="utf-8")
    script.chmod(0o755)
    out = doctor(tmp_path, f"{old}{os.pathsep}{PYTHON_DIR}")
    assert "! gemini: this version lacks" in out.stdout
    assert "--skip-trust" in out.stdout and "--session-id" in out.stdout
