"""The context pack view: every section with its tokens, its budget, what was cut and its text, for
the turn about to be sent and for the last turn sent."""

from __future__ import annotations

from app_harness import demo_settings, posted, send
from textual.widgets import DataTable, Static
from waiting import until

from tunaflow_tui.screens.pickers import ContextPackScreen, PickerScreen

REQUEST = "Add a word frequency report"


def shown(app) -> bool:
    """The context pack view is open with its table filled."""
    screen = app.screen
    return isinstance(screen, ContextPackScreen) and bool(screen.query("#sections")) \
        and screen.query_one("#sections", DataTable).row_count > 0


def _cells(screen: ContextPackScreen) -> dict[str, list[str]]:
    table = screen.query_one("#sections", DataTable)
    rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
    return {row[0]: row[1:] for row in rows}


async def test_sections_budgets_cuts_and_text_for_the_next_and_the_last_turn(open_app, demo_project) -> None:
    settings = demo_settings(demo_project)
    small = settings.context.model_copy(update={"recent_turns_tokens": 40})
    app, session, runtime = open_app(settings=settings.model_copy(update={"context": small}))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, REQUEST)
        # the next turn starts a new session (as after an engine switch): it gets the full pack
        runtime.store.set_native_session("main", runtime.engine_for("architect")[0].name, None)
        session.tools.show_context_pack()
        await until(pilot, lambda: shown(app), "the context pack view")
        screen = app.screen
        assert screen.pack.title == "next turn"
        cells = _cells(screen)
        assert int(cells["persona"][0].replace(",", "")) > 0  # the persona is counted, never 0
        assert cells["project"][1] == f"{small.project_tokens:,}"
        _tokens, budget, cut = cells["recent"]
        assert budget == "40" and cut.endswith("tokens") and int(cut.split()[0].replace(",", "")) > 0
        text = screen.query_one("#section-text", Static)
        assert "You are" in str(text.render()) or str(text.render()).strip()  # the persona's own text
        await pilot.press("down")  # the project section: its text below the table
        await until(pilot, lambda: "Project: textstats" in str(text.render()), "the project section's text",
                    limit=20)

        await pilot.press("l")
        assert screen.pack.title == "last turn sent"
        assert "Context pack: last turn sent" in str(screen.query_one("#dialog").border_title)
        request_row = [row.name for row in screen.pack.rows].index("request")
        screen.query_one("#sections", DataTable).move_cursor(row=request_row)
        await until(pilot, lambda: REQUEST in str(text.render()), "the request the last turn was sent", limit=20)
        await pilot.press("l")
        assert screen.pack.title == "next turn"


async def test_before_any_turn_only_the_next_turn_is_shown(open_app, demo_project) -> None:
    app, session, _runtime = open_app(settings=demo_settings(demo_project))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.query("#project-sidebar"), "the sidebar")
        session.tools.show_context_pack()
        await until(pilot, lambda: shown(app), "the context pack view")
        assert [pack.title for pack in app.screen.packs] == ["next turn"]
        await pilot.press("l")  # nothing else to show: the key does nothing
        assert app.screen.pack.title == "next turn"


