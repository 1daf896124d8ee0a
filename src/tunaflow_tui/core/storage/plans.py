"""Plans, their subtasks and their event history."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import peewee

from tunaflow_tui.core.counting import plural
from tunaflow_tui.core.storage.columns import now_text
from tunaflow_tui.core.storage.models import EVENT_ACTORS, SUBTASK_STATUSES, PlanEventRow, PlanRow, SubtaskRow
from tunaflow_tui.core.storage.records import PlanEventRecord, PlanRecord
from tunaflow_tui.core.storage.rows import plan_event_record, plan_record
from tunaflow_tui.core.storage.storebase import StoreBase, all_rows, first_row, require_choice
from tunaflow_tui.core.workflow.phases import Actor, PendingDecision, Phase, PlanEventType

PLAN_PHASES = frozenset(Phase)
PENDING_DECISIONS = frozenset(PendingDecision)
PLAN_EVENT_TYPES = frozenset(PlanEventType)
_UPDATABLE = frozenset(
    {
        "title", "description", "expected_outcome", "phase", "held_from", "pending_decision",
        "revision", "review_round", "impl_branch_id", "review_branch_id", "base_branch",
        "git_branch", "worktree_path", "slug", "constraints", "non_goals", "pending_detail",
    }
)


class PlanStore(StoreBase):
    """Plan methods of the store."""

    def _read_plan(self, db: peewee.Database, plan_id: int) -> PlanRecord | None:
        row = first_row(PlanRow.select().where(PlanRow.id == plan_id), db)
        if row is None:
            return None
        subtasks = all_rows(
            SubtaskRow.select().where(SubtaskRow.plan_id == plan_id).order_by(SubtaskRow.position), db
        )
        return plan_record(row, subtasks)

    def _must_read_plan(self, db: peewee.Database, plan_id: int) -> PlanRecord:
        plan = self._read_plan(db, plan_id)
        if plan is None:
            raise ValueError(f"unknown plan {plan_id}")
        return plan

    @staticmethod
    def _insert_subtasks(db: peewee.Database, plan_id: int, subtasks: Sequence[tuple[str, str]]) -> None:
        rows = [
            {"plan_id": plan_id, "position": n, "title": title, "details": details, "status": "pending"}
            for n, (title, details) in enumerate(subtasks, start=1)
        ]
        if rows:
            SubtaskRow.insert_many(rows).execute(db)

    def create_plan(
        self,
        *,
        title: str,
        slug: str,
        description: str = "",
        expected_outcome: str | None = None,
        constraints: Sequence[str] = (),
        non_goals: Sequence[str] = (),
        subtasks: Sequence[tuple[str, str]] = (),
        source_message_id: int | None = None,
        phase: str = Phase.APPROVAL,
    ) -> PlanRecord:
        """Create a plan with its subtasks ((title, details) pairs, numbered from 1); ValueError if the slug is taken."""
        require_choice("phase", phase, PLAN_PHASES)
        with self._db.writing() as db:
            if first_row(PlanRow.select(PlanRow.id).where(PlanRow.slug == slug), db) is not None:
                raise ValueError(f"plan slug {slug!r} is already taken")
            stamp = now_text()
            plan_id = PlanRow.insert(
                project_id=self._project_id,
                title=title,
                slug=slug,
                description=description,
                expected_outcome=expected_outcome,
                constraints=constraints,
                non_goals=non_goals,
                phase=phase,
                pending_detail={},
                revision=0,
                review_round=0,
                source_message_id=source_message_id,
                created_at=stamp,
                updated_at=stamp,
            ).execute(db)
            self._insert_subtasks(db, plan_id, subtasks)
            return self._must_read_plan(db, plan_id)

    def get_plan(self, plan_id: int) -> PlanRecord | None:
        """A plan with its subtasks, or None."""
        with self._db.reading() as db:
            return self._read_plan(db, plan_id)

    def list_plans(self) -> tuple[PlanRecord, ...]:
        """Every plan with its subtasks, oldest first."""
        with self._db.reading() as db:
            plans = all_rows(PlanRow.select().order_by(PlanRow.id), db)
            subtasks = all_rows(SubtaskRow.select().order_by(SubtaskRow.plan_id, SubtaskRow.position), db)
        by_plan: dict[int, list[Any]] = {}
        for sub in subtasks:
            by_plan.setdefault(sub["plan_id"], []).append(sub)
        return tuple(plan_record(row, by_plan.get(row["id"], [])) for row in plans)

    def newest_plan(
        self, *, phases: Collection[str] | None = None, excluding: Collection[str] = ()
    ) -> PlanRecord | None:
        """The newest plan whose phase is one of ``phases`` (any if None) and none of ``excluding``.

        Reads that one plan (one query finds it), however many plans the project has accumulated.
        """
        query = PlanRow.select(PlanRow.id)
        if phases is not None:
            query = query.where(PlanRow.phase.in_(list(phases)))
        if excluding:
            query = query.where(PlanRow.phase.not_in(list(excluding)))
        with self._db.reading() as db:
            row = first_row(query.order_by(PlanRow.id.desc()).limit(1), db)
            return None if row is None else self._read_plan(db, row["id"])

    def update_plan(self, plan_id: int, **fields: Any) -> PlanRecord:
        """Change plan fields (see ``_UPDATABLE``); ValueError for an unknown field, phase or plan."""
        unknown = set(fields) - _UPDATABLE
        if unknown:
            raise ValueError(f"cannot update plan {plural(len(unknown), 'field')}: {', '.join(sorted(unknown))}")
        for name in ("phase", "held_from"):
            if fields.get(name) is not None:
                require_choice(name, fields[name], PLAN_PHASES)
        if fields.get("pending_decision") is not None:
            require_choice("pending_decision", fields["pending_decision"], PENDING_DECISIONS)
        values: dict[str, object] = dict(fields)
        with self._db.writing() as db:
            if "slug" in values:
                clash = first_row(
                    PlanRow.select(PlanRow.id).where((PlanRow.slug == values["slug"]) & (PlanRow.id != plan_id)),
                    db,
                )
                if clash is not None:
                    raise ValueError(f"plan slug {values['slug']!r} is already taken")
            values["updated_at"] = now_text()
            if not PlanRow.update(**values).where(PlanRow.id == plan_id).execute(db):
                raise ValueError(f"unknown plan {plan_id}")
            return self._must_read_plan(db, plan_id)

    def replace_subtasks(self, plan_id: int, subtasks: Sequence[tuple[str, str]]) -> PlanRecord:
        """Replace all subtasks of a plan (on revision); the new ones start as pending."""
        with self._db.writing() as db:
            self._must_read_plan(db, plan_id)
            SubtaskRow.delete().where(SubtaskRow.plan_id == plan_id).execute(db)
            self._insert_subtasks(db, plan_id, subtasks)
            PlanRow.update(updated_at=now_text()).where(PlanRow.id == plan_id).execute(db)
            return self._must_read_plan(db, plan_id)

    def set_subtask_status(self, plan_id: int, index: int, status: str) -> PlanRecord:
        """Mark subtask ``index`` (1-based) pending, done or failed; ValueError if there is none."""
        require_choice("status", status, SUBTASK_STATUSES)
        with self._db.writing() as db:
            updated = (
                SubtaskRow.update(status=status)
                .where((SubtaskRow.plan_id == plan_id) & (SubtaskRow.position == index))
                .execute(db)
            )
            if not updated:
                raise ValueError(f"plan {plan_id} has no subtask {index}")
            PlanRow.update(updated_at=now_text()).where(PlanRow.id == plan_id).execute(db)
            return self._must_read_plan(db, plan_id)

    def slug_taken(self, slug: str) -> bool:
        """Whether a plan already uses ``slug``."""
        with self._db.reading() as db:
            return first_row(PlanRow.select(PlanRow.id).where(PlanRow.slug == slug), db) is not None

    def add_plan_event(
        self, plan_id: int, type: PlanEventType, actor: Actor, detail: Mapping[str, object] | None = None
    ) -> PlanEventRecord:
        """Append an event (actor user/agent/system, JSON-serialisable detail) to a plan's history.

        ``type`` must be a :class:`PlanEventType`: ValueError for any other text, so a misspelt
        event never lands in a history that the workflow reads back.
        """
        require_choice("actor", actor, EVENT_ACTORS)
        require_choice("type", type, PLAN_EVENT_TYPES)
        with self._db.writing() as db:
            if first_row(PlanRow.select(PlanRow.id).where(PlanRow.id == plan_id), db) is None:
                raise ValueError(f"unknown plan {plan_id}")
            event_id = PlanEventRow.insert(
                plan_id=plan_id, type=PlanEventType(type).value, actor=Actor(actor).value, detail=detail, created_at=now_text()
            ).execute(db)
            row = first_row(PlanEventRow.select().where(PlanEventRow.id == event_id), db)
        assert row is not None
        return plan_event_record(row)

    def list_plan_events(self, plan_id: int) -> tuple[PlanEventRecord, ...]:
        """A plan's events, oldest first."""
        query = PlanEventRow.select().where(PlanEventRow.plan_id == plan_id).order_by(PlanEventRow.id)
        with self._db.reading() as db:
            rows = all_rows(query, db)
        return tuple(plan_event_record(row) for row in rows)
