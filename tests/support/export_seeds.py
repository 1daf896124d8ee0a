"""A conversation and a plan seeded in a project's store, for the export tests (no agent turn runs)."""

from __future__ import annotations

from pathlib import Path

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import (
    Approve,
    ImplementationReported,
    ReviewFinished,
    ReviewStarted,
    Rework,
    SeatResult,
    aggregate,
)
from tunaflow_tui.core.workflow.service import WorkflowService

PROPOSAL = """Here is my plan.

<!-- tunaflow:plan-proposal -->
## Title
Count words
<!-- /tunaflow:plan-proposal -->
"""


def seed_conversation(project: Path) -> None:
    """main: the user, a proposal, an interrupted answer, a failed turn, an answer with escape sequences."""
    with Store.open(project) as store:
        store.add_message("main", "user", "Please count words in 한국어 text")
        store.add_message("main", "assistant", PROPOSAL, persona="architect", engine="claude", model="sonnet")
        store.add_message("main", "assistant", "Half an answer", persona="architect", engine="codex",
                          status="interrupted")
        failed = store.add_message("main", "assistant", "", persona="developer", engine="gemini")
        store.update_message(failed.id, status="error", error_kind="timeout",
                             error_message="no output for 600 s")
        store.add_message("main", "assistant", "before\x1b[2J\x1b]52;c;c2VjcmV0\x07\x1b]0;pwned\x07after",
                          persona="reviewer", engine="claude")


def seed_plan(project: Path) -> int:
    """Plan 1 with two subtasks, one done, reviewed once (a fail and a seat error), rework asked; its id."""
    with Store.open(project) as store:
        service = WorkflowService(store)
        plan = service.create_plan_from_proposal(
            title="Count words", slug="count-words", description="Add a `words` command.",
            subtasks=[("Parser", "split on spaces"), ("CLI flag", "")],
        )
        impl = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                   mode="chat", kind="implementation", label="tunaflow/count-words")
        store.update_branch(impl.id, git_branch="tunaflow/count-words")
        store.update_plan(plan.id, impl_branch_id=impl.id, git_branch="tunaflow/count-words", base_branch="main")
        store.add_message(impl.shadow_conversation_id, "assistant", "Implemented the parser.",
                          persona="developer", engine="demo")
        service.apply(plan.id, Approve(), actor="user")
        service.mark_subtask_done(plan.id, 1)
        service.apply(plan.id, ImplementationReported(), actor="agent")
        service.apply(plan.id, ReviewStarted(), actor="system")
        failed = aggregate([
            SeatResult(seat="reviewer", engine="claude", verdict="fail", scores={"code_quality": 2},
                       findings=("No test for empty input",), recommendations=("Add a test",)),
            SeatResult(seat="verifier", engine="codex", verdict=None, error="timed out"),
        ])
        service.apply(plan.id, ReviewFinished(failed), actor="system")
        service.apply(plan.id, Rework(feedback="Please add the test"), actor="user")
        return plan.id
