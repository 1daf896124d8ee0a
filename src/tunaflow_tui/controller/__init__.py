"""Where the runtime, the store and the widgets meet: the app's controller and its data sources.

The names are loaded on first use, so that opening the app does not import the workflow runtime
before the first frame (see :mod:`tunaflow_tui.controller.opener`).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tunaflow_tui.controller.opener import ProjectOpener
    from tunaflow_tui.controller.runtime_controller import RuntimeController
    from tunaflow_tui.controller.sources import StoreMessageSource, message_view

__all__ = ["ProjectOpener", "RuntimeController", "StoreMessageSource", "message_view"]

_HOMES = {
    "ProjectOpener": "tunaflow_tui.controller.opener",
    "RuntimeController": "tunaflow_tui.controller.runtime_controller",
    "StoreMessageSource": "tunaflow_tui.controller.sources",
    "message_view": "tunaflow_tui.controller.sources",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(home), name)
