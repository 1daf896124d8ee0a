"""Records and models agree, and each record's converter turns a stored row into exactly that record."""

from __future__ import annotations

import dataclasses
import sqlite3
import typing
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
from peewee import FloatField, IntegerField, Model, TextField

from tunaflow_tui.core.markers import MarkerSummary
from tunaflow_tui.core.storage import Store, rows
from tunaflow_tui.core.storage.columns import JSONListField, JSONMappingField, TimestampField, ToolLinesField
from tunaflow_tui.core.storage.message_parse import ParsedField, StoredParse
from tunaflow_tui.core.storage.models import (
    BranchRow,
    ConversationRow,
    MemoRow,
    MessageRow,
    PlanEventRow,
    PlanRow,
    ProjectRow,
    SessionLinkRow,
    SubtaskRow,
)
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
from tunaflow_tui.core.storage.storebase import first_row
from tunaflow_tui.core.turns import ToolLine, Usage

# (model, record, record fields the converter computes, columns those fields are computed from)
PAIRS: list[tuple[type[Model], type, set[str], set[str]]] = [
    (ProjectRow, ProjectRecord, set(), set()),
    (ConversationRow, ConversationRecord, set(), set()),
    (MessageRow, MessageRecord, {"usage", "display_text", "markers"},
     {"input_tokens", "output_tokens", "cached_tokens", "cost_usd", "parsed"}),
    (BranchRow, BranchRecord, set(), set()),
    (SubtaskRow, SubtaskRecord, {"index"}, {"position"}),
    (PlanRow, PlanRecord, {"subtasks"}, set()),
    (PlanEventRow, PlanEventRecord, set(), set()),
    (MemoRow, MemoRecord, set(), set()),
    (SessionLinkRow, SessionLinkRecord, set(), set()),
]

_PYTHON_TYPE: dict[type, Any] = {
    ParsedField: StoredParse,
    TimestampField: datetime,
    JSONListField: tuple[str, ...],
    JSONMappingField: Mapping[str, object],
    ToolLinesField: tuple[ToolLine, ...],
    IntegerField: int,
    FloatField: float,
    TextField: str,
}


def _python_type(field: Any) -> Any:
    base = next(_PYTHON_TYPE[kind] for kind in type(field).__mro__ if kind in _PYTHON_TYPE)
    return base | None if field.null and not field.primary_key else base


@pytest.mark.parametrize(("model", "record", "computed", "sources"), PAIRS, ids=lambda p: getattr(p, "__name__", ""))
def test_every_record_field_is_a_column_of_the_same_type(
    model: type[Model], record: type, computed: set[str], sources: set[str]
) -> None:
    columns = {name: field for name, field in model._meta.fields.items()}  # type: ignore[attr-defined]
    hints = typing.get_type_hints(record)
    fields = {f.name for f in dataclasses.fields(record)}
    assert fields - computed == set(columns) - sources, "a column without a record field, or the reverse"
    for name in fields - computed:
        assert hints[name] == _python_type(columns[name]), name


def _connect(store: Store) -> sqlite3.Connection:
    return sqlite3.connect(store.path, isolation_level=None)


STAMP = "2024-05-01T10:00:00.250000+02:00"
MOMENT = datetime(2024, 5, 1, 8, 0, 0, 250000, tzinfo=UTC)


