"""Fixtures for the workflow runtime tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_harness import Harness, make_harness


@pytest.fixture
def harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Harness:
    """A scripted project with a real pytest suite and claude/codex stand-ins."""
    return make_harness(tmp_path, monkeypatch)
