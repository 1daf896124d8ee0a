"""Agent output cannot reach the terminal; failed turns can be retried; help lists every key."""

from __future__ import annotations

from app_harness import posted
from textual.widgets import Collapsible, Markdown
from waiting import until

from tunaflow_tui.core.turns import ToolLine
from tunaflow_tui.screens.help import HelpScreen
from tunaflow_tui.viewmodels.chat import ErrorView, MessageView
from tunaflow_tui.widgets.message_block import MarkdownBody, MessageBlock

HOSTILE = (
    "before\x1b[2J\x1b[H\x1b]0;pwned-title\x07\x1b]52;c;cm0gLXJmIC8K\x07"
    "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\\x9b31m after\r\nline\x07"
)


async def test_control_sequences_in_agent_output_render_inert(make_app, read_screen) -> None:
    hostile = MessageView(
        1,
        "assistant",
        "Architect\x1b]0;label-title\x07 · claude",
        HOSTILE,
        usage_text="\x1b[5m1 in\x1b[0m",
        error=ErrorView("crash\x1b[2J", "bad\x1b]0;t\x07", "tail\x1b[31m red"),
        status="error",
    )
    app, _ = make_app([hostile])
    async with app.run_test(size=(120, 40)) as pilot:
        block = await app.chat_view.start_stream(MessageView(2, "assistant", "Dev", "", status="streaming"))
        for piece in ("streamed\x1b", "[2J ok\x1b]0;", "x\x07 done\r", "\n"):
            await block.append(piece)
        await block.finish(MessageView(2, "assistant", "Dev", "streamed\x1b[2J ok\x1b]0;x\x07 done\r\n"))
        await pilot.pause()
        screen = read_screen(app)
        assert app.title == "tunaflow"
        for forbidden in ("\x1b", "\x07", "\x9b", "pwned-title", "label-title", "2J"):
            assert forbidden not in screen
        assert "beforelink after" in screen
        assert "streamed ok done" in screen
        assert "crash: bad" in screen
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "pwned" not in svg
        assert block.query_one(MarkdownBody).source == "streamed ok done\n"


async def test_streamed_control_sequences_are_inert_on_screen_while_the_answer_streams(
        make_app, read_screen) -> None:
    app, _ = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        block = await app.chat_view.start_stream(MessageView(2, "assistant", "Dev", "", status="streaming"))
        # Split inside the sequences: the neutraliser must carry a half-read escape to the next chunk.
        for piece in ("before\x1b[2", "J\x1b]0;pwned-", "title\x07 mid", "dle\x9b31m after", "\r\nline two\x07"):
            await block.append(piece)
        await until(pilot, lambda: block.shows_all and "line two" in read_screen(app), "the streamed text drawn")
        assert block.is_streaming, "looked at while streaming, before finish() neutralises the whole text again"
        screen = read_screen(app)
        for forbidden in ("\x1b", "\x07", "\x9b", "pwned", "2J", "31m"):
            assert forbidden not in screen
        assert "before middle after" in screen
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "pwned" not in svg
        assert app.title == "tunaflow"


async def test_square_brackets_are_not_read_as_markup(make_app, read_screen) -> None:
    app, _ = make_app([MessageView(1, "assistant", "[bold]Architect[/bold]", "x", usage_text="[red]9 in[/red]")])
    async with app.run_test(size=(80, 24)):
        screen = read_screen(app)
        assert "[bold]Architect[/bold]" in screen
        assert "[red]9 in[/red]" in screen


