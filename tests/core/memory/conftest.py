"""Fixtures for the memory-engine tests: the real embedding model, loaded once per run."""

from __future__ import annotations

import importlib.util

import pytest

from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.model_files import MODEL_PACKAGE, MODEL_REQUIREMENT


def model_package_installed() -> bool:
    """Whether the pinned model package is installed (it is a dependency, so normally yes)."""
    return importlib.util.find_spec(MODEL_PACKAGE) is not None


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real model, loaded once. Skipped only when the package is absent; a broken one fails."""
    if not model_package_installed():
        pytest.skip(f"the embedding model package is not installed (pip install {MODEL_REQUIREMENT})")
    loaded = Embedder(env={})  # ignore a TUNAFLOW_EMBEDDING_MODEL set in the developer's shell
    loaded.load()  # raises EmbeddingUnavailable — an error, not a skip — when the package is broken
    return loaded
