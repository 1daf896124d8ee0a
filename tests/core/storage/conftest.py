"""Fixtures for the storage tests: a fresh project directory and an open store on it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tunaflow_tui.core.storage import Store


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """An empty project directory (not a git repository)."""
    path = tmp_path / "proj"
    path.mkdir()
    return path


@pytest.fixture
def store(project_dir: Path) -> Iterator[Store]:
    """An open store on ``project_dir``, closed after the test."""
    with Store.open(project_dir) as opened:
        yield opened