async def test_retry_on_the_error_card_reaches_the_controller(make_app, read_screen) -> None:
    failed = MessageView(7, "assistant", "Reviewer · gemini", "", status="error",
                         error=ErrorView("timeout", "no output for 300 s", "deadline exceeded"))
    app, controller = make_app([failed])
    seen: list[int] = []
    async with app.run_test(size=(80, 24), message_hook=lambda m: seen.append(m.message_id)
                            if isinstance(m, MessageBlock.RetryRequested) else None) as pilot:
        assert "timeout: no output for 300 s" in read_screen(app)
        assert "deadline exceeded" in read_screen(app)
        await pilot.press("escape")  # focus the newest message
        await pilot.press("r")
        await pilot.pause()
        assert controller.retried == [("main", 7)]
        assert set(seen) == {7}


async def test_retry_key_does_nothing_on_a_healthy_message(make_app) -> None:
    app, controller = make_app([MessageView(1, "assistant", "Architect", "fine")])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("escape", "r")
        await pilot.pause()
        assert controller.retried == []


async def test_tools_expand_with_a_key(make_app, read_screen, messages) -> None:
    app, _ = make_app(messages["conversation"]()[:2])
    async with app.run_test(size=(120, 40)) as pilot:
        assert "3 tools used" in read_screen(app)
        assert "src/routes.py" not in read_screen(app)
        await pilot.press("escape", "t")
        await pilot.pause()
        assert "src/routes.py" in read_screen(app)


async def test_help_lists_every_binding_and_the_concepts(make_app, read_screen) -> None:
    app, _ = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        screen = app.screen
        text = " ".join(row.binding_id for section in screen.shown for row in section.rows)
        text += screen.query_one("#help-text", Markdown).source
        for binding_id in ("app.help", "chat.first", "chat.latest", "composer.chat_first", "composer.chat_newest", "message.retry", "composer.send",
                           "composer.newline"):
            assert binding_id in text
        for concept in ("Plan.", "Gates.", "Branches.", "Markers."):
            assert concept in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_keymap_remaps_a_binding_and_help_shows_the_new_key(make_app) -> None:
    app, _ = make_app(keymap={"composer.newline": "ctrl+n"})
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("a", "ctrl+n", "b")
        assert app.composer.text == "a\nb"
        rows = {row.binding_id: row.keys for section in app.binding_sections() for row in section.rows}
        assert rows["composer.newline"] == "^n"  # written the way the footer writes it


async def test_sidebar_toggles_and_no_mouse_flag_is_kept(make_app) -> None:
    app, _ = make_app(mouse=False)
    assert app.mouse_enabled is False
    async with app.run_test(size=(120, 40)) as pilot:
        sidebar = app.query_one("#sidebar")
        assert sidebar.display
        await pilot.press("ctrl+b")
        assert not sidebar.display


async def test_notifications_are_plain_text_so_square_brackets_stay_as_written(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 24)) as pilot:
        app.notify("pytest said: [b]x[/b] and [/oops]")
        await pilot.pause()
        [note] = posted(app)
        assert note.message == "pytest said: [b]x[/b] and [/oops]"
        assert note.markup is False  # the toast shows the text as it is, never as markup


async def test_tools_used_while_an_answer_streams_are_added_to_the_open_list(make_app, read_screen) -> None:
    # an agent at work uses a tool every few seconds: the list grows where it is, still unfolded
    app, _ = make_app([MessageView(1, "user", "You", "Fix the login")])
    async with app.run_test(size=(120, 40)) as pilot:
        block = await app.chat_view.start_stream(MessageView(2, "assistant", "Developer · codex", "", status="streaming"))
        await block.append("Looking at the code.\n\n")
        await block.show_tools((ToolLine("Read", "src/app.py"),))
        await pilot.pause()
        fold = block.query_one(Collapsible)
        assert "1 tool used" in read_screen(app)
        await pilot.press("escape", "t")  # unfolded
        await pilot.pause()
        await block.show_tools((ToolLine("Read", "src/app.py"), ToolLine("Edit", "src/routes.py")))
        await pilot.pause()
        assert block.query_one(Collapsible) is fold and not fold.collapsed
        screen = read_screen(app)
        assert "2 tools used" in screen and "src/app.py" in screen and "src/routes.py" in screen
