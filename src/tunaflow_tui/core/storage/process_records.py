"""The process groups tunaflow started for agent turns and test runs, recorded while they run.

A row is written when a group starts and deleted when tunaflow has seen it end. A row that is
still there after its owner (the tunaflow process that started it) died names a group that may
still be running: the next tunaflow checks it before it starts anything in its place.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from tunaflow_tui.core.processes import ProcessIdentity, start_ticks
from tunaflow_tui.core.storage.columns import now_text
from tunaflow_tui.core.storage.models import RunningProcessRow
from tunaflow_tui.core.storage.rows import Row
from tunaflow_tui.core.storage.storebase import StoreBase, all_rows, first_row, require_choice

PROCESS_KINDS = frozenset({"agent", "tests"})


@dataclass(frozen=True, slots=True)
class RunningProcessRecord:
    """A recorded process group: what it runs, for which conversation/message/plan, and who started it."""

    id: int
    kind: str
    label: str
    conversation_id: str | None
    message_id: int | None
    plan_id: int | None
    identity: ProcessIdentity
    owner: ProcessIdentity
    created_at: str


def _record(row: Row) -> RunningProcessRecord:
    return RunningProcessRecord(
        id=int(row["id"]),
        kind=str(row["kind"]),
        label=str(row["label"]),
        conversation_id=row["conversation_id"],
        message_id=row["message_id"],
        plan_id=row["plan_id"],
        identity=ProcessIdentity(int(row["pid"]), int(row["pgid"]), row["start_ticks"]),
        owner=ProcessIdentity(int(row["owner_pid"]), int(row["owner_pid"]), row["owner_start_ticks"]),
        created_at=str(row["created_at"]),
    )


def this_process() -> ProcessIdentity:
    """The identity of the running tunaflow process (the owner of what it records)."""
    pid = os.getpid()
    return ProcessIdentity(pid, pid, start_ticks(pid))


class ProcessStore(StoreBase):
    """Running-process methods of the store."""

    def record_process(
        self,
        kind: str,
        identity: ProcessIdentity,
        *,
        label: str = "",
        conversation_id: str | None = None,
        message_id: int | None = None,
        plan_id: int | None = None,
    ) -> RunningProcessRecord:
        """Record a group this process just started (``kind`` is ``agent`` or ``tests``)."""
        require_choice("kind", kind, PROCESS_KINDS)
        owner = this_process()
        with self._db.writing() as db:
            row_id = RunningProcessRow.insert(
                kind=kind, label=label, conversation_id=conversation_id, message_id=message_id,
                plan_id=plan_id, pid=identity.pid, pgid=identity.pgid, start_ticks=identity.start_ticks,
                owner_pid=owner.pid, owner_start_ticks=owner.start_ticks, created_at=now_text(),
            ).execute(db)
            row = first_row(RunningProcessRow.select().where(RunningProcessRow.id == row_id), db)
        assert row is not None
        return _record(row)

    def forget_process(self, record_id: int) -> None:
        """Delete a record (its group has ended, or was ended)."""
        with self._db.writing() as db:
            RunningProcessRow.delete().where(RunningProcessRow.id == record_id).execute(db)

    def list_processes(self, *, kind: str | None = None) -> tuple[RunningProcessRecord, ...]:
        """Every recorded group (optionally of one kind), oldest first."""
        query = RunningProcessRow.select()
        if kind is not None:
            query = query.where(RunningProcessRow.kind == kind)
        with self._db.reading() as db:
            rows = all_rows(query.order_by(RunningProcessRow.id), db)
        return tuple(_record(row) for row in rows)
