"""Chunks of finished messages with their embedding vectors, and the queries project search runs.

The background indexer asks for :meth:`ChunkStore.messages_to_embed`, embeds them off the event
loop and hands the result to :meth:`ChunkStore.save_message_chunks`. What is still to do is read
from the database every time, never from memory, so an indexer stopped by a crash starts again
where it stopped. Search reads vectors back with :meth:`ChunkStore.chunk_vectors` and full-text
rankings with :meth:`ChunkStore.fts_message_ids`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import peewee

from tunaflow_tui.core.storage.models import MessageChunkRow, MessageRow
from tunaflow_tui.core.storage.records import MessageRecord
from tunaflow_tui.core.storage.rows import message_record
from tunaflow_tui.core.storage.storebase import StoreBase, all_rows, first_row, model_rows, select_columns

_IDS_PER_QUERY = 500  # SQLite limits the variables of one statement


@dataclass(frozen=True, slots=True)
class MessageToEmbed:
    """A finished message whose chunks are not stored for the current model yet."""

    id: int
    content: str


@dataclass(frozen=True, slots=True)
class ChunkToSave:
    """One chunk as the indexer stores it: its place in the message and its vector (None: no text)."""

    index: int
    start: int
    end: int
    vector: bytes | None


@dataclass(frozen=True, slots=True)
class ChunkLocation:
    """Where a stored chunk sits: its message and its character range in the message's content."""

    chunk_id: int
    message_id: int
    index: int
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class EmbeddingCounts:
    """How many finished messages have their chunks stored for a model, out of how many."""

    embedded: int
    total: int

    @property
    def remaining(self) -> int:
        """Finished messages still to embed."""
        return max(0, self.total - self.embedded)


def _finished() -> peewee.Expression:
    return MessageRow.status != "streaming"


