"""Branches (spec §4) and their shadow conversations."""

from __future__ import annotations

from typing import Any

from tunaflow_tui.core.counting import plural
from tunaflow_tui.core.storage.columns import now_text
from tunaflow_tui.core.storage.models import (
    BRANCH_KINDS,
    BRANCH_MODES,
    BRANCH_STATUSES,
    BranchRow,
    ConversationRow,
    MessageRow,
)
from tunaflow_tui.core.storage.records import BranchRecord
from tunaflow_tui.core.storage.rows import branch_record
from tunaflow_tui.core.storage.storebase import StoreBase, all_rows, first_row, require_choice

_UPDATABLE = frozenset({"status", "label", "git_branch", "worktree_path", "engine_session_id"})


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
    ) -> BranchRecord:
        """Fork ``conversation_id`` at ``checkpoint_id``; also creates the shadow conversation."""
        require_choice("mode", mode, BRANCH_MODES)
        require_choice("kind", kind, BRANCH_KINDS)
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
