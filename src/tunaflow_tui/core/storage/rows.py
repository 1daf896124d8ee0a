"""Database rows as the immutable records: one converter per record, built from the record's fields.

Rows are read through the models, whose fields already turn stored text into the values the
records hold (see ``columns.py``), so a record is filled field by field from the row of the same
name; a converter names only what a record computes (``MessageRecord.usage``, a plan's subtasks).
A test checks that every record field has its column.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any, TypeVar

from tunaflow_tui.core.storage.message_parse import StoredParse, parse_message
from tunaflow_tui.core.storage.records import (
    BranchRecord,
    ConversationRecord,
    MemoRecord,
    MessageRecord,
    PlanEventRecord,
    PlanRecord,
    ProjectRecord,
    SessionLinkRecord,
    SubtaskRecord,
)
from tunaflow_tui.core.turns import Usage

Row = Mapping[str, Any]
_R = TypeVar("_R")


@cache
def record_fields(record_type: type) -> tuple[str, ...]:
    """The field names of a record dataclass, in order."""
    return tuple(field.name for field in dataclasses.fields(record_type))


def from_row(record_type: Callable[..., _R], row: Row, **computed: object) -> _R:
    """A ``record_type`` whose fields are the row's values of the same name, except those in ``computed``."""
    names = record_fields(record_type)
    return record_type(**{name: row[name] for name in names if name not in computed}, **computed)


def project_record(row: Row) -> ProjectRecord:
    """A ``projects`` row as a record."""
    return from_row(ProjectRecord, row)


def conversation_record(row: Row) -> ConversationRecord:
    """A ``conversations`` row as a record."""
    return from_row(ConversationRecord, row)


def message_record(row: Row) -> MessageRecord:
    """A ``messages`` row as a record: the four usage columns become one :class:`Usage`, and the
    stored parse (``parsed``) the display text and marker summaries."""
    usage = Usage(row["input_tokens"], row["output_tokens"], row["cached_tokens"], row["cost_usd"])
    content: str = row["content"]
    parse: StoredParse | None = row["parsed"]
    if row["status"] == "streaming":
        parse = StoredParse(None)
    elif parse is None:  # only a row written around the store lacks it: parse it now, without storing
        parse = parse_message(row["role"], row["persona"], content)
    display_text = content if parse.display_text is None else parse.display_text
    return from_row(MessageRecord, row, usage=usage, display_text=display_text, markers=parse.markers)


def branch_record(row: Row) -> BranchRecord:
    """A ``branches`` row as a record."""
    return from_row(BranchRecord, row)


def subtask_record(row: Row) -> SubtaskRecord:
    """A ``plan_subtasks`` row as a record (the ``position`` column is the subtask's ``index``)."""
    return from_row(SubtaskRecord, row, index=row["position"])


def plan_record(row: Row, subtasks: Sequence[Row]) -> PlanRecord:
    """A ``plans`` row and its subtask rows as a record."""
    return from_row(PlanRecord, row, subtasks=tuple(subtask_record(s) for s in subtasks))


def plan_event_record(row: Row) -> PlanEventRecord:
    """A ``plan_events`` row as a record."""
    return from_row(PlanEventRecord, row)


def memo_record(row: Row) -> MemoRecord:
    """A ``memos`` row as a record."""
    return from_row(MemoRecord, row)


def session_link_record(row: Row) -> SessionLinkRecord:
    """A ``session_links`` row as a record."""
    return from_row(SessionLinkRecord, row)
