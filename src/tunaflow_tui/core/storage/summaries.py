"""Topic summaries of the older part of long conversations (compressed memory), with the ranges they cover."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import peewee

from tunaflow_tui.core.storage.columns import now_text
from tunaflow_tui.core.storage.models import ConversationSummaryRow, MessageRow
from tunaflow_tui.core.storage.rows import Row
from tunaflow_tui.core.storage.storebase import StoreBase, first_row, model_rows, select_columns


@dataclass(frozen=True, slots=True)
class SummaryRecord:
    """A topic summary of a conversation's messages ``first_message_id``..``last_message_id`` (inclusive)."""

    id: int
    conversation_id: str
    first_message_id: int
    last_message_id: int
    content: str
    engine: str | None
    created_at: datetime


def _summary(row: Row) -> SummaryRecord:
    return SummaryRecord(int(row["id"]), str(row["conversation_id"]), int(row["first_message_id"]),
                         int(row["last_message_id"]), str(row["content"]), row["engine"], row["created_at"])


class SummaryStore(StoreBase):
    """Topic summaries of long conversations (compressed memory)."""

    def list_summaries(self, conversation_id: str, *, newest: int | None = None) -> tuple[SummaryRecord, ...]:
        """The conversation's summaries in message order (only the ``newest`` few, if given)."""
        # Plain SQL: every pack reads the newest summaries (see model_rows).
        sql = (f"SELECT {select_columns(ConversationSummaryRow)} FROM {ConversationSummaryRow._meta.table_name} "
               "WHERE conversation_id = ? ORDER BY first_message_id")
        params: list[object] = [conversation_id]
        if newest is not None:
            sql, params = sql + " DESC LIMIT ?", [conversation_id, int(newest)]
        with self._db.reading() as db:
            rows = model_rows(db, ConversationSummaryRow, sql, params)
        if newest is not None:
            rows.reverse()
        return tuple(_summary(r) for r in rows)

    def save_summary(self, conversation_id: str, first_message_id: int, last_message_id: int, content: str,
                     engine: str | None) -> SummaryRecord:
        """Store a summary of a message range, replacing any summary that overlaps the range."""
        with self._db.writing() as db:
            ConversationSummaryRow.delete().where(
                (ConversationSummaryRow.conversation_id == conversation_id)
                & (ConversationSummaryRow.first_message_id <= last_message_id)
                & (ConversationSummaryRow.last_message_id >= first_message_id)
            ).execute(db)
            ConversationSummaryRow.insert(conversation_id=conversation_id, first_message_id=first_message_id,
                                          last_message_id=last_message_id, content=content, engine=engine,
                                          created_at=now_text()).execute(db)
        return next(s for s in self.list_summaries(conversation_id) if s.first_message_id == first_message_id)

    def delete_summaries(self, conversation_id: str, summary_ids: Sequence[int]) -> None:
        """Drop summaries that no longer describe their messages."""
        if summary_ids:
            with self._db.writing() as db:
                ConversationSummaryRow.delete().where(ConversationSummaryRow.id.in_(list(summary_ids))).execute(db)

    def conversation_chars(self, conversation_id: str) -> int:
        """Characters of all finished messages of a conversation (a cheap size estimate)."""
        with self._db.reading() as db:
            row = first_row(MessageRow.select(peewee.fn.COALESCE(peewee.fn.SUM(peewee.fn.LENGTH(MessageRow.content)), 0)
                                              .alias("chars"))
                            .where((MessageRow.conversation_id == conversation_id) & (MessageRow.status != "streaming")), db)
        return int(row["chars"]) if row is not None else 0
