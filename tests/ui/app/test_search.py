"""Project search in the app: typing searches (debounced, off the event loop), hits say where they
were written, and opening one shows it in its conversation or branch however far back it is.

Conversations are seeded through the store; no agent turn runs. Full-text search serves these
tests (embeddings off); the tmux test and ``test_search_with_the_real_model`` use the model.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from app_harness import demo_settings, posted, screen_text
from textual.widgets import Input
from waiting import until

from tunaflow_tui.app import TunaflowApp
from tunaflow_tui.core.settings import Settings
from tunaflow_tui.core.storage import Store
from tunaflow_tui.runtime.events import MemoryProgress, NoticeRaised
from tunaflow_tui.runtime.memory import unavailable_notice
from tunaflow_tui.screens.search_screen import SearchScreen
from tunaflow_tui.viewmodels.search_views import SearchHitView, SearchResultsView

FILLER = 150
"""Messages after the one searched for: far more than the chat mounts."""


def full_text_only(project: Path) -> Settings:
    settings = demo_settings(project)
    return settings.model_copy(update={"memory": settings.memory.model_copy(update={"embeddings": False})})


def seed_main(store: Store) -> int:
    """A long main conversation with one message about a zanzibar parser far back; its id."""
    store.add_messages("main", [{"role": "user", "content": f"Question {i} about the tokenizer."}
                                for i in range(20)])
    target = store.add_message("main", "assistant", "The zanzibar parser keeps quoted markers inert.",
                               persona="architect", engine="demo")
    store.add_messages("main", [{"role": "user" if i % 2 else "assistant", "content": f"Filler turn {i}.",
                                 "persona": None if i % 2 else "architect"} for i in range(FILLER)])
    return target.id


def seed_branch(store: Store) -> tuple[int, int]:
    """A branch whose conversation holds the only message about a quokka cache; (branch id, message id)."""
    checkpoint = store.add_message("main", "user", "Where should the cache live?")
    branch = store.create_branch(conversation_id="main", checkpoint_id=checkpoint.id, parent_branch_id=None,
                                 mode="chat", kind="general", label="cache experiments")
    cid = f"branch:{branch.id}"
    store.add_messages(cid, [{"role": "user", "content": f"Branch note {i}."} for i in range(60)])
    target = store.add_message(cid, "assistant", "Put the quokka cache beside the index.",
                               persona="developer", engine="demo")
    store.add_messages(cid, [{"role": "user", "content": f"Later branch note {i}."} for i in range(60)])
    return branch.id, target.id


def search_screen(app: TunaflowApp) -> SearchScreen:
    screen = app.screen
    assert isinstance(screen, SearchScreen), f"the search view is not open: {screen!r}"
    return screen


async def search_for(pilot, app: TunaflowApp, words: str) -> SearchScreen:
    """Open search with its key, type ``words`` and wait for their results."""
    await pilot.press("ctrl+f")
    await until(pilot, lambda: isinstance(app.screen, SearchScreen), "the search view")
    screen = search_screen(app)
    await pilot.press(*words)
    await until(pilot, lambda: screen.results is not None and screen.results.query == words
                and not screen.searching, f"results for {words!r}")
    return screen


async def test_a_hit_far_back_in_main_opens_there_focused(open_app, demo_project) -> None:
    """Typing finds the message; enter shows it in the main chat with its neighbours, focused."""
    app, _session, runtime = open_app(settings=full_text_only(demo_project))
    target = seed_main(runtime.store)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.query("#project-sidebar") and app.chat_view.blocks(), "the chat")
        assert app.chat_view.block_for(target) is None  # far back: not mounted
        screen = await search_for(pilot, app, "zanzibar")
        [hit] = screen.results.hits
        assert (hit.where, hit.speaker) == ("Main", "Architect · demo")
        shown = screen_text(app)
        assert "Main · Architect · demo" in shown and "zanzibar parser" in shown
        await pilot.press("enter")
        await until(pilot, lambda: app.chat_view.focused_message_id == target, "the hit focused in the chat")
        chat = app.chat_view
        assert chat.has_newer and chat.has_older  # its page only: the rest loads on scroll
        assert len(chat.blocks()) <= chat.window_size + 2
        # the chat scrolls the hit into view once the messages above it are laid out
        await until(pilot, lambda: "zanzibar parser" in screen_text(app), "the hit on screen")


async def test_a_branch_hit_opens_in_the_branch_pane_at_that_message(open_app, demo_project) -> None:
    app, session, runtime = open_app(settings=full_text_only(demo_project))
    branch_id, target = seed_branch(runtime.store)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.query("#project-sidebar"), "the sidebar")
        screen = await search_for(pilot, app, "quokka")
        [hit] = screen.results.hits
        assert hit.where == "↳ cache experiments" and hit.branch_id == branch_id
        await pilot.press("down")  # through the list, as a user picks a hit
        await until(pilot, lambda: app.focused is screen.query_one("#hits"), "the hits focused")
        await pilot.press("enter")
        cid = f"branch:{branch_id}"
        await until(pilot, lambda: (chat := session.panes.chat_for(cid)) is not None
                    and chat.focused_message_id == target, "the hit focused in the branch pane")
        assert app.workspace.mode == "drawer"
        ids = [block.message_id for block in session.panes.chat_for(cid).blocks()]
        assert ids == list(range(ids[0], ids[0] + len(ids))), ids  # one page around the hit, nothing else
        await until(pilot, lambda: "quokka cache" in screen_text(app), "the hit drawn in the branch pane")


async def test_up_on_the_first_hit_returns_to_the_words(open_app, demo_project) -> None:
    """down goes from the box to the hits; up from the first hit comes back, to type more."""
    app, _session, runtime = open_app(settings=full_text_only(demo_project))
    runtime.store.add_messages("main", [{"role": "user", "content": f"The walrus index, note {i}."} for i in range(3)])
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.query("#project-sidebar"), "the sidebar")
        screen = await search_for(pilot, app, "walrus")
        assert len(screen.results.hits) == 3
        hits, box = screen.query_one("#hits"), screen.query_one("#query", Input)
        await pilot.press("down")
        await until(pilot, lambda: app.focused is hits, "the hits focused")
        await pilot.press("down")
        assert hits.highlighted == 1
        await pilot.press("up")
        assert app.focused is hits and hits.highlighted == 0  # up within the list first
        await pilot.press("up")
        await until(pilot, lambda: app.focused is box, "the query box focused again")
        assert hits.highlighted == 0  # the list did not wrap to its last hit
        await pilot.press(*" note")
        assert box.value == "walrus note"


async def test_typing_never_waits_for_a_search(open_app, demo_project) -> None:
    """A search that hangs holds neither the keys nor the box; a stale result never shows."""
    app, _session, _runtime = open_app(settings=full_text_only(demo_project))
    release = threading.Event()
    asked: list[str] = []

    def slow_search(query: str) -> SearchResultsView:
        asked.append(query)
        if query == "slow":
            release.wait(30)
        hit = SearchHitView(1, "main", "Main", "You", "12:00", f"about «{query}»")
        return SearchResultsView(query, (hit,), "fts")

    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = SearchScreen(slow_search)
        await app.push_screen(screen)
        await pilot.press(*"slow")
        await until(pilot, lambda: "slow" in asked, "the slow search to start", limit=20)
        await pilot.press("backspace", *"w")  # typed while the search hangs on its thread
        box = screen.query_one("#query", Input)
        assert box.value == "slo" + "w" and screen.searching
        await pilot.press(*"er")
        assert box.value == "slower"
        await until(pilot, lambda: screen.results is not None and screen.results.query == "slower",
                    "the results for the words in the box")
        release.set()
        await pilot.pause(0.05)
        assert screen.results.query == "slower"  # the hung search's late answer is dropped
        assert "about slower" in screen_text(app)
    release.set()


async def test_search_from_the_palette_and_the_help(open_app, demo_project) -> None:
    from app_harness import run_from_palette

    app, _session, _runtime = open_app(settings=full_text_only(demo_project))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.query("#project-sidebar"), "the sidebar")
        await run_from_palette(pilot, app, "Search")
        await until(pilot, lambda: isinstance(app.screen, SearchScreen), "the search view from the palette")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, SearchScreen), "the search view closing")
        keys = {(row.keys, row.description) for section in app.binding_sections() for row in section.rows}
        assert any(description == "Search" and key.startswith("f5") for key, description in keys), keys


async def test_backfill_progress_and_a_missing_model_said_once(open_app, demo_project) -> None:
    app, session, runtime = open_app(settings=full_text_only(demo_project))
    status = lambda: str(app.query_one("#status-line").render())  # noqa: E731
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.query("#project-sidebar"), "the sidebar")
        runtime.emit(MemoryProgress(120, 5000, running=True))
        await until(pilot, lambda: "embedding messages 120/5,000" in status(), "the backfill on the status line")
        runtime.emit(MemoryProgress(5000, 5000, running=False))
        await until(pilot, lambda: "embedding" not in status(), "the backfill line going")
        reason = "the model package is not installed"
        for _ in range(3):
            runtime.emit(MemoryProgress(0, 10, running=False, unavailable=reason))
        runtime.emit(NoticeRaised(unavailable_notice(reason), "warning"))
        await session.wait_idle()
        await pilot.pause()
        told = [n for n in posted(app) if "Semantic search is off" in n.message]
        assert len(told) == 1 and "full text only" in told[0].message


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_search_view_snapshot(snap_compare, size) -> None:
    """The search view with hits from main and a branch, matched words marked."""
    from tunaflow_tui.app import DemoChatController

    hits = (
        SearchHitView(41, "main", "Main", "Architect · claude · sonnet", "14:03",
                      "…the «zanzibar» parser keeps quoted markers inert, so a «zanzibar» example never fires"),
        SearchHitView(97, "branch:2", "↳ cache experiments", "You", "Nov 28 09:12",
                      "should the «zanzibar» cache live beside the index?"),
        SearchHitView(130, "branch:3", "↳ review: word frequency", "Reviewer · codex", "2025-11-02",
                      "findings: «zanzibar» handling lacks a test for CRLF input"),
    )

    def search(query: str) -> SearchResultsView:
        return SearchResultsView(query, hits, "fts", note="full-text search only: the model is not installed")

    app = TunaflowApp(DemoChatController(), cursor_blink=False)

    async def results(pilot) -> None:
        screen = SearchScreen(search, query="zanzibar")
        await app.push_screen(screen)
        screen.query_one("#query", Input).cursor_blink = False  # a blinking cursor is a different picture
        await until(pilot, lambda: isinstance(app.screen, SearchScreen) and app.screen.results is not None,
                    "the results")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=results)


async def test_a_missing_model_is_said_once_when_the_project_opens(demo_project, tmp_path) -> None:
    """Embedding reports before the app listens: the app still says once that search is full text
    only, and the search view says it too."""
    from tunaflow_tui.core.memory.embedder import Embedder
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.subcommands.open_command import build_app

    missing = Embedder(env={"TUNAFLOW_EMBEDDING_MODEL": str(tmp_path / "no-such-model.onnx")})
    runtime = WorkflowRuntime(demo_project, demo_settings(demo_project), embedder=missing)
    try:
        runtime.store.add_message("main", "user", "The quokka cache.")
        runtime.start_memory()  # before the app listens, as `tunaflow PATH` does
        assert runtime.memory.indexer is not None and runtime.memory.indexer.wait_idle(30)
        app = build_app(runtime, notes=(), cursor_blink=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.query("#project-sidebar"), "the sidebar")
            await app.controller.wait_idle()
            await pilot.pause()
            told = [n for n in posted(app) if "Semantic search is off" in n.message]
            assert len(told) == 1, [n.message for n in posted(app)]
            screen = await search_for(pilot, app, "quokka")
            assert len(screen.results.hits) == 1
            assert "full-text search only" in str(screen.query_one("#search-status").render())
    finally:
        runtime.close()


async def test_snippets_read_as_text_with_query_words_marked_and_alike_hits_as_one(open_app, demo_project) -> None:
    """No backticks, no marker comments; the query word drawn marked; 12 agreeing seats are one hit."""
    from tunaflow_tui.screens.search_screen import MATCH_STYLE, hit_prompt

    app, _session, runtime = open_app(settings=full_text_only(demo_project))
    runtime.store.add_message("main", "assistant", "Counted in `wombat.py`: done.\n<!-- tunaflow:subtask-done:2 -->",
                              persona="developer", engine="demo")
    for _ in range(12):
        runtime.store.add_message("main", "assistant", "Agreed: the **wombat** index stays.", persona="critic")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.query("#project-sidebar"), "the sidebar")
        screen = await search_for(pilot, app, "wombat")
        hits = screen.results.hits
        assert len(hits) == 2 and sorted(len(hit.alike) for hit in hits) == [0, 11]
        shown = screen_text(app)
        assert "and 11 more like it" in shown
        assert "wombat.py: done" in shown, "inline code keeps its punctuation beside it"
        assert "`" not in shown and "**" not in shown and "tunaflow:" not in shown and "<!--" not in shown
        prompt = hit_prompt(next(hit for hit in hits if not hit.alike))
        marked = [prompt.plain[span.start:span.end] for span in prompt.spans if MATCH_STYLE in str(span.style)]
        assert marked == ["wombat"], marked