def _seed(store: Store) -> None:
    """One row in every table, every column set (through SQL, as any older tunaflow may have written it)."""
    conn = _connect(store)
    statements = [
        ("INSERT INTO conversations VALUES ('main', 1, NULL, 'sess', 'claude', ?)", (STAMP,)),
        ("INSERT INTO messages VALUES (7, 'main', 'assistant', 'developer', 'codex', 'gpt-5', 'error', 'text',"
         " 'thread', 'crashed', 'boom', ?, ?, 10, 20, 5, 0.25, '[[\"Edit\", \"a.py\"], [\"Bash\"]]',"
         " '{\"display_text\": \"shown\", \"markers\": [{\"kind\": \"impl-complete\", \"accepted\": false,"
         " \"text\": \"Implementation complete\"}]}', '{\"kind\": \"branch_adopt\", \"ids\": [1]}')",
         (STAMP, STAMP)),
        ("INSERT INTO branches VALUES (3, 'main', 7, NULL, 'roundtable', 'review', 'lbl', 'adopted', 'gb', 'wt',"
         " 'es', ?, ?, 'fclaude', 'native_fork')", (STAMP, STAMP)),
        ("INSERT INTO plans VALUES (4, 1, 'T', 's', 'd', 'o', '[\"c\"]', '[\"n\", \"m\"]', 'review', 'dev', 'review',"
         " '{\"round\": 2, \"seats\": [\"a\"]}', 1, 2, 7, 3, NULL, 'main', 'g', 'w', ?, ?)", (STAMP, STAMP)),
        ("INSERT INTO plan_subtasks VALUES (4, 2, 'second', 'more', 'done')", ()),
        ("INSERT INTO plan_subtasks VALUES (4, 1, 'first', '', 'failed')", ()),
        ("INSERT INTO plan_events VALUES (5, 4, 'approved', 'user', '{\"k\": [1, {\"x\": null}]}', ?)", (STAMP,)),
        ("INSERT INTO memos VALUES (6, 'brief', 'c', 'main', 3, 4, ?)", (STAMP,)),
        ("INSERT INTO session_links VALUES (8, 'main', 'main', 'adopted', 'note', ?)", (STAMP,)),
    ]
    try:
        for sql, params in statements:
            conn.execute(sql, params)
    finally:
        conn.close()


CASES: list[tuple[Any, Any, Callable[..., Any], object]] = [
    (ProjectRow, ProjectRow.id == 1, rows.project_record, None),
    (ConversationRow, ConversationRow.id == "main", rows.conversation_record,
     ConversationRecord("main", 1, None, "sess", "claude", MOMENT)),
    (MessageRow, MessageRow.id == 7, rows.message_record, MessageRecord(
        7, "main", "assistant", "developer", "codex", "gpt-5", "error", "text", Usage(10, 20, 5, 0.25),
        "thread", "crashed", "boom", MOMENT, MOMENT, (ToolLine("Edit", "a.py"), ToolLine("Bash", "")),
        "shown", (MarkerSummary("impl-complete", False, "Implementation complete"),),
        {"kind": "branch_adopt", "ids": (1,)})),
    (BranchRow, BranchRow.id == 3, rows.branch_record, BranchRecord(
        3, "main", 7, None, "roundtable", "review", "lbl", "adopted", "gb", "wt", "es", MOMENT, MOMENT,
        "fclaude", "native_fork")),
    (SubtaskRow, SubtaskRow.position == 2, rows.subtask_record, SubtaskRecord(4, 2, "second", "more", "done")),
    (PlanEventRow, PlanEventRow.id == 5, rows.plan_event_record,
     PlanEventRecord(5, 4, "approved", "user", {"k": (1, {"x": None})}, MOMENT)),
    (MemoRow, MemoRow.id == 6, rows.memo_record, MemoRecord(6, "brief", "c", "main", 3, 4, MOMENT)),
    (SessionLinkRow, SessionLinkRow.id == 8, rows.session_link_record,
     SessionLinkRecord(8, "main", "main", "adopted", "note", MOMENT)),
]


@pytest.mark.parametrize(("model", "where", "convert", "expected"), CASES,
                         ids=[case[0].__name__ for case in CASES])
def test_each_converter_reads_its_row(store: Store, model: Any, where: Any, convert: Callable[..., Any],
                                      expected: object) -> None:
    _seed(store)
    with store._db.reading() as db:
        row = first_row(model.select().where(where), db)
    assert row is not None
    record = convert(row)
    assert record == (expected if expected is not None else store.project)
    assert dataclasses.is_dataclass(record) and type(record).__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_the_plan_converter_takes_its_subtasks_in_order(store: Store) -> None:
    _seed(store)
    plan = store.get_plan(4)
    assert plan == PlanRecord(
        4, 1, "T", "s", "d", "o", ("c",), ("n", "m"), "review", "dev", "review", {"round": 2, "seats": ("a",)},
        1, 2, 7, 3, None, "main", "g", "w",
        (SubtaskRecord(4, 1, "first", "", "failed"), SubtaskRecord(4, 2, "second", "more", "done")), MOMENT, MOMENT)
    with pytest.raises(TypeError):
        plan.pending_detail["round"] = 3  # type: ignore[index]
