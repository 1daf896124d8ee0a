"""Store methods a roundtable needs besides branches and messages: answer data, replacing, stored chunks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tunaflow_tui.core.storage.columns import now_text
from tunaflow_tui.core.storage.models import MessageChunkRow, MessageRow
from tunaflow_tui.core.storage.records import MessageRecord
from tunaflow_tui.core.storage.rows import message_record
from tunaflow_tui.core.storage.storebase import StoreBase, all_rows, first_row

_IDS_PER_QUERY = 500


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A stored chunk of a message: its place in the message's content and its vector (None: no text)."""

    message_id: int
    index: int
    start: int
    end: int
    vector: bytes | None


class RoundtableStore(StoreBase):
    """Roundtable methods of the store."""

    def set_message_meta(self, message_id: int, meta: Mapping[str, object]) -> MessageRecord:
        """Replace a message's structured data (e.g. what a roundtable seat was sent); ValueError if unknown."""
        with self._db.writing() as db:
            updated = MessageRow.update(meta=dict(meta), updated_at=now_text()).where(
                MessageRow.id == message_id).execute(db)
            if not updated:
                raise ValueError(f"unknown message {message_id}")
            row = first_row(MessageRow.select().where(MessageRow.id == message_id), db)
        assert row is not None
        return message_record(row)

    def delete_message(self, message_id: int) -> bool:
        """Delete one message (its chunks go with it); False when there was none."""
        with self._db.writing() as db:
            deleted: int = MessageRow.delete().where(MessageRow.id == message_id).execute(db)
        return bool(deleted)

    def stored_chunks(self, message_ids: Sequence[int], model_id: str) -> dict[int, tuple[StoredChunk, ...]]:
        """The chunks stored for ``model_id`` of each of ``message_ids`` that has any, in chunk order."""
        found: dict[int, list[StoredChunk]] = {}
        for start in range(0, len(message_ids), _IDS_PER_QUERY):
            batch = [int(i) for i in message_ids[start:start + _IDS_PER_QUERY]]
            query = (MessageChunkRow.select()
                     .where(MessageChunkRow.message_id.in_(batch) & (MessageChunkRow.model_id == model_id))
                     .order_by(MessageChunkRow.message_id, MessageChunkRow.chunk_index))
            with self._db.reading() as db:
                rows = all_rows(query, db)
            for row in rows:
                vector = row["vector"]
                found.setdefault(int(row["message_id"]), []).append(StoredChunk(
                    int(row["message_id"]), int(row["chunk_index"]), int(row["start_offset"]),
                    int(row["end_offset"]), bytes(vector) if vector is not None else None))
        return {message_id: tuple(chunks) for message_id, chunks in found.items()}
