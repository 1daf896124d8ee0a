"""Managing branches from the pane: rename, archive, restore, delete, the next-branch key, the palette's
"Branch from message", a right click, and the engine of one branch."""

from __future__ import annotations

from typing import Any

from app_harness import posted, run_from_palette, screen_text
from branch_seeds import fork_seeded, open_in_pane, seed_branch, seed_main, thread
from textual.widgets import Input
from waiting import until

from tunaflow_tui.screens.branch_dialogs import ConfirmBranchScreen, RenameBranchScreen
from tunaflow_tui.screens.pickers import PickerScreen


async def test_rename_archive_restore_from_the_pane_keys(open_app: Any) -> None:
    app, _session, runtime = open_app()
    ids = seed_main(runtime)
    branch_id = fork_seeded(runtime, ids[1], "first try")
    seed_branch(runtime, branch_id)
    async with app.run_test(size=(120, 40)) as pilot:
        branch = await open_in_pane(pilot, app, branch_id)
        branch.chat.blocks()[-1].focus()
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, RenameBranchScreen), "the rename dialog")
        app.screen.query_one(Input).value = "lines, not words"
        await pilot.press("enter")
        await until(pilot, lambda: runtime.store.get_branch(branch_id).label == "lines, not words", "the new label")
        await until(pilot, lambda: "lines, not words" in screen_text(app), "the label in the tree and the pane")

        thread(app).chat.blocks()[-1].focus()
        await pilot.press("x")
        await until(pilot, lambda: runtime.store.get_branch(branch_id).status == "archived", "archived")
        await until(pilot, lambda: thread(app) is not None and thread(app).read_only, "the branch read-only")
        assert thread(app).composer is None and "u restores it" in screen_text(app)

        thread(app).chat.blocks()[-1].focus()
        await pilot.press("u")
        await until(pilot, lambda: runtime.store.get_branch(branch_id).status == "active", "active again")
        await until(pilot, lambda: thread(app) is not None and thread(app).composer is not None, "its composer back")


async def test_deleting_an_active_branch_asks_then_removes_its_messages(open_app: Any) -> None:
    app, _session, runtime = open_app()
    ids = seed_main(runtime)
    branch_id = fork_seeded(runtime, ids[1], "throwaway")
    seed_branch(runtime, branch_id)
    async with app.run_test(size=(120, 40)) as pilot:
        branch = await open_in_pane(pilot, app, branch_id)
        branch.chat.blocks()[-1].focus()
        await pilot.press("delete")
        await until(pilot, lambda: isinstance(app.screen, ConfirmBranchScreen)  # the question, drawn
                    and "deleted with it" in screen_text(app), "the question")
        await until(pilot, lambda: "2 messages are deleted with it" in screen_text(app), "2 messages are deleted with it on screen")
        await pilot.press("escape")  # kept
        await until(pilot, lambda: not isinstance(app.screen, ConfirmBranchScreen), "the question closing")
        assert runtime.store.get_branch(branch_id) is not None
        thread(app).chat.blocks()[-1].focus()
        await pilot.press("delete")
        await until(pilot, lambda: isinstance(app.screen, ConfirmBranchScreen), "the question again")
        await pilot.press("y")
        await until(pilot, lambda: runtime.store.get_branch(branch_id) is None, "the branch deleted")
        assert runtime.store.count_messages(f"branch:{branch_id}") == 0
        await until(pilot, lambda: thread(app) is None, "the pane empty")


async def test_the_next_branch_key_cycles_through_active_branches(open_app: Any) -> None:
    app, _session, runtime = open_app()
    ids = seed_main(runtime)
    first = fork_seeded(runtime, ids[1], "one")
    second = fork_seeded(runtime, ids[3], "two")
    archived = fork_seeded(runtime, ids[3], "old")
    runtime.archive_branch(archived)
    async with app.run_test(size=(120, 40)) as pilot:
        seen = []
        for _ in range(3):
            before = app.controller.panes.branch_conversation
            await pilot.press("f9")
            await until(pilot, lambda b=before: app.controller.panes.branch_conversation != b, "another branch")
            seen.append(app.controller.panes.branch_conversation)
        assert seen == [f"branch:{first}", f"branch:{second}", f"branch:{first}"]
        assert app.workspace.mode == "drawer"


