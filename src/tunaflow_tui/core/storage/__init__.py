"""Persistence: one SQLite database per project (WAL, one writer, FTS5, forward migrations)."""

from tunaflow_tui.core.storage.storage_errors import StorageError
from tunaflow_tui.core.storage.store import Store

__all__ = ["StorageError", "Store"]
