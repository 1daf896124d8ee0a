"""What each native session was sent: the part of its conversation it knows, the chunks and links it got.

A resumed session holds its own history; these rows tell what it was sent besides its own turns,
so the next turn carries only what it has not seen (see ``runtime/since.py``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

import peewee

from tunaflow_tui.core.storage.columns import now_text
from tunaflow_tui.core.storage.models import (
    DELIVERY_KINDS,
    ConversationSummaryRow,
    MessageRow,
    PlanEventRow,
    SessionDeliveryRow,
)
from tunaflow_tui.core.storage.records import PlanEventRecord
from tunaflow_tui.core.storage.rows import plan_event_record
from tunaflow_tui.core.storage.storebase import StoreBase, all_rows, first_row, require_choice


@dataclass(frozen=True, slots=True)
class Delivered:
    """What one native session has been sent (all None and empty for a session tunaflow has no rows of).

    ``from_id``..``through_id``: the messages of its conversation it knows (its own turns and those
    it was sent); ``events_through`` and ``summaries_through``: the newest plan event and topic summary
    when it was last sent; ``chunks``: (message id, start offset) of the retrieved chunks it got;
    ``links``: the session links it cites.
    """

    from_id: int | None = None
    through_id: int | None = None
    events_through: int | None = None
    summaries_through: int | None = None
    chunks: frozenset[tuple[int, int]] = field(default_factory=frozenset)
    links: frozenset[int] = field(default_factory=frozenset)

    @property
    def known(self) -> bool:
        """True when tunaflow recorded what this session was sent."""
        return self.through_id is not None


@dataclass(frozen=True, slots=True)
class DeliveryItem:
    """One thing sent to a session: its ``kind`` (one of ``DELIVERY_KINDS``), id and part."""

    kind: str
    item_id: int
    item_part: int = 0


class DeliveryStore(StoreBase):
    """What each native session was sent."""

    def record_delivery(self, engine: str, session_id: str, conversation_id: str,
                        items: Iterable[DeliveryItem]) -> None:
        """Remember that ``engine``'s session ``session_id`` was sent ``items`` (repeats are kept once)."""
        rows = []
        now = now_text()
        for item in items:
            require_choice("kind", item.kind, DELIVERY_KINDS)
            rows.append({"engine": engine, "session_id": session_id, "conversation_id": conversation_id,
                         "kind": item.kind, "item_id": int(item.item_id), "item_part": int(item.item_part),
                         "created_at": now})
        if not rows:
            return
        with self._db.writing() as db:
            self._ensure_conversation(db, conversation_id)
            for start in range(0, len(rows), 200):
                SessionDeliveryRow.insert_many(rows[start:start + 200]).on_conflict_ignore().execute(db)

    def delivered(self, engine: str, session_id: str) -> Delivered:
        """What ``engine``'s session ``session_id`` was sent."""
        with self._db.reading() as db:
            rows = all_rows(SessionDeliveryRow.select(SessionDeliveryRow.kind, SessionDeliveryRow.item_id,
                                                      SessionDeliveryRow.item_part)
                            .where((SessionDeliveryRow.engine == engine)
                                   & (SessionDeliveryRow.session_id == session_id)), db)
        marks: dict[str, int] = {}
        chunks: set[tuple[int, int]] = set()
        links: set[int] = set()
        for row in rows:
            kind, item = str(row["kind"]), int(row["item_id"])
            if kind == "chunk":
                chunks.add((item, int(row["item_part"])))
            elif kind == "link":
                links.add(item)
            elif kind == "from":
                marks[kind] = min(marks.get(kind, item), item)
            else:
                marks[kind] = max(marks.get(kind, item), item)
        return Delivered(marks.get("from"), marks.get("through"), marks.get("events"), marks.get("summaries"),
                         frozenset(chunks), frozenset(links))

    def copy_deliveries(self, engine: str, old_session_id: str, new_session_id: str) -> None:
        """Carry what ``old_session_id`` was sent over to ``new_session_id`` (the engine renamed the session)."""
        if old_session_id == new_session_id:
            return
        with self._db.writing() as db:
            rows = all_rows(SessionDeliveryRow.select().where((SessionDeliveryRow.engine == engine)
                                                              & (SessionDeliveryRow.session_id == old_session_id)),
                            db)
            copies = [{**{k: v for k, v in row.items() if k != "id"}, "session_id": new_session_id} for row in rows]
            for start in range(0, len(copies), 200):
                SessionDeliveryRow.insert_many(copies[start:start + 200]).on_conflict_ignore().execute(db)

    def last_message_of_session(self, conversation_id: str, session_id: str) -> int | None:
        """The newest message of ``conversation_id`` written in native session ``session_id``."""
        with self._db.reading() as db:
            row = first_row(MessageRow.select(peewee.fn.MAX(MessageRow.id).alias("last"))
                            .where((MessageRow.conversation_id == conversation_id)
                                   & (MessageRow.native_session_id == session_id)), db)
        return int(row["last"]) if row is not None and row["last"] is not None else None

    def newest_message_id(self, conversation_id: str) -> int:
        """The id of the conversation's newest message (0 without any)."""
        with self._db.reading() as db:
            row = first_row(MessageRow.select(peewee.fn.MAX(MessageRow.id).alias("last"))
                            .where(MessageRow.conversation_id == conversation_id), db)
        return int(row["last"]) if row is not None and row["last"] is not None else 0

    def newest_plan_event_id(self) -> int:
        """The id of the newest plan event of the project (0 without any)."""
        with self._db.reading() as db:
            row = first_row(PlanEventRow.select(peewee.fn.MAX(PlanEventRow.id).alias("last")), db)
        return int(row["last"]) if row is not None and row["last"] is not None else 0

    def plan_events_after(self, event_id: int, types: Collection[str]) -> tuple[PlanEventRecord, ...]:
        """The project's plan events of ``types`` newer than ``event_id``, oldest first."""
        query = (PlanEventRow.select().where((PlanEventRow.id > event_id) & PlanEventRow.type.in_(list(types)))
                 .order_by(PlanEventRow.id))
        with self._db.reading() as db:
            rows = all_rows(query, db)
        return tuple(plan_event_record(row) for row in rows)

    def newest_summary_id(self, conversation_id: str) -> int:
        """The id of the conversation's newest topic summary (0 without any)."""
        with self._db.reading() as db:
            row = first_row(ConversationSummaryRow.select(peewee.fn.MAX(ConversationSummaryRow.id).alias("last"))
                            .where(ConversationSummaryRow.conversation_id == conversation_id), db)
        return int(row["last"]) if row is not None and row["last"] is not None else 0