async def test_the_palette_branches_from_the_last_message_when_none_is_selected(open_app: Any) -> None:
    app, _session, runtime = open_app()
    ids = seed_main(runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: len(app.chat_view.blocks()) >= 4, "the seeded messages")
        await run_from_palette(pilot, app, "Branch from message")
        await until(pilot, lambda: runtime.store.list_branches(), "the branch")
        [branch] = runtime.store.list_branches()
        assert branch.checkpoint_id == ids[-1]


async def test_a_right_click_on_a_message_forks_from_it(open_app: Any) -> None:
    app, _session, runtime = open_app()
    ids = seed_main(runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: len(app.chat_view.blocks()) >= 4, "the seeded messages")
        block = app.chat_view.block_for(ids[1])
        await pilot.click(block, button=3)
        await until(pilot, lambda: runtime.store.list_branches(), "the branch")
        assert runtime.store.list_branches()[0].checkpoint_id == ids[1]


async def test_a_branch_of_a_branch_is_forked_from_the_pane_and_nested_in_the_tree(open_app: Any) -> None:
    from tunaflow_tui.widgets.sidebar import Sidebar

    app, _session, runtime = open_app()
    ids = seed_main(runtime)
    parent = fork_seeded(runtime, ids[1], "parent")
    seed_branch(runtime, parent)
    async with app.run_test(size=(120, 40)) as pilot:
        branch = await open_in_pane(pilot, app, parent)
        branch.chat.blocks()[-1].focus()
        await pilot.press("b")
        await until(pilot, lambda: len(runtime.store.list_branches()) == 2, "the branch of the branch")
        child = runtime.store.list_branches()[-1]
        assert child.parent_branch_id == parent and child.conversation_id == f"branch:{parent}"
        await until(pilot, lambda: app.controller.panes.branch_conversation == f"branch:{child.id}", "it in the pane")
        [top] = app.query_one(Sidebar).sections.branches
        assert top.id == parent and [c.id for c in top.children] == [child.id]


async def test_switch_engine_in_the_pane_changes_only_that_branch(open_app: Any) -> None:
    app, _session, runtime = open_app()
    ids = seed_main(runtime)
    branch_id = fork_seeded(runtime, ids[1], "engines")
    architect = runtime.settings.roles.architect
    engines = dict(runtime.settings.engines)
    engines["other"] = engines["demo"].model_copy()
    runtime.settings = runtime.settings.model_copy(update={"engines": engines})
    async with app.run_test(size=(120, 40)) as pilot:
        await open_in_pane(pilot, app, branch_id)
        await run_from_palette(pilot, app, "Switch engine")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the engine picker")
        await until(pilot, lambda: f"branch {branch_id}" in screen_text(app), f"branch {branch_id} on screen")
        picker = app.screen
        picker.query_one("OptionList").highlighted = [v for v, _ in picker.choices].index("other")
        await pilot.press("enter")
        await until(pilot, lambda: runtime.store.get_branch(branch_id).engine == "other", "the branch's engine")
        assert runtime.settings.roles.architect == architect, "main keeps its engine"
        await until(pilot, lambda: "Architect (other) in branch" in screen_text(app), "the pane's recipient")
        assert any("now runs on other" in str(n.message) for n in posted(app))


async def test_the_next_branch_key_with_one_branch_says_there_is_no_other(open_app: Any) -> None:
    app, _session, runtime = open_app()
    ids = seed_main(runtime)
    only = fork_seeded(runtime, ids[1], "one")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f9")  # the pane opens on the only branch
        await until(pilot, lambda: app.controller.panes.branch_conversation == f"branch:{only}", "the branch")
        await pilot.press("f9")
        await until(pilot, lambda: any("Only one branch is open" in n.message for n in posted(app)),
                    "word that there is no other branch", limit=10)
        assert app.controller.panes.branch_conversation == f"branch:{only}"
