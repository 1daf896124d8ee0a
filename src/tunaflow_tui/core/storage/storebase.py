"""What every part of the store shares: the database access, the project id and row helpers."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import peewee

from tunaflow_tui.core.storage.access import DatabaseAccess
from tunaflow_tui.core.storage.columns import now_text
from tunaflow_tui.core.storage.models import ConversationRow
from tunaflow_tui.core.storage.rows import Row

MAIN_CONVERSATION_ID = "main"


def first_row(query: Any, db: peewee.Database) -> Row | None:
    """The first row of a select query as a dict, or None."""
    for row in query.limit(1).dicts().execute(db):
        found: Row = row
        return found
    return None


def all_rows(query: Any, db: peewee.Database) -> list[Row]:
    """Every row of a select query as dicts."""
    return list(query.dicts().execute(db))


def select_columns(model: type[peewee.Model]) -> str:
    """Every column of ``model``'s table, quoted and comma-separated, for a plain-SQL ``SELECT``."""
    return ", ".join(f'"{field.column_name}"' for field in model._meta.sorted_fields)


def model_rows(db: peewee.Database, model: type[peewee.Model], sql: str, params: Sequence[object]) -> list[Row]:
    """The rows of a plain-SQL select of ``model``'s columns, as :func:`all_rows` gives them.

    For the reads every pack and chat page makes: building the statement with peewee and
    iterating its cursor cost three times SQLite's own work. Values go through each column's
    ``python_value``, exactly as peewee converts them.
    """
    cursor = db.execute_sql(sql, list(params))  # type: ignore[no-untyped-call]
    columns = model._meta.columns
    fields = [(name, columns[name].python_value) for name, *_rest in cursor.description]
    return [{name: convert(value) for (name, convert), value in zip(fields, row, strict=True)}
            for row in cursor.fetchall()]


def require_choice(name: str, value: str, allowed: Collection[str]) -> None:
    """Raise ValueError unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        choices = ", ".join(sorted(allowed))
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")


class StoreBase:
    """State shared by the parts of :class:`~tunaflow_tui.core.storage.Store`."""

    _db: DatabaseAccess
    _project_id: int

    def _ensure_conversation(
        self, db: peewee.Database, conversation_id: str, *, branch_id: int | None = None
    ) -> None:
        """Create the conversation row if missing (only ``main`` and branch shadows are created here)."""
        exists = first_row(
            ConversationRow.select(ConversationRow.id).where(ConversationRow.id == conversation_id), db
        )
        if exists is not None:
            return
        if conversation_id != MAIN_CONVERSATION_ID and branch_id is None:
            raise ValueError(f"unknown conversation {conversation_id!r}")
        ConversationRow.insert(
            id=conversation_id,
            project_id=self._project_id,
            branch_id=branch_id,
            created_at=now_text(),
        ).execute(db)
