"""Plans in every group of the workflow board, put there through the workflow service: no agent turn runs.

:func:`seed_board` writes them; the plans said to be worked on (the Developer of one, the reviewers of
another) are worked on by a live process that holds their conversations' leases — pass one from
``other_process.idle_holder()`` as ``holder``.
"""

from __future__ import annotations

from dataclasses import dataclass

from seeded_plans import seat, with_branches

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.leases import LeaseHolder
from tunaflow_tui.core.turns import Usage
from tunaflow_tui.core.workflow import (
    Abandon,
    Accept,
    Approve,
    Hold,
    ImplementationReported,
    ReviewFinished,
    ReviewStarted,
    aggregate,
)
from tunaflow_tui.core.workflow.phases import Actor, PlanEventType
from tunaflow_tui.core.workflow.service import WorkflowService

TESTS = {"command": "pytest", "status": "passed", "exit_code": 0, "summary": "14 passed in 0.52s"}


@dataclass(frozen=True)
class Board:
    """The seeded plans' ids, by where the board shows them."""

    approval: int
    verdict: int
    held: int
    queued: int
    dev: int
    review: int
    done: int
    abandoned: int


def _spent(store: Store, branch_id: int, persona: str, tokens: tuple[int, int], cost: float | None) -> None:
    """An agent's finished reply in the branch, with what it cost."""
    message = store.add_message(f"branch:{branch_id}", "assistant", "Done.", persona=persona, engine="claude")
    store.update_message(message.id, usage=Usage(tokens[0], tokens[1], 0, cost))


def _approved(service: WorkflowService, store: Store, title: str, slug: str,
              subtasks: list[tuple[str, str]]) -> tuple[int, int, int]:
    plan_id = service.create_plan_from_proposal(title=title, slug=slug, subtasks=subtasks).id
    impl, review = with_branches(store, plan_id, slug)
    service.apply(plan_id, Approve(), actor=Actor.USER)
    return plan_id, impl, review


def _developed(service: WorkflowService, store: Store, title: str, slug: str) -> tuple[int, int, int]:
    plan_id, impl, review = _approved(service, store, title, slug, [("Count", ""), ("Report", "")])
    service.record(plan_id, PlanEventType.AGENT_STARTED, Actor.SYSTEM, {"role": "developer", "step": "dev"})
    service.mark_subtask_done(plan_id, 1)
    service.mark_subtask_done(plan_id, 2)
    service.record(plan_id, PlanEventType.AGENT_FINISHED, Actor.SYSTEM, {"role": "developer", "status": "done"})
    _spent(store, impl, "developer", (41_000, 3_200), 0.38)
    service.apply(plan_id, ImplementationReported(), actor=Actor.AGENT)
    return plan_id, impl, review


def seed_board(store: Store, holder: LeaseHolder) -> Board:
    """Eight plans: two questions and a held plan waiting for you, one queued, a Developer and a review at
    work (``holder`` holds their leases), one done, one abandoned."""
    service = WorkflowService(store)
    approval = service.create_plan_from_proposal(
        title="Add OAuth login with GitHub and Google accounts for the team dashboard", slug="add-oauth-login",
        subtasks=[("Client", ""), ("Callback", ""), ("Sessions", "")]).id

    verdict, _impl, review_branch = _developed(service, store, "Report the longest words", "longest-words")
    service.apply(verdict, ReviewStarted(), actor=Actor.SYSTEM)
    service.record(verdict, PlanEventType.TESTS_RAN, Actor.SYSTEM, {**TESTS, "status": "failed", "exit_code": 1,
                                                                   "summary": "1 failed, 13 passed in 0.61s"})
    _spent(store, review_branch, "reviewer", (12_000, 900), None)
    service.apply(verdict, ReviewFinished(aggregate([seat("reviewer", "fail", "The empty file case crashes")])),
                  actor=Actor.AGENT)

    held = service.create_plan_from_proposal(title="로그인 화면 문구 수정", slug="login-copy").id
    service.apply(held, Hold(), actor=Actor.USER)

    queued, _impl, _review = _approved(service, store, "Cache the word counts between runs", "cache-counts",
                                       [("Cache file", ""), ("Invalidate", "")])
    service.record(queued, PlanEventType.PLAN_QUEUED, Actor.SYSTEM, {"working": 3, "limit": 3})

    dev, dev_impl, _review = _approved(service, store, "Count sentences as well as words", "count-sentences",
                                       [("Split sentences", ""), ("Count them", ""), ("Document it", "")])
    service.record(dev, PlanEventType.AGENT_STARTED, Actor.SYSTEM, {"role": "developer", "step": "dev"})
    service.mark_subtask_done(dev, 1)
    _spent(store, dev_impl, "developer", (8_400, 600), 0.07)
    store.acquire_lease(f"branch:{dev_impl}", role="developer", holder=holder)

    review, _impl, review_branch = _developed(service, store, "Add a word frequency report", "word-frequency")
    service.apply(review, ReviewStarted(), actor=Actor.SYSTEM)
    service.record(review, PlanEventType.TESTS_RAN, Actor.SYSTEM, TESTS)
    service.record(review, PlanEventType.AGENT_STARTED, Actor.SYSTEM, {"role": "review", "step": "review"})
    store.acquire_lease(f"branch:{review_branch}", role="reviewer", holder=holder)

    done, _impl, _review = _developed(service, store, "Fix the exit codes of the CLI", "exit-codes")
    service.apply(done, ReviewStarted(), actor=Actor.SYSTEM)
    service.record(done, PlanEventType.TESTS_RAN, Actor.SYSTEM, TESTS)
    service.apply(done, ReviewFinished(aggregate([seat("reviewer", "pass"), seat("verifier", "pass")])),
                  actor=Actor.AGENT)
    service.apply(done, Accept(), actor=Actor.USER)

    abandoned = service.create_plan_from_proposal(title="Rewrite textstats in Rust", slug="rewrite-rust").id
    service.apply(abandoned, Abandon(reason="not worth it"), actor=Actor.USER)
    return Board(approval, verdict, held, queued, dev, review, done, abandoned)
