"""The chat: streaming follows the tail, a scrolled-up reader is left alone, long chats stay a window."""

from __future__ import annotations

import asyncio
import itertools
import time

from textual.widgets import Static
from waiting import until

from tunaflow_tui.viewmodels.chat import MessageView
from tunaflow_tui.widgets.chat_view import ChatView
from tunaflow_tui.widgets.message_block import MAX_RENDERED_CHARS, MarkdownBody, MessageBlock


def _numbered(count: int) -> list[MessageView]:
    return [
        MessageView(i, "user" if i % 2 else "assistant", "You" if i % 2 else "Architect", f"message number {i}")
        for i in range(1, count + 1)
    ]


def _streaming(message_id: int) -> MessageView:
    return MessageView(message_id, "assistant", "Architect · claude", "", status="streaming")


async def test_streamed_answer_ends_fully_rendered_and_in_view(make_app, read_screen) -> None:
    app, _ = make_app(_numbered(30))
    chunks = [f"Paragraph {i} of the answer.\n\n" for i in range(40)] + ["LAST-LINE-OF-ANSWER"]
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.chat_view
        block = await chat.start_stream(_streaming(31))
        for index, chunk in enumerate(chunks):
            await block.append(chunk)
            if index % 10 == 0:
                await pilot.pause()
        full = "".join(chunks)
        await block.finish(MessageView(31, "assistant", "Architect · claude", full, usage_text="10 in · 90 out"))
        await pilot.pause()
        await pilot.pause()
        assert block.query_one(MarkdownBody).source == full
        assert chat.scroll_y == chat.max_scroll_y > 0
        screen = read_screen(app)
        assert "10 in · 90 out" in screen
        assert "writing…" not in screen


async def test_user_scrolled_up_is_not_moved_by_new_chunks(make_app, read_screen) -> None:
    app, _ = make_app(_numbered(30))
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.chat_view
        block = await chat.start_stream(_streaming(31))
        await block.append("start of the answer\n\n")
        await pilot.pause()
        chat.scroll_page_up(animate=False)
        await pilot.pause()
        position = chat.scroll_y
        assert position < chat.max_scroll_y
        for i in range(30):
            await block.append(f"more text {i}\n\n")
        await pilot.pause()
        assert chat.scroll_y == position
        assert chat.max_scroll_y > position
        assert "more text 29" not in read_screen(app)
        await pilot.press("escape", "end")  # back to the newest text
        await pilot.pause()
        await block.append("the newest line\n\n")
        # the stream's next growth beat brings the new line on screen, following the newest text
        await until(pilot, lambda: "the newest line" in read_screen(app), "the newest line on screen")


async def test_ten_thousand_messages_mount_only_a_bounded_window(make_app) -> None:
    app, _ = make_app(_numbered(10_000))
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.chat_view
        await until(pilot, lambda: chat.blocks() and chat.blocks()[-1].message_id == 10_000, "the newest messages")
        # half the terminal's 40 rows (about two screens of history), laid out taller than a screen:
        # more than a screen to scroll back through before paging
        await until(pilot, lambda: len(chat.blocks()) == 20 and chat.max_scroll_y >= 40,
                    "a window of 20 messages laid out taller than a screen")
        assert chat.blocks()[-1].message_id == 10_000
        assert chat.has_older
        for _ in range(4):
            first = chat.blocks()[0].message_id
            chat.scroll_home(animate=False)  # the user reaches the top: an older page arrives
            await until(pilot, lambda first=first: chat.blocks()[0].message_id != first, "an older page")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert len(chat.blocks()) <= chat.max_mounted
        assert chat.blocks()[0].message_id == 10_000 - 20 - 4 * 20 + 1
        assert chat.has_newer
        assert len(app.query(MessageBlock)) <= chat.max_mounted
        await pilot.press("escape", "end")
        await until(pilot, lambda: not chat.has_newer, "the newest page back")
        await pilot.pause()
        assert chat.blocks()[-1].message_id == 10_000
        assert not chat.has_newer


