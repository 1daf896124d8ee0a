"""The merge-conflict card lists the files in conflict from the plan's conflict event (structured), each
on its own line — a file name with a comma in it stays one file — and reads events written before the
event named them ``files`` (``conflicted_files``) too.

The plan is seeded done through the workflow service, then stopped at its conflict: no merge runs.
"""

from __future__ import annotations

from app_harness import screen_text, settle
from seeded_plans import seat, with_branches
from waiting import until

from tunaflow_tui.core.workflow import (
    Accept,
    Approve,
    ImplementationReported,
    ReviewFinished,
    ReviewStarted,
    aggregate,
)
from tunaflow_tui.core.workflow.commands import MergeConflicted
from tunaflow_tui.core.workflow.phases import Actor, PlanEventType
from tunaflow_tui.core.workflow.service import WorkflowService
from tunaflow_tui.widgets.decision.conflict_card import ConflictCard

FILES = ("src/a, b.py", "docs/notes.md")


def _done(service: WorkflowService, store, title: str, slug: str) -> int:  # type: ignore[no-untyped-def]
    plan_id = service.create_plan_from_proposal(title=title, slug=slug, subtasks=[("Do it", "")]).id
    with_branches(store, plan_id, slug)
    service.apply(plan_id, Approve(), actor=Actor.USER)
    service.apply(plan_id, ImplementationReported(), actor=Actor.AGENT)
    service.apply(plan_id, ReviewStarted(), actor=Actor.SYSTEM)
    service.apply(plan_id, ReviewFinished(aggregate([seat("reviewer", "pass"), seat("verifier", "pass")])),
                  actor=Actor.AGENT)
    service.apply(plan_id, Accept(), actor=Actor.USER)
    return plan_id


def _files_block(card: ConflictCard) -> list[str]:
    text = "\n".join(str(static.render()) for static in card.query(".files"))
    return [line.strip() for line in text.splitlines()[1:]]


async def test_the_conflict_card_lists_each_file_its_event_recorded(open_app) -> None:
    app, _session, runtime = open_app()
    service = WorkflowService(runtime.store)
    plan_id = _done(service, runtime.store, "Count words", "count-words")
    service.apply(plan_id, MergeConflicted(base="main", files=FILES), actor=Actor.USER)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await until(pilot, lambda: isinstance(app.decision_dock.card_for(plan_id), ConflictCard), "the conflict card")
        card = app.decision_dock.card_for(plan_id)
        assert isinstance(card, ConflictCard)
        assert card.view.files == FILES
        await until(pilot, lambda: _files_block(card) == list(FILES), "one line per file")
        assert "docs/notes.md" in screen_text(app)
        assert "conflicts in 2 files" in screen_text(app), "its sentence counts them; the list names them"


async def test_an_older_conflict_event_naming_conflicted_files_is_read_too(open_app) -> None:
    app, _session, runtime = open_app()
    service = WorkflowService(runtime.store)
    plan_id = _done(service, runtime.store, "Count lines", "count-lines")
    service.apply(plan_id, MergeConflicted(base="main", files=("old.py",)), actor=Actor.USER)
    # as an earlier tunaflow wrote it: the files under "conflicted_files"
    service.record(plan_id, PlanEventType.MERGE_CONFLICT, Actor.USER,
                   {"kind": "conflict", "base": "main", "conflicted_files": list(FILES)})
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await until(pilot, lambda: isinstance(app.decision_dock.card_for(plan_id), ConflictCard), "the conflict card")
        card = app.decision_dock.card_for(plan_id)
        assert isinstance(card, ConflictCard)
        assert card.view.files == FILES