async def test_a_linked_session_is_dropped_from_the_view(open_app, demo_project) -> None:
    """The last turn, in a branch, cited two linked sessions: x drops one; the branch's next pack goes
    without it and linking the branch again never brings it back."""
    from tunaflow_tui.runtime.context import SentPack
    from tunaflow_tui.runtime.links import link_new_conversation, pack_links

    app, session, runtime = open_app(settings=demo_settings(demo_project))
    store = runtime.store
    spike = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                                kind="general", label="cache spike")
    branch = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                                 kind="general", label="report")
    cid = branch.shadow_conversation_id
    store.add_message(cid, "user", "Where should the word counts be cached?")
    store.add_session_link(cid, "main", "related", "The word frequency report counts words per file.")
    store.add_session_link(cid, spike.shadow_conversation_id, "related", "An unrelated spike about colours.")
    runtime.last_sent = SentPack("architect", cid, runtime.context.build(role="architect", conversation_id=cid,
                                                                         request="Where should the counts live?"))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.query("#project-sidebar"), "the sidebar")
        session.tools.show_context_pack()
        await until(pilot, lambda: shown(app), "the context pack view")
        screen = app.screen
        await pilot.press("x")  # the next turn in main cites nothing: said, nothing to pick
        assert screen is app.screen
        await pilot.press("l")
        assert screen.pack.title == "last turn sent"
        assert "x: drop a link" in str(screen.query_one("#pack-keys").render())
        links_row = [row.name for row in screen.pack.rows].index("links")
        screen.query_one("#sections", DataTable).move_cursor(row=links_row)
        text = screen.query_one("#section-text", Static)
        await until(pilot, lambda: "cache spike" in str(text.render()), "the links section's text")
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the links to choose from")
        labels = [label for _value, label in app.screen.choices]
        assert any("cache spike" in label for label in labels) and any("main" in label for label in labels)
        spike_index = next(i for i, label in enumerate(labels) if "cache spike" in label)
        await pilot.press(*["down"] * spike_index, "enter")
        await until(pilot, lambda: app.screen is screen and len(screen.pack.links) == 1, "the link dropped")
        assert screen.pack.title == "last turn sent" and "main" in screen.pack.links[0].label
        assert any("Dropped the link" in n.message for n in posted(app))
        after = runtime.context.build(role="architect", conversation_id=cid, request="and now?")
        cited = next(s for s in after.sections if s.name == "links").text
        assert "word frequency report" in cited and "cache spike" not in cited
        assert link_new_conversation(runtime, cid) == ()
        assert [link.to_conversation_id for link in pack_links(runtime, cid)] == ["main"]


async def test_a_resumed_turn_shows_what_it_has_not_seen_and_the_exact_prompt(open_app, demo_project) -> None:
    """After an adopt, the Architect's next turn resumes its session: the view shows the "since" section
    with the summary and the whole prompt; once sent, the last turn is that prompt, and the next has none."""
    from tunaflow_tui.viewmodels.context_pack import PROMPT_ROW

    summary = "Stop words are left out of the report."
    app, session, runtime = open_app(settings=demo_settings(demo_project))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, "Which words does the report count?")
        answer = runtime.store.list_messages("main")[-1]
        branch = runtime.fork("main", answer.id, label="stop words")
        runtime.store.add_message(branch.shadow_conversation_id, "assistant", "Skip stop words.", persona="architect")
        await runtime.adopt_branch(branch.id, summary=summary)

        session.tools.show_context_pack()
        await until(pilot, lambda: shown(app), "the context pack view")
        screen = app.screen
        assert screen.pack.title == "next turn" and "resumes its native session" in screen.pack.intro
        names = [row.name for row in screen.pack.rows]
        assert "since" in names and "project" not in names, "a resumed session has the project already"
        text = screen.query_one("#section-text", Static)
        screen.query_one("#sections", DataTable).move_cursor(row=names.index(PROMPT_ROW))
        await until(pilot, lambda: "## Since your last turn" in str(text.render()), "the whole prompt")
        assert summary in str(text.render())
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ContextPackScreen), "the view closed")

        await send(pilot, app, "Go on.")
        session.tools.show_context_pack()
        await until(pilot, lambda: shown(app), "the context pack view again")
        screen = app.screen
        assert summary not in screen.pack.rows[-1].text, "the next turn does not send it again"
        await pilot.press("l")
        assert screen.pack.title == "last turn sent" and "resumed session" in screen.pack.intro
        names = [row.name for row in screen.pack.rows]
        text = screen.query_one("#section-text", Static)
        screen.query_one("#sections", DataTable).move_cursor(row=names.index(PROMPT_ROW))
        await until(pilot, lambda: summary in str(text.render()), "the prompt the last turn was sent")
        assert str(text.render()).rstrip().endswith("Go on.")