async def test_up_down_move_between_messages_and_home_jumps_to_the_first(make_app) -> None:
    app, _ = make_app(_numbered(100))
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.chat_view
        await pilot.press("escape")  # leave the composer: the newest message has focus
        assert chat.focused_message_id == 100
        await pilot.press("up", "up")
        assert chat.focused_message_id == 98
        await pilot.press("down")
        assert chat.focused_message_id == 99
        await pilot.press("home")
        await pilot.pause()
        assert chat.blocks()[0].message_id == 1
        assert chat.focused_message_id == 1
        await pilot.press("down")
        assert chat.focused_message_id == 2


async def test_the_opening_window_follows_the_terminal_height(make_app) -> None:
    for size, expected in (((80, 24), 12), ((120, 40), 20), ((240, 70), 35)):
        app, _ = make_app(_numbered(500))
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await pilot.pause()
            assert len(app.chat_view.blocks()) == expected, size
            assert app.chat_view.max_scroll_y > 0, size  # the window overfills the screen


async def test_adding_messages_keeps_the_window_bounded(make_app) -> None:
    app, _ = make_app(_numbered(50))
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.chat_view
        for i in range(51, 86):
            await chat.add_message(MessageView(i, "user", "You", f"new {i}"))
        await pilot.pause()
        assert len(chat.blocks()) <= chat.max_mounted
        assert chat.blocks()[-1].message_id == 85
        assert chat.scroll_y == chat.max_scroll_y


async def test_empty_chat_says_so(make_app, read_screen) -> None:
    app, _ = make_app()
    async with app.run_test(size=(80, 24)):
        assert "No messages yet. Type below and press enter to send." in read_screen(app)


async def test_empty_chat_names_the_send_key_as_remapped(make_app, read_screen) -> None:
    app, controller = make_app(keymap={"composer.send": "ctrl+s"})
    async with app.run_test(size=(80, 24)) as pilot:
        screen = read_screen(app)
        assert "press ctrl+s to send" in screen
        assert "press enter" not in screen
        await pilot.press("h", "i", "ctrl+s")  # the key named is the key that sends
        await pilot.pause()
        assert controller.sent == [("main", "hi")]


async def test_paging_hints_name_the_keys_as_remapped(make_app) -> None:
    app, _ = make_app(_numbered(200), keymap={"chat.first": "g", "chat.latest": "shift+g"})
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.chat_view
        older = chat.query_one("#older-hint", Static)
        assert older.display
        assert str(older.content) == "↑ older messages: scroll up or press g"
        await pilot.press("escape", "g")  # to the chat, then the remapped "first" key
        await pilot.pause()
        newer = chat.query_one("#newer-hint", Static)
        assert newer.display
        assert str(newer.content) == "↓ newer messages: press shift+g"


