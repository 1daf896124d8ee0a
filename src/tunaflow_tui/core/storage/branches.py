"""Branches (spec §4) and their shadow conversations."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tunaflow_tui.core.counting import plural
from tunaflow_tui.core.storage.columns import now_text
from tunaflow_tui.core.storage.message_parse import parse_message
from tunaflow_tui.core.storage.models import (
    BRANCH_CONTEXT_SOURCES,
    BRANCH_KINDS,
    BRANCH_MODES,
    BRANCH_STATUSES,
    BranchRow,
    ConversationRow,
    MessageRow,
    SessionLinkRow,
)
from tunaflow_tui.core.storage.records import BranchRecord, MessageRecord, SessionLinkRecord
from tunaflow_tui.core.storage.rows import branch_record, message_record, session_link_record
from tunaflow_tui.core.storage.storebase import StoreBase, all_rows, first_row, require_choice

_UPDATABLE = frozenset({
    "status", "label", "git_branch", "worktree_path", "engine_session_id", "engine", "context_source",
})

ADOPT_RECORD_PERSONA = "branch-adopt"
"""The persona of the system message an adoption leaves in the parent conversation."""
ADOPTED_LINK_KIND = "adopted"
"""The kind of the session link from a parent conversation to a branch adopted into it."""


@dataclass(frozen=True, slots=True)
class Adoption:
    """What adopting a branch wrote, all in one transaction."""

    record: MessageRecord
    """The adopt record in the parent conversation (its ``meta`` holds the card's data)."""
    branch: BranchRecord
    archived: tuple[int, ...]
    """Branches of the adopted branch (at any depth) that were archived with it."""
    link: SessionLinkRecord


class BranchStore(StoreBase):
    """Branch methods of the store."""

    def create_branch(
        self,
        *,
        conversation_id: str,
        checkpoint_id: int | None,
        parent_branch_id: int | None,
        mode: str,
        kind: str,
        label: str,
        git_branch: str | None = None,
        worktree_path: str | None = None,
        engine: str | None = None,
        context_source: str | None = None,
    ) -> BranchRecord:
        """Fork ``conversation_id`` at ``checkpoint_id``; also creates the shadow conversation."""
        require_choice("mode", mode, BRANCH_MODES)
        require_choice("kind", kind, BRANCH_KINDS)
        if context_source is not None:
            require_choice("context_source", context_source, BRANCH_CONTEXT_SOURCES)
        with self._db.writing() as db:
            self._ensure_conversation(db, conversation_id)
            stamp = now_text()
            branch_id = BranchRow.insert(
                conversation_id=conversation_id,
                checkpoint_id=checkpoint_id,
                parent_branch_id=parent_branch_id,
                mode=mode,
                kind=kind,
                label=label,
                status="active",
                git_branch=git_branch,
                worktree_path=worktree_path,
                created_at=stamp,
                updated_at=stamp,
                engine=engine,
                context_source=context_source,
            ).execute(db)
            self._ensure_conversation(db, f"branch:{branch_id}", branch_id=branch_id)
            row = first_row(BranchRow.select().where(BranchRow.id == branch_id), db)
        assert row is not None
        return branch_record(row)

    def get_branch(self, branch_id: int) -> BranchRecord | None:
        """A branch by id, or None."""
        with self._db.reading() as db:
            row = first_row(BranchRow.select().where(BranchRow.id == branch_id), db)
        return None if row is None else branch_record(row)

    def list_branches(self, *, status: str | None = None) -> tuple[BranchRecord, ...]:
        """Every branch (optionally only those with ``status``), oldest first."""
        query = BranchRow.select()
        if status is not None:
            query = query.where(BranchRow.status == status)
        with self._db.reading() as db:
            rows = all_rows(query.order_by(BranchRow.id), db)
        return tuple(branch_record(row) for row in rows)

    def update_branch(self, branch_id: int, **fields: Any) -> BranchRecord:
        """Change status, label, git_branch, worktree_path or engine_session_id; ValueError otherwise."""
        unknown = set(fields) - _UPDATABLE
        if unknown:
            raise ValueError(f"cannot update branch {plural(len(unknown), 'field')}: {', '.join(sorted(unknown))}")
        if "status" in fields:
            require_choice("status", fields["status"], BRANCH_STATUSES)
        if fields.get("context_source") is not None:
            require_choice("context_source", fields["context_source"], BRANCH_CONTEXT_SOURCES)
        with self._db.writing() as db:
            updated = (
                BranchRow.update(**fields, updated_at=now_text()).where(BranchRow.id == branch_id).execute(db)
            )
            if not updated:
                raise ValueError(f"unknown branch {branch_id}")
            row = first_row(BranchRow.select().where(BranchRow.id == branch_id), db)
        assert row is not None
        return branch_record(row)

    def delete_branch(self, branch_id: int) -> None:
        """Delete a branch; an active branch's shadow conversation and messages go with it.

        Adopted and archived branches keep their shadow conversation (its ``branch_id`` becomes None)
        so that adopted summaries and session links can still cite it.
        """
        with self._db.writing() as db:
            row = first_row(BranchRow.select().where(BranchRow.id == branch_id), db)
            if row is None:
                raise ValueError(f"unknown branch {branch_id}")
            shadow = f"branch:{branch_id}"
            if row["status"] == "active":
                MessageRow.delete().where(MessageRow.conversation_id == shadow).execute(db)
                ConversationRow.delete().where(ConversationRow.id == shadow).execute(db)
            BranchRow.delete().where(BranchRow.id == branch_id).execute(db)

    def child_branches(self, branch_id: int) -> tuple[BranchRecord, ...]:
        """The branches forked from ``branch_id``'s conversation (one level), oldest first."""
        query = BranchRow.select().where(BranchRow.parent_branch_id == branch_id).order_by(BranchRow.id)
        with self._db.reading() as db:
            rows = all_rows(query, db)
        return tuple(branch_record(row) for row in rows)

    def all_session_links(self) -> tuple[SessionLinkRecord, ...]:
        """Every link between conversations of the project, oldest first."""
        with self._db.reading() as db:
            rows = all_rows(SessionLinkRow.select().order_by(SessionLinkRow.id), db)
        return tuple(session_link_record(row) for row in rows)

    def record_adoption(
        self, branch_id: int, *, content: str, meta: Mapping[str, object], summary: str
    ) -> Adoption:
        """Adopt an active branch in ONE transaction: a crash leaves either none or all of it.

        Writes the adopt record (a system message with ``meta``) into the parent conversation, sets
        the branch ``adopted``, archives its active descendants and links the parent to the branch
        with ``summary`` as the link's note. ValueError if the branch is unknown or not active.
        """
        with self._db.writing() as db:
            row = first_row(BranchRow.select().where(BranchRow.id == branch_id), db)
            if row is None:
                raise ValueError(f"unknown branch {branch_id}")
            if row["status"] != "active":
                raise ValueError(f"branch {branch_id} is {row['status']}, not active")
            parent = str(row["conversation_id"])
            shadow = f"branch:{branch_id}"
            stamp = now_text()
            record_id = MessageRow.insert(
                conversation_id=parent, role="system", persona=ADOPT_RECORD_PERSONA, status="done",
                content=content, created_at=stamp, updated_at=stamp, meta=dict(meta),
                parsed=parse_message("system", ADOPT_RECORD_PERSONA, content),
            ).execute(db)
            BranchRow.update(status="adopted", updated_at=stamp).where(BranchRow.id == branch_id).execute(db)
            archived: list[int] = []
            frontier = [branch_id]
            while frontier:
                children = all_rows(BranchRow.select(BranchRow.id, BranchRow.status)
                                    .where(BranchRow.parent_branch_id.in_(frontier)), db)
                frontier = [int(child["id"]) for child in children]
                active = [int(child["id"]) for child in children if child["status"] == "active"]
                if active:
                    BranchRow.update(status="archived", updated_at=stamp).where(BranchRow.id.in_(active)).execute(db)
                    archived += active
            link_id = SessionLinkRow.insert(
                from_conversation_id=parent, to_conversation_id=shadow, kind=ADOPTED_LINK_KIND, note=summary,
                created_at=stamp,
            ).execute(db)
            link_row = first_row(SessionLinkRow.select().where(SessionLinkRow.id == link_id), db)
            record_row = first_row(MessageRow.select().where(MessageRow.id == record_id), db)
            branch_row = first_row(BranchRow.select().where(BranchRow.id == branch_id), db)
        assert record_row is not None and branch_row is not None and link_row is not None
        return Adoption(message_record(record_row), branch_record(branch_row), tuple(archived),
                        session_link_record(link_row))
