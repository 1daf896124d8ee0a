"""Memos (e.g. roundtable briefs) and links between conversations."""

from __future__ import annotations

from tunaflow_tui.core.storage.columns import now_text
from tunaflow_tui.core.storage.models import MemoRow, SessionLinkRow
from tunaflow_tui.core.storage.records import MemoRecord, SessionLinkRecord
from tunaflow_tui.core.storage.rows import memo_record, session_link_record
from tunaflow_tui.core.storage.storebase import StoreBase, all_rows, first_row


class MemoStore(StoreBase):
    """Memo and session-link methods of the store."""

    def add_memo(
        self,
        kind: str,
        content: str,
        *,
        conversation_id: str | None = None,
        branch_id: int | None = None,
        plan_id: int | None = None,
    ) -> MemoRecord:
        """Store a memo, optionally linked to a conversation, a branch and/or a plan."""
        with self._db.writing() as db:
            memo_id = MemoRow.insert(
                kind=kind,
                content=content,
                conversation_id=conversation_id,
                branch_id=branch_id,
                plan_id=plan_id,
                created_at=now_text(),
            ).execute(db)
            row = first_row(MemoRow.select().where(MemoRow.id == memo_id), db)
        assert row is not None
        return memo_record(row)

    def list_memos(self, *, kind: str | None = None, branch_id: int | None = None) -> tuple[MemoRecord, ...]:
        """Memos, optionally filtered by kind and/or branch, oldest first."""
        query = MemoRow.select()
        if kind is not None:
            query = query.where(MemoRow.kind == kind)
        if branch_id is not None:
            query = query.where(MemoRow.branch_id == branch_id)
        with self._db.reading() as db:
            rows = all_rows(query.order_by(MemoRow.id), db)
        return tuple(memo_record(row) for row in rows)

    def add_session_link(
        self, from_conversation_id: str, to_conversation_id: str, kind: str, note: str = ""
    ) -> SessionLinkRecord:
        """Record that one conversation refers to another (e.g. an adopted branch)."""
        with self._db.writing() as db:
            self._ensure_conversation(db, from_conversation_id)
            self._ensure_conversation(db, to_conversation_id)
            link_id = SessionLinkRow.insert(
                from_conversation_id=from_conversation_id,
                to_conversation_id=to_conversation_id,
                kind=kind,
                note=note,
                created_at=now_text(),
            ).execute(db)
            row = first_row(SessionLinkRow.select().where(SessionLinkRow.id == link_id), db)
        assert row is not None
        return session_link_record(row)

    def delete_session_links(self, from_conversation_id: str, kind: str) -> int:
        """Drop the links of ``kind`` from a conversation (before recording new ones); how many went."""
        with self._db.writing() as db:
            deleted: int = SessionLinkRow.delete().where(
                (SessionLinkRow.from_conversation_id == from_conversation_id) & (SessionLinkRow.kind == kind)
            ).execute(db)
        return deleted

    def set_session_link_kind(self, link_id: int, kind: str) -> SessionLinkRecord | None:
        """Give a link another kind (e.g. mark one the user dropped); the link, or None when it is gone."""
        with self._db.writing() as db:
            SessionLinkRow.update(kind=kind).where(SessionLinkRow.id == link_id).execute(db)
            row = first_row(SessionLinkRow.select().where(SessionLinkRow.id == link_id), db)
        return None if row is None else session_link_record(row)

    def list_session_links(self, conversation_id: str) -> tuple[SessionLinkRecord, ...]:
        """Links from or to a conversation, oldest first."""
        query = SessionLinkRow.select().where(
            (SessionLinkRow.from_conversation_id == conversation_id)
            | (SessionLinkRow.to_conversation_id == conversation_id)
        )
        with self._db.reading() as db:
            rows = all_rows(query.order_by(SessionLinkRow.id), db)
        return tuple(session_link_record(row) for row in rows)
