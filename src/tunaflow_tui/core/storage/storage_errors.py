"""The one exception the store raises for failures a user must be told about."""

from __future__ import annotations


class StorageError(Exception):
    """A database operation failed (disk full, read-only file, corrupt database); the message is for humans."""
