"""How values the records hold are stored in TEXT columns: timestamps, JSON lists and mappings, tool lines.

Each kind of column is a peewee field that converts both ways, so rows read through the models
already hold the values the records take (a timezone-aware datetime, a tuple, a read-only
mapping), and writes accept them as they are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from peewee import TextField

from tunaflow_tui.core.turns import ToolLine

MAX_STORED_TOOLS = 500
"""A turn that used more tools keeps its latest ones."""
MAX_TOOL_DETAIL = 300


def now_text() -> str:
    """The current UTC time as stored in the database (ISO 8601 with offset)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def parse_time(text: str) -> datetime:
    """A stored timestamp as a timezone-aware UTC datetime."""
    value = datetime.fromisoformat(text)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def dump_list(values: Sequence[str]) -> str:
    """Encode a list of strings for a JSON column."""
    return json.dumps([str(v) for v in values], ensure_ascii=False)


def load_list(text: str | None) -> tuple[str, ...]:
    """Decode a JSON list column into a tuple of strings."""
    data = json.loads(text) if text else []
    return tuple(str(v) for v in data) if isinstance(data, list) else ()


def dump_mapping(values: Mapping[str, object] | None) -> str:
    """Encode a mapping for a JSON column (ValueError if it is not JSON-serialisable)."""
    try:
        return json.dumps(dict(values or {}), ensure_ascii=False, sort_keys=True)
    except TypeError as exc:
        raise ValueError(f"detail must be JSON-serialisable: {exc}") from exc


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def load_mapping(text: str | None) -> Mapping[str, object]:
    """Decode a JSON column into a read-only mapping (nested lists become tuples)."""
    data = json.loads(text) if text else {}
    frozen: Mapping[str, object] = _frozen(data if isinstance(data, dict) else {})
    return frozen


def dump_tools(tools: Sequence[ToolLine]) -> str:
    """Tool lines as stored: at most :data:`MAX_STORED_TOOLS`, each detail cut to :data:`MAX_TOOL_DETAIL`."""
    kept = list(tools)[-MAX_STORED_TOOLS:]
    return json.dumps([[t.name[:MAX_TOOL_DETAIL], t.detail[:MAX_TOOL_DETAIL]] for t in kept], ensure_ascii=False)


def load_tools(text: str | None) -> tuple[ToolLine, ...]:
    """The stored JSON (``[[name, detail], ...]``) as tool lines; anything unreadable is skipped."""
    try:
        items = json.loads(text or "[]")
    except ValueError:
        return ()
    if not isinstance(items, list):
        return ()
    return tuple(
        ToolLine(str(item[0]), str(item[1]) if len(item) > 1 else "")
        for item in items
        if isinstance(item, list) and item
    )


class TimestampField(TextField):
    """A moment, stored as ISO 8601 text and read as a timezone-aware UTC datetime."""

    def db_value(self, value: datetime | str | None) -> str | None:
        if isinstance(value, datetime):
            stamp = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
            return stamp.isoformat(timespec="microseconds")
        return value

    def python_value(self, value: str | None) -> datetime | None:
        return None if value is None else parse_time(value)


class JSONListField(TextField):
    """A list of strings as JSON text, read as a tuple."""

    def db_value(self, value: Sequence[str] | None) -> str | None:
        return None if value is None else dump_list(value)

    def python_value(self, value: str | None) -> tuple[str, ...]:
        return load_list(value)


class JSONMappingField(TextField):
    """A JSON object, read as a read-only mapping (nested lists as tuples); ValueError if unserialisable."""

    def db_value(self, value: Mapping[str, object] | None) -> str:
        return dump_mapping(value)

    def python_value(self, value: str | None) -> Mapping[str, object]:
        return load_mapping(value)


class ToolLinesField(TextField):
    """The tools a turn used, as a bounded JSON list (see :func:`dump_tools`)."""

    def db_value(self, value: Sequence[ToolLine] | None) -> str:
        return dump_tools(value or ())

    def python_value(self, value: str | None) -> tuple[ToolLine, ...]:
        return load_tools(value)
