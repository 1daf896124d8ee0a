"""A package's re-exported names, each loaded from its module the first time it is asked for (PEP 562).

Packages whose modules are slow to import (the workflow machine, the app's controllers) list what
they re-export here instead of importing it, so that importing one light module of theirs does not
load the others before the window's first frame.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(package: str, homes: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``.

    Args:
        package: The package's ``__name__``.
        homes: Each re-exported name and the module it lives in (absolute, or relative to ``package``
            with a leading dot).

    Returns:
        The package's ``__getattr__`` (imports the name's module, keeps the name in the package) and
        ``__dir__`` (the names defined and the names it can load).
    """
    namespace = import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