class ChunkStore(StoreBase):
    """Chunk, vector and search-ranking methods of the store."""

    def _chunked(self, model_id: str) -> peewee.ColumnBase:
        return peewee.fn.EXISTS(
            MessageChunkRow.select(MessageChunkRow.id).where(
                (MessageChunkRow.message_id == MessageRow.id) & (MessageChunkRow.model_id == model_id)
            )
        )

    def messages_to_embed(self, model_id: str, *, limit: int = 16, after_id: int = 0) -> tuple[MessageToEmbed, ...]:
        """Finished messages without chunks for ``model_id``, oldest first (ids above ``after_id``)."""
        query = (
            MessageRow.select(MessageRow.id, MessageRow.content)
            .where(_finished() & (MessageRow.id > after_id) & ~self._chunked(model_id))
            .order_by(MessageRow.id)
            .limit(limit)
        )
        with self._db.reading() as db:
            rows = all_rows(query, db)
        return tuple(MessageToEmbed(int(row["id"]), str(row["content"])) for row in rows)

    def embedding_counts(self, model_id: str) -> EmbeddingCounts:
        """Finished messages with chunks stored for ``model_id``, and all finished messages."""
        with self._db.reading() as db:
            total = MessageRow.select().where(_finished()).count(db)
            embedded = (
                MessageChunkRow.select(MessageChunkRow.message_id)
                .where(MessageChunkRow.model_id == model_id).distinct().count(db)
            )
        return EmbeddingCounts(int(embedded), int(total))

    def save_message_chunks(
        self, message_id: int, content: str, model_id: str, chunks: Sequence[ChunkToSave]
    ) -> tuple[int, ...] | None:
        """Replace the stored chunks of a message with ``chunks``; their ids, in order.

        ``content`` is the text the chunks were cut from. When the message is gone, streams again
        or its text changed meanwhile, nothing is stored and None is returned (the indexer will
        find it again when it finishes). A message without chunks is stored as one row with no
        vector, so that it is not offered again.
        """
        rows = list(chunks) or [ChunkToSave(0, 0, 0, None)]
        with self._db.writing() as db:
            now = first_row(MessageRow.select(MessageRow.status, MessageRow.content)
                            .where(MessageRow.id == message_id), db)
            if now is None or now["status"] == "streaming" or now["content"] != content:
                return None
            MessageChunkRow.delete().where(MessageChunkRow.message_id == message_id).execute(db)
            ids = []
            for chunk in rows:
                ids.append(int(MessageChunkRow.insert(
                    message_id=message_id, chunk_index=chunk.index, start_offset=chunk.start,
                    end_offset=chunk.end, model_id=model_id, vector=chunk.vector,
                ).execute(db)))
        return tuple(ids)

    def chunk_vectors(self, model_id: str, *, batch: int = 5_000, after_id: int = 0) -> Iterator[tuple[int, bytes]]:
        """``(chunk id, vector blob)`` of every stored chunk with a vector for ``model_id``, by id.

        Only chunks with an id above ``after_id`` (the ones stored since an index was read). Read in
        batches, each in its own snapshot, so the writer is never held up by a long read. Plain SQL:
        building a row object per chunk took two thirds of the time to read 100,000 of them.
        """
        last = after_id
        sql = ("SELECT id, vector FROM message_chunks WHERE model_id = ? AND vector IS NOT NULL AND id > ? "
               "ORDER BY id LIMIT ?")
        while True:
            with self._db.reading() as db:
                rows = db.execute_sql(sql, (model_id, last, batch)).fetchall()  # type: ignore[no-untyped-call]
            for chunk_id, vector in rows:
                yield int(chunk_id), bytes(vector)
            if len(rows) < batch:
                return
            last = int(rows[-1][0])

    def chunk_count(self, model_id: str, *, up_to_id: int) -> int:
        """How many chunk rows of ``model_id`` (with a vector or not) have an id up to ``up_to_id``.

        Checks a saved copy of the vectors: chunk ids are never reused, so an edit or deletion
        among them changes this count. Counted on the (message, model) index, which holds the
        ids: 10 ms at 100k chunks where reading the table took 100 ms.
        """
        sql = ("SELECT count(*) FROM message_chunks INDEXED BY message_chunks_by_message "
               "WHERE model_id = ? AND id <= ?")
        with self._db.reading() as db:
            row = db.execute_sql(sql, (model_id, int(up_to_id))).fetchone()  # type: ignore[no-untyped-call]
        return int(row[0]) if row is not None else 0

    def chunk_locations(self, chunk_ids: Sequence[int]) -> dict[int, ChunkLocation]:
        """The message and offsets of each chunk id that still exists (plain SQL: it runs on every search)."""
        found: dict[int, ChunkLocation] = {}
        for start in range(0, len(chunk_ids), _IDS_PER_QUERY):
            batch = [int(chunk_id) for chunk_id in chunk_ids[start:start + _IDS_PER_QUERY]]
            if not batch:
                continue
            sql = ("SELECT id, message_id, chunk_index, start_offset, end_offset FROM message_chunks "
                   f"WHERE id IN ({', '.join('?' * len(batch))})")
            with self._db.reading() as db:
                rows = db.execute_sql(sql, batch).fetchall()  # type: ignore[no-untyped-call]
            for chunk_id, message_id, index, begin, end in rows:
                found[int(chunk_id)] = ChunkLocation(int(chunk_id), int(message_id), int(index), int(begin), int(end))
        return found

    def fts_message_ids(self, expression: str, limit: int, *,
                        conversation_ids: Sequence[str] | None = None) -> list[int]:
        """Ids of finished messages matching an FTS5 ``expression``, best bm25 first.

        ``expression`` must be one that :mod:`~tunaflow_tui.core.memory.fts_query` built (every term
        quoted). ``conversation_ids`` limits the search to those conversations.
        """
        # Plain SQL: it runs for every pack, and building it with peewee cost half as much again
        # as SQLite's own work. Without a conversation filter the index alone answers: its rows
        # are the finished messages (the triggers keep it so), and joining every matching row to
        # ``messages`` only to return the same id doubled the cost of a query matching thousands.
        if conversation_ids is None:
            sql = ("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? "
                   "ORDER BY rank, rowid DESC LIMIT ?")
            params: list[object] = [expression, int(limit)]
        else:
            wanted = [str(cid) for cid in conversation_ids]
            if not wanted:
                return []
            params = [expression, *wanted, int(limit)]
            sql = ("SELECT m.id FROM messages AS m JOIN messages_fts ON messages_fts.rowid = m.id "
                   f"WHERE messages_fts MATCH ? AND m.conversation_id IN ({', '.join('?' * len(wanted))}) "
                   "ORDER BY messages_fts.rank, m.id DESC LIMIT ?")
        with self._db.reading() as db:
            rows = db.execute_sql(sql, params).fetchall()  # type: ignore[no-untyped-call]
        return [int(row[0]) for row in rows]

    def term_frequency(self, term: str, prefix: bool) -> int:
        """Finished messages holding ``term`` (with ``prefix``: any term starting with it), from the vocabulary."""
        params: tuple[str, ...]
        if prefix:
            sql = "SELECT coalesce(sum(doc), 0) FROM messages_vocab WHERE term >= ? AND term < ?"
            params = (term, term + "\U0010ffff")
        else:
            sql, params = "SELECT coalesce(sum(doc), 0) FROM messages_vocab WHERE term = ?", (term,)
        with self._db.reading() as db:
            row = db.execute_sql(sql, params).fetchone()  # type: ignore[no-untyped-call]
        return int(row[0]) if row is not None else 0

    def messages_by_id(self, message_ids: Sequence[int]) -> dict[int, MessageRecord]:
        """The messages among ``message_ids`` that exist, by id."""
        found: dict[int, MessageRecord] = {}
        for start in range(0, len(message_ids), _IDS_PER_QUERY):
            batch = [int(message_id) for message_id in message_ids[start:start + _IDS_PER_QUERY]]
            if not batch:
                continue
            sql = (f"SELECT {select_columns(MessageRow)} FROM messages "
                   f"WHERE id IN ({', '.join('?' * len(batch))})")  # plain SQL: every search and pack reads these
            with self._db.reading() as db:
                for row in model_rows(db, MessageRow, sql, batch):
                    record = message_record(row)
                    found[record.id] = record
        return found
