"""An isolated environment for configuration tests: tmp config dirs, no TUNAFLOW_* vars, empty PATH."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """XDG dirs under tmp, no agent CLI on PATH, no TUNAFLOW_* env vars; returns the user config dir."""
    for name in list(os.environ):
        if name.upper().startswith("TUNAFLOW_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    user_dir = tmp_path / "xdg-config" / "tunaflow"
    user_dir.mkdir(parents=True)
    return user_dir
