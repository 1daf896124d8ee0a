"""Persistence: one SQLite database per project (WAL, one writer, FTS5, forward migrations).

``Store`` and ``StorageError`` are loaded on first use: importing one light module of the package
(the search syntax's snippet marks, which the app's record cards draw) does not load the store,
peewee and the marker parser before the window's first frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tunaflow_tui.core.lazy_names import lazy_names

if TYPE_CHECKING:
    from tunaflow_tui.core.storage.storage_errors import StorageError
    from tunaflow_tui.core.storage.store import Store

__all__ = ["StorageError", "Store"]

_HOMES = {
    "StorageError": "tunaflow_tui.core.storage.storage_errors",
    "Store": "tunaflow_tui.core.storage.store",
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
