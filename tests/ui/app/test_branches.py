"""Branches in the app: the message cursor forks, the branch talks in the pane, the tree, adopt."""

from __future__ import annotations

from typing import Any

from app_harness import posted, screen_text, settle
from holding_engine import holding_factory
from waiting import until

from tunaflow_tui.runtime.runtime import WorkflowRuntime
from tunaflow_tui.widgets.branch_thread import BranchThread
from tunaflow_tui.widgets.message_block import MessageBlock


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


def thread(app: Any) -> BranchThread | None:
    found = app.workspace.pane.query(BranchThread)
    return found.first() if found else None


async def test_the_message_cursor_and_one_key_fork_the_selected_message_into_the_drawer(open_app) -> None:
    app, session, runtime = open_app()
    ids = seed_main(runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: len(app.chat_view.blocks()) >= 4, "the seeded messages")
        await pilot.press("escape")  # the cursor on the newest message
        await pilot.press("up", "up")
        assert app.chat_view.focused_message_id == ids[1]
        await pilot.press("b")
        await until(pilot, lambda: thread(app) is not None, "the branch in the pane")
        [branch] = runtime.store.list_branches()
        assert branch.checkpoint_id == ids[1] and branch.conversation_id == "main"
        assert app.workspace.mode == "drawer"
        await until(pilot, lambda: app.focused is not None and thread(app).composer.has_focus_within,
                    "the cursor in the branch's composer")
        text = screen_text(app)
        assert "inherited context" in text  # the demo engine cannot fork its own session
        assert f"Architect (demo) in branch {branch.id}" in text


def fork_seeded(runtime: WorkflowRuntime, at: int, label: str | None = None) -> int:
    """A branch of main at message ``at`` (through the runtime, as the fork key does)."""
    return runtime.fork("main", at, label=label).id


async def open_in_pane(pilot: Any, app: Any, branch_id: int) -> BranchThread:
    app.controller.panes  # noqa: B018 - the session exists once the app runs
    await app.controller.panes.open_branch(branch_id, reveal=True, focus=True)
    await until(pilot, lambda: thread(app) is not None, "the branch in the pane")
    found = thread(app)
    assert found is not None
    return found


async def test_the_branch_answers_in_the_pane_while_main_answers_and_the_tree_marks_it_live(open_app) -> None:
    factory, engine = holding_factory("architect")  # every Architect turn stops mid-answer until released
    app, session, runtime = open_app(engine_factory=factory)
    ids = seed_main(runtime)
    branch_id = fork_seeded(runtime, ids[1], "formats")
    async with app.run_test(size=(120, 40)) as pilot:
        branch = await open_in_pane(pilot, app, branch_id)
        app.composer.focus_input()
        app.composer.input.load_text("Main: and the file encoding?")
        await pilot.press("enter")
        await until(pilot, lambda: _writing(runtime, "main"), "main's Architect writing")
        composer = branch.composer
        assert composer is not None
        composer.focus_input()
        composer.input.load_text("Branch: what about lines instead?")
        await pilot.press("enter")
        await until(pilot, lambda: _writing(runtime, f"branch:{branch_id}"), "the branch's Architect writing")
        assert _writing(runtime, "main"), "both answer at once"
        await until(pilot, lambda: "● formats" in screen_text(app), "the live mark in the tree")
        assert runtime.store.list_messages(f"branch:{branch_id}")[0].content == "Branch: what about lines instead?"
        assert "Main: and the file encoding?" not in [m.content for m in runtime.store.list_messages(f"branch:{branch_id}")]
        engine().release()
        await settle(pilot, app)
        assert [m.role for m in runtime.store.list_messages(f"branch:{branch_id}")] == ["user", "assistant"]
        assert runtime.store.list_messages("main")[-1].status == "done"
        assert "● formats" not in screen_text(app)


def _writing(runtime: WorkflowRuntime, conversation_id: str) -> bool:
    return any(m.status == "streaming" for m in runtime.store.list_messages(conversation_id))