async def test_ui_stays_responsive_while_ten_megabytes_stream(make_app, read_screen) -> None:
    app, _ = make_app(_numbered(10))
    ticks: list[float] = []
    paragraph = ("lorem ipsum dolor sit amet " * 4 + "\n\n").encode()
    chunk = (paragraph * (65_536 // len(paragraph))).decode()
    total = 10 * 1024 * 1024
    async with app.run_test(size=(80, 24)) as pilot:
        # the loop thread's CPU time at each tick: a gap is time the loop spent working without
        # yielding, not time another process on a busy machine had the CPU (blocking calls on the
        # loop are caught where they are made: tests/ui/app/test_loop_never_blocks.py)
        app.set_interval(0.05, lambda: ticks.append(time.thread_time()))
        block = await app.chat_view.start_stream(_streaming(11))
        started = time.perf_counter()
        sent = 0
        while sent < total:
            await block.append(chunk)
            sent += len(chunk)
            await asyncio.sleep(0)
        full = chunk * (sent // len(chunk))
        await block.finish(MessageView(11, "assistant", "Architect · claude", full))
        elapsed = time.perf_counter() - started
        finished_at = len(ticks)
        await until(pilot, lambda: len(ticks) >= max(3, finished_at + 1), "the timer firing after the stream")
        gaps = [b - a for a, b in itertools.pairwise(ticks)]
        assert elapsed < 60
        assert len(ticks) >= 3
        assert max(gaps) < 3.0, f"the event loop stalled for {max(gaps):.2f}s"
        assert len(block.text) <= MAX_RENDERED_CHARS
        assert block.text == full[: len(block.text)]
        app.chat_view.scroll_end(animate=False)
        await pilot.pause()
        assert "more characters not shown" in read_screen(app)


async def test_chat_view_is_usable_alone() -> None:
    from textual.app import App, ComposeResult

    from tunaflow_tui.viewmodels.chat import ListMessageSource

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield ChatView(ListMessageSource(_numbered(5)), window=3)

    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        chat = app.query_one(ChatView)
        assert [b.message_id for b in chat.blocks()] == [3, 4, 5]
        await chat.load_older()
        await pilot.pause()
        assert [b.message_id for b in chat.blocks()] == [1, 2, 3, 4, 5]
        assert not chat.has_older


async def test_a_long_streamed_answer_keeps_a_bounded_number_of_widgets(make_app) -> None:
    app, _ = make_app(_numbered(4))
    paragraphs = [
        f"Paragraph {i} with `code` and **bold**.\n\n- item {i}\n- another\n\n```python\nx = {i}\n```\n\n"
        for i in range(300)
    ]
    async with app.run_test(size=(100, 30)) as pilot:
        block = await app.chat_view.start_stream(_streaming(5))
        most = 0
        for index, paragraph in enumerate(paragraphs):
            for start in range(0, len(paragraph), 7):
                await block.append(paragraph[start : start + 7])
            if index % 20 == 0:
                await until(pilot, lambda: not block._pending, "the stream flushed")
                await pilot.pause()
                most = max(most, len(list(block.query("*"))))
        await until(pilot, lambda: not block._pending, "the stream flushed")
        await pilot.pause()
        most = max(most, len(list(block.query("*"))))
        assert most <= 4, most
        full = "".join(paragraphs)
        await block.finish(MessageView(5, "assistant", "Architect · claude", full, usage_text="1 in · 2 out"))
        await pilot.pause()
        assert len(list(block.query("*"))) <= 4
        assert block.query_one(MarkdownBody).source == full


async def test_finished_markdown_shows_headings_lists_and_code(make_app, read_screen) -> None:
    text = "## Plan heading\n\n- first bullet\n- second bullet\n\n1. numbered step\n\n```python\nprint('code line')\n```\n"
    app, _ = make_app([MessageView(1, "assistant", "Architect · claude", text)])
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        block = app.chat_view.blocks()[0]
        assert len(list(block.query("*"))) <= 3
        screen = read_screen(app)
        for shown in ("Plan heading", "• first bullet", "• second bullet", "1 numbered step", "print('code line')"):
            assert shown in screen, shown
        assert "```" not in screen and "## " not in screen


async def test_a_message_typed_on_two_lines_shows_on_two_lines(make_app, read_screen) -> None:
    typed = "alpha one\nbeta two\n\n```\ncode line 1\ncode line 2\n```"
    app, _ = make_app([MessageView(1, "user", "You", typed)])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lines = [line.strip(" ▊") for line in read_screen(app).splitlines()]
        assert "alpha one" in lines and "beta two" in lines
        assert "alpha one beta two" not in read_screen(app)
        assert any(line.startswith("code line 1") for line in lines)


async def test_a_chat_that_shrinks_while_following_draws_its_thumb_where_it_shows(make_app) -> None:
    # the decision dock grows under a new verdict: the chat gets shorter while it follows the newest text
    from textual.geometry import Region

    app, _ = make_app(_numbered(30))
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.chat_view
        await until(pilot, lambda: chat.is_following and chat.scroll_y == chat.max_scroll_y > 0, "the chat at its end")
        chat.styles.max_height = 6
        await until(pilot, lambda: chat.size.height == 6, "the chat shorter")
        app.screen.refresh(layout=True)  # any later layout (a toast, the footer) …
        await pilot.pause()
        assert chat.scroll_y == chat.max_scroll_y  # … shows the newest text …
        bar = chat.vertical_scrollbar
        rows = Region(0, 0, bar.size.width, bar.size.height)
        drawn = [list(strip) for strip in bar.render_lines(rows)]
        bar.refresh()
        # … and the thumb as drawn is the thumb of that position, not one left from before
        assert drawn == [list(strip) for strip in bar.render_lines(rows)]
