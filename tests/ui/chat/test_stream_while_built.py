"""Text streamed into a block while the chat is still building it reaches the screen.

The follower of another process's turn fills a reply's block right after a chat (the branch pane)
loaded it: the block is in the chat but not built yet. The text counted as shown and waited for a
flush that never came — the pane showed an empty reply for as long as the other process paused.
"""

from __future__ import annotations

from waiting import until

from tunaflow_tui.viewmodels.chat import MessageView
from tunaflow_tui.widgets.message_block import MessageBlock

FIRST = "The first half of the answer, written before the pause.\n\n"


async def test_text_appended_before_the_block_is_mounted_is_drawn_once_it_is(make_app, read_screen) -> None:
    app, _ = make_app([])
    async with app.run_test(size=(100, 30)) as pilot:
        block = MessageBlock(MessageView(2, "assistant", "Architect", "", status="streaming"))
        mounting = app.chat_view.mount(block)  # in the chat at once, built a moment later
        await block.append(FIRST)
        await mounting
        await until(pilot, lambda: block.shows_all and "The first half of the answer" in read_screen(app),
                    "the streamed text drawn", limit=10)
        assert block.text == FIRST


async def test_text_appended_before_the_block_is_in_a_chat_is_drawn_once_it_is(make_app, read_screen) -> None:
    app, _ = make_app([])
    async with app.run_test(size=(100, 30)) as pilot:
        block = MessageBlock(MessageView(2, "assistant", "Architect", "", status="streaming"))
        await block.append(FIRST)
        await app.chat_view.mount(block)
        await until(pilot, lambda: block.shows_all and "The first half of the answer" in read_screen(app),
                    "the streamed text drawn", limit=10)
        assert block.text == FIRST
        assert read_screen(app).count("The first half") == 1
