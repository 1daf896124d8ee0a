"""Branches in the app: the message cursor forks, the branch talks in the pane, the tree, adopt."""

from __future__ import annotations

from typing import Any

from app_harness import posted, run_from_palette, screen_text, settle
from branch_seeds import fork_seeded, open_in_pane, seed_branch, seed_main, thread
from holding_engine import holding_factory
from waiting import until

from tunaflow_tui.runtime.runtime import WorkflowRuntime
from tunaflow_tui.widgets.sidebar import Sidebar


async def test_the_message_cursor_and_one_key_fork_the_selected_message_into_the_drawer(open_app: Any) -> None:
    app, _session, runtime = open_app()
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
        assert "context: inherited" in text  # the demo engine cannot fork its own session
        assert f"Architect (demo) in branch {branch.id}" in text


async def test_the_branch_answers_in_the_pane_while_main_answers_and_the_tree_marks_it_live(open_app: Any) -> None:
    factory, engine = holding_factory("architect")  # every Architect turn stops mid-answer until released
    app, _session, runtime = open_app(engine_factory=factory)
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


def _last(runtime: WorkflowRuntime, conversation_id: str) -> int:
    return runtime.store.list_messages(conversation_id, limit=100)[-1].id


def _writing(runtime: WorkflowRuntime, conversation_id: str) -> bool:
    return any(m.status == "streaming" for m in runtime.store.list_messages(conversation_id))


async def test_adopt_writes_a_summary_the_user_edits_and_main_gets_the_card_while_the_branch_moves_to_archive(
        open_app: Any) -> None:
    from tunaflow_tui.screens.adopt_editor import AdoptEditorScreen
    from tunaflow_tui.widgets.decision.records.adopt_record import AdoptCard

    app, _session, runtime = open_app()
    ids = seed_main(runtime)
    branch_id = fork_seeded(runtime, ids[1], "line counts")
    seed_branch(runtime, branch_id)
    nested = runtime.fork(f"branch:{branch_id}", _last(runtime, f"branch:{branch_id}"), label="nested idea").id
    async with app.run_test(size=(120, 40)) as pilot:
        branch = await open_in_pane(pilot, app, branch_id)
        branch.chat.blocks()[-1].focus()
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, AdoptEditorScreen), "the adopt editor")
        summaries = [m for m in runtime.store.list_messages(f"branch:{branch_id}") if m.persona == "summarizer"]
        assert summaries and summaries[-1].status == "done", "the summarizer wrote in the branch"
        editor = app.screen
        area = editor.query_one("TextArea")
        assert area.text.strip(), "the summary is in the editor"
        area.load_text("Keep words; add a line total.")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.chat_view.query(AdoptCard), "the adopt card in main")
        card = app.chat_view.query(AdoptCard).first()
        text = screen_text(app)
        assert "Adopted branch" in text and "line counts" in text and "2 messages · demo" in text
        assert "Keep words; add a line total." in text
        assert runtime.store.get_branch(branch_id).status == "adopted"
        assert runtime.store.get_branch(nested).status == "archived", "its branches go to the Archive with it"
        await settle(pilot, app)
        archive = screen_text(app).split("Archive", 1)[1]
        assert "[adopted] line cou" in archive and "[archived] neste" in archive
        [adopted] = app.query_one(Sidebar).sections.archive
        assert adopted.id == branch_id and [c.id for c in adopted.children] == [nested]
        assert not app.query_one(Sidebar).sections.branches
        # the card's key opens the adopted branch, read-only
        card.parent.focus()  # the message holding the card
        await pilot.press("o")
        await until(pilot, lambda: thread(app) is not None and thread(app).read_only, "the adopted branch, read-only")
        assert thread(app).composer is None


async def test_adopting_an_empty_branch_is_refused_with_a_clear_message(open_app: Any) -> None:
    app, _session, runtime = open_app()
    ids = seed_main(runtime)
    branch_id = fork_seeded(runtime, ids[1], "empty")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_in_pane(pilot, app, branch_id)
        await run_from_palette(pilot, app, "Adopt branch")
        await until(pilot, lambda: any("nothing to adopt" in str(n.message) for n in posted(app)), "the refusal")
        assert runtime.store.get_branch(branch_id).status == "active"
        assert [m.role for m in runtime.store.list_messages("main", limit=100)] == ["user", "assistant"] * 2


async def test_without_a_summarizer_engine_the_card_carries_the_last_reply_cut_and_says_so(open_app: Any) -> None:
    from tunaflow_tui.screens.adopt_editor import AdoptEditorScreen
    from tunaflow_tui.widgets.decision.records.adopt_record import AdoptCard

    app, _session, runtime = open_app()
    roles = runtime.settings.roles.model_copy(update={"summarizer": "nowhere"})
    runtime.settings = runtime.settings.model_copy(update={"roles": roles})
    ids = seed_main(runtime)
    branch_id = fork_seeded(runtime, ids[1], "long answer")
    runtime.store.add_messages(f"branch:{branch_id}", [
        {"role": "user", "content": "Explain at length."},
        {"role": "assistant", "persona": "architect", "engine": "demo", "content": "word " * 200},
    ])
    async with app.run_test(size=(120, 40)) as pilot:
        await open_in_pane(pilot, app, branch_id)
        await run_from_palette(pilot, app, "Adopt branch")
        await until(pilot, lambda: isinstance(app.screen, AdoptEditorScreen), "the adopt editor")
        await until(pilot, lambda: "cut at 300" in screen_text(app), "cut at 300 on screen")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.chat_view.query(AdoptCard), "the adopt card in main")
        await pilot.press("f6")  # the drawer covers the chat's right side
        await until(pilot, lambda: app.workspace.mode == "hidden", "the pane hidden")
        text = screen_text(app)
        assert "No summary: no summarizer engine is configured" in text
        meta = runtime.store.list_messages("main", limit=100)[-1].meta
        assert meta["summary_source"] == "last_reply_cut" and len(str(meta["summary"])) <= 301


async def test_the_summary_streams_in_the_branch_and_the_cancel_key_stops_it_with_nothing_adopted(
        open_app: Any) -> None:
    factory, engine = holding_factory("summarizer")  # the summary stops mid-way until released
    app, _session, runtime = open_app(engine_factory=factory)
    ids = seed_main(runtime)
    branch_id = fork_seeded(runtime, ids[1], "to cancel")
    seed_branch(runtime, branch_id)
    async with app.run_test(size=(120, 40)) as pilot:
        branch = await open_in_pane(pilot, app, branch_id)
        branch.chat.blocks()[-1].focus()
        await pilot.press("a")
        await until(pilot, lambda: engine().holding("summarizer"), "the summarizer writing")
        await until(pilot, lambda: any(b.is_streaming for b in thread(app).chat.blocks()), "the summary streaming")
        await pilot.press("f4")
        await until(pilot, lambda: any("nothing was adopted" in str(n.message) for n in posted(app)), "the cancel")
        await settle(pilot, app)
        assert runtime.store.get_branch(branch_id).status == "active"
        assert [m.role for m in runtime.store.list_messages("main", limit=100)] == ["user", "assistant"] * 2
