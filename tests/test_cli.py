"""The command line skeleton: every subcommand exists and --help works."""

from __future__ import annotations

import subprocess
import sys

from tunaflow_tui.cli import SUBCOMMANDS


def test_help_lists_every_subcommand() -> None:
    out = subprocess.run([sys.executable, "-m", "tunaflow_tui", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for name in ("demo", "run", "status", "doctor", "parse", "export", "serve"):
        assert name in out.stdout
    assert set(SUBCOMMANDS) >= {"open", "demo", "run", "status", "doctor", "parse", "export", "serve"}


def test_version() -> None:
    out = subprocess.run([sys.executable, "-m", "tunaflow_tui", "--version"], capture_output=True, text=True)
    assert out.returncode == 0
    assert out.stdout.startswith("tunaflow ")
