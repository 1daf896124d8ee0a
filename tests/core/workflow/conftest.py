"""Fixtures for the workflow tests: an open store on a fresh project directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tunaflow_tui.core.storage import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """An open store (the project's owner) on an empty project directory, closed after the test."""
    project = tmp_path / "project"
    project.mkdir()
    with Store.open(project) as opened:
        yield opened
