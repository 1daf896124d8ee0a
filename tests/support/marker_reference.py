"""The reference marker parser (``tests/core/markers/reference_parser/``), loaded once per process.

It is the parser as it stood before its shared line pass, kept as it was so the differential tests can
compare the parser with it; it is imported under its own name so it never shadows the real package.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_NAME = "tunaflow_markers_reference"
_FOLDER = Path(__file__).resolve().parents[1] / "core" / "markers" / "reference_parser"


def load_reference() -> ModuleType:
    """The reference parser package (its modules as attributes: ``sections``, ``proposal``, …)."""
    if _NAME in sys.modules:
        return sys.modules[_NAME]
    spec = importlib.util.spec_from_file_location(_NAME, _FOLDER / "__init__.py", submodule_search_locations=[str(_FOLDER)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[_NAME] = module
    spec.loader.exec_module(module)
    return module


REFERENCE = load_reference()
