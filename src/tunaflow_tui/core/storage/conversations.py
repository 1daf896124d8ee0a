"""Conversations, messages and full-text search over them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import peewee

from tunaflow_tui.core.storage.columns import now_text
from tunaflow_tui.core.storage.message_parse import parse_message
from tunaflow_tui.core.storage.models import (
    MESSAGE_STATUSES,
    ROLES,
    ConversationRow,
    MessageIndex,
    MessageRow,
)
from tunaflow_tui.core.storage.records import ConversationRecord, MessageRecord, SearchHit
from tunaflow_tui.core.storage.rows import conversation_record, message_record
from tunaflow_tui.core.storage.search_query import SNIPPET_END, SNIPPET_START, fts_match_expression
from tunaflow_tui.core.storage.storebase import (
    MAIN_CONVERSATION_ID,
    StoreBase,
    all_rows,
    first_row,
    model_rows,
    require_choice,
    select_columns,
)
from tunaflow_tui.core.turns import ToolLine, Usage

_ROWS_PER_INSERT = 500  # SQLite limits the variables of one statement


class ConversationStore(StoreBase):
    """Conversation and message methods of the store."""

    def main_conversation(self) -> ConversationRecord:
        """The project's main conversation, created on first use."""
        found = self.get_conversation(MAIN_CONVERSATION_ID)
        if found is not None:
            return found
        with self._db.writing() as db:
            self._ensure_conversation(db, MAIN_CONVERSATION_ID)
            row = first_row(ConversationRow.select().where(ConversationRow.id == MAIN_CONVERSATION_ID), db)
        assert row is not None
        return conversation_record(row)

    def get_conversation(self, conversation_id: str) -> ConversationRecord | None:
        """A conversation by id (``"main"`` or ``"branch:{id}"``), or None."""
        with self._db.reading() as db:
            row = first_row(ConversationRow.select().where(ConversationRow.id == conversation_id), db)
        return None if row is None else conversation_record(row)

    def set_native_session(self, conversation_id: str, engine: str, session_id: str | None) -> None:
        """Remember the engine's own session id for a conversation (None forgets it)."""
        with self._db.writing() as db:
            self._ensure_conversation(db, conversation_id)
            ConversationRow.update(native_session_id=session_id, native_engine=engine).where(
                ConversationRow.id == conversation_id
            ).execute(db)

    def add_message(
        self,
        conversation_id: str,
        role: str,
        content: str = "",
        *,
        persona: str | None = None,
        engine: str | None = None,
        model: str | None = None,
        status: str = "done",
        meta: Mapping[str, object] | None = None,
    ) -> MessageRecord:
        """Append a message to a conversation and return it (``meta``: structured data for a record card)."""
        require_choice("role", role, ROLES)
        require_choice("status", status, MESSAGE_STATUSES)
        with self._db.writing() as db:
            self._ensure_conversation(db, conversation_id)
            stamp = now_text()
            message_id = MessageRow.insert(
                conversation_id=conversation_id,
                role=role,
                persona=persona,
                engine=engine,
                model=model,
                status=status,
                content=content,
                created_at=stamp,
                updated_at=stamp,
                parsed=None if status == "streaming" else parse_message(role, persona, content),
                meta=meta or {},
            ).execute(db)
            row = first_row(MessageRow.select().where(MessageRow.id == message_id), db)
        assert row is not None
        return message_record(row)

    def add_messages(self, conversation_id: str, messages: Iterable[Mapping[str, str | None]]) -> int:
        """Append many finished messages at once (importing or seeding a conversation); returns how many.

        Each mapping has ``role`` and ``content`` and may have ``persona``, ``engine``, ``model`` and
        ``status`` (default ``done``); they get consecutive ids, in order, in one transaction.
        """
        stamp = now_text()
        rows = []
        for message in messages:
            role, status = str(message.get("role")), str(message.get("status") or "done")
            require_choice("role", role, ROLES)
            require_choice("status", status, MESSAGE_STATUSES)
            content, persona = message.get("content") or "", message.get("persona")
            rows.append({
                "conversation_id": conversation_id, "role": role, "status": status,
                "content": content, "persona": persona,
                "engine": message.get("engine"), "model": message.get("model"),
                "created_at": stamp, "updated_at": stamp,
                "parsed": None if status == "streaming" else parse_message(role, persona, content),
            })  # fmt: skip
        with self._db.writing() as db:
            self._ensure_conversation(db, conversation_id)
            for start in range(0, len(rows), _ROWS_PER_INSERT):
                MessageRow.insert_many(rows[start : start + _ROWS_PER_INSERT]).execute(db)
        return len(rows)

    def update_message(
        self,
        message_id: int,
        *,
        content: str | None = None,
        status: str | None = None,
        usage: Usage | None = None,
        native_session_id: str | None = None,
        error_kind: str | None = None,
        error_message: str | None = None,
        tools: Sequence[ToolLine] | None = None,
    ) -> MessageRecord:
        """Change a message (None leaves a field as it is); ValueError if there is no such message.

        A message that finishes (leaves ``streaming``), or whose text changes once finished, is parsed
        for markers here, once, and the result is kept with it (see ``message_parse``).
        """
        changes: dict[str, object] = {"updated_at": now_text()}
        if content is not None:
            changes["content"] = content
        if status is not None:
            require_choice("status", status, MESSAGE_STATUSES)
            changes["status"] = status
        if usage is not None:
            changes.update(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cached_tokens=usage.cached_tokens,
                cost_usd=usage.cost_usd,
            )
        if native_session_id is not None:
            changes["native_session_id"] = native_session_id
        if error_kind is not None:
            changes["error_kind"] = error_kind
        if error_message is not None:
            changes["error_message"] = error_message
        if tools is not None:
            changes["tools"] = tools
        with self._db.writing() as db:
            self._reparse(db, message_id, changes)
            MessageRow.update(**changes).where(MessageRow.id == message_id).execute(db)
            row = first_row(MessageRow.select().where(MessageRow.id == message_id), db)
        assert row is not None
        return message_record(row)

    @staticmethod
    def _reparse(db: peewee.Database, message_id: int, changes: dict[str, object]) -> None:
        """Add the stored parse to ``changes`` when they finish the message or change a finished one's text."""
        unparsed = MessageRow.parsed.is_null().alias("unparsed")
        now = first_row(
            MessageRow.select(MessageRow.role, MessageRow.persona, MessageRow.status, unparsed)
            .where(MessageRow.id == message_id), db
        )
        if now is None:
            raise ValueError(f"unknown message {message_id}")
        status = changes.get("status", now["status"])
        if status == "streaming":
            if now["status"] != "streaming":  # taken back to streaming: its markers are not final any more
                changes["parsed"] = None
            return
        content = changes.get("content")
        if content is None and (now["status"] == "streaming" or now["unparsed"]):
            row = first_row(MessageRow.select(MessageRow.content).where(MessageRow.id == message_id), db)
            assert row is not None
            content = row["content"]
        if isinstance(content, str):
            changes["parsed"] = parse_message(now["role"], now["persona"], content)

    def get_message(self, message_id: int) -> MessageRecord | None:
        """A message by id, or None."""
        with self._db.reading() as db:
            row = first_row(MessageRow.select().where(MessageRow.id == message_id), db)
        return None if row is None else message_record(row)

    def list_messages(
        self, conversation_id: str, *, before_id: int | None = None, after_id: int | None = None,
        limit: int = 100,
    ) -> tuple[MessageRecord, ...]:
        """A page of a conversation, oldest first.

        By default the newest ``limit`` messages older than ``before_id`` (all if None); with
        ``after_id`` the oldest ``limit`` messages newer than it (paging forward, e.g. back towards
        the newest after reading far back). Both use the primary key: a page costs the same at any
        depth of a long conversation.
        """
        if limit < 0:
            raise ValueError("limit must not be negative")
        # Plain SQL: every pack and every chat page reads one (see model_rows).
        where = "conversation_id = ?"
        params: list[object] = [conversation_id]
        if before_id is not None:
            where += " AND id < ?"
            params.append(int(before_id))
        if after_id is not None:
            where += " AND id > ?"
            params.append(int(after_id))
        order = "ASC" if after_id is not None else "DESC"
        sql = f"SELECT {select_columns(MessageRow)} FROM messages WHERE {where} ORDER BY id {order} LIMIT ?"
        with self._db.reading() as db:
            rows = model_rows(db, MessageRow, sql, [*params, int(limit)])
        if after_id is None:
            rows.reverse()
        return tuple(message_record(row) for row in rows)

    def find_record(self, conversation_id: str, kind: str, key: str, value: int | str) -> MessageRecord | None:
        """The record message of ``conversation_id`` whose ``meta`` has ``kind`` and ``meta[key] == value``.

        Lets a record be written once however often its writer runs (a retry, a recovery).
        """
        query = MessageRow.select().where(
            (MessageRow.conversation_id == conversation_id)
            & (MessageRow.role == "system")
            & (peewee.fn.json_extract(MessageRow.meta, "$.kind") == kind)
            & (peewee.fn.json_extract(MessageRow.meta, f"$.{key}") == value)
        ).order_by(MessageRow.id.asc()).limit(1)
        with self._db.reading() as db:
            row = first_row(query, db)
        return None if row is None else message_record(row)

    def count_messages(self, conversation_id: str) -> int:
        """How many messages a conversation holds."""
        with self._db.reading() as db:
            count: int = MessageRow.select().where(MessageRow.conversation_id == conversation_id).count(db)
        return count

    def search_messages(self, query: str, *, limit: int = 20) -> tuple[SearchHit, ...]:
        """Full-text search over every message of the project, best match first.

        Each word of ``query`` must appear (as a word or word prefix); quotes and FTS operators in
        ``query`` are taken literally. Matches in the snippet are wrapped in
        ``SNIPPET_START``/``SNIPPET_END``.
        """
        expression = fts_match_expression(query)
        if expression is None or limit <= 0:
            return ()
        rank = MessageIndex.rank().alias("fts_rank")
        snippet = MessageIndex.content.snippet(SNIPPET_START, SNIPPET_END, "…", 16).alias("fts_snippet")
        select = (
            MessageRow.select(MessageRow, rank, snippet)
            .join(MessageIndex, on=(MessageIndex.rowid == MessageRow.id))
            .where(MessageIndex.match(expression))
            .order_by(MessageIndex.rank(), MessageRow.id.desc())
            .limit(limit)
        )
        with self._db.reading() as db:
            rows = all_rows(select, db)
        return tuple(
            SearchHit(message=message_record(row), rank=float(row["fts_rank"]), snippet=row["fts_snippet"])
            for row in rows
        )
