"""Seeding branches for the app tests: a short main conversation, a branch of it, the pane showing it."""

from __future__ import annotations

from typing import Any

from waiting import until

from tunaflow_tui.runtime.runtime import WorkflowRuntime
from tunaflow_tui.widgets.branch_thread import BranchThread


def seed_main(runtime: WorkflowRuntime) -> list[int]:
    """A short conversation in main: two questions and two answers (ids in order)."""
    runtime.store.main_conversation()
    before = runtime.store.count_messages("main")
    runtime.store.add_messages("main", [
        {"role": "user", "content": "Should the report count words or lines?"},
        {"role": "assistant", "persona": "architect", "engine": "demo", "content": "Words: the users asked for frequencies."},
        {"role": "user", "content": "And the output format?"},
        {"role": "assistant", "persona": "architect", "engine": "demo", "content": "A table, sorted by count."},
    ])
    return [m.id for m in runtime.store.list_messages("main", limit=10)][before:]


def seed_branch(runtime: WorkflowRuntime, branch_id: int) -> None:
    """One turn in the branch: a question and the Architect's answer."""
    runtime.store.add_messages(f"branch:{branch_id}", [
        {"role": "user", "content": "What if the report counted lines?"},
        {"role": "assistant", "persona": "architect", "engine": "demo",
         "content": "Lines are cheaper to count but say less; keep words and add a line total."},
    ])


def fork_seeded(runtime: WorkflowRuntime, at: int, label: str | None = None) -> int:
    """A branch of main at message ``at`` (through the runtime, as the fork key does)."""
    return runtime.fork("main", at, label=label).id


def thread(app: Any) -> BranchThread | None:
    """The branch the pane shows, if any."""
    found = app.workspace.pane.query(BranchThread)
    return found.first() if found else None


async def open_in_pane(pilot: Any, app: Any, branch_id: int) -> BranchThread:
    """Show a branch in the pane (drawer), the cursor in its composer."""
    await app.controller.panes.open_branch(branch_id, reveal=True, focus=True)
    await until(pilot, lambda: thread(app) is not None, "the branch in the pane")
    found = thread(app)
    assert found is not None
    return found
