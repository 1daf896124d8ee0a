"""Typing stays responsive while three answers stream at once."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.containers import Horizontal
from waiting import until

from tunaflow_tui.textual_compat import on_each_frame
from tunaflow_tui.viewmodels.chat import ListMessageSource, MessageView
from tunaflow_tui.widgets.chat_view import ChatView
from tunaflow_tui.widgets.composer import Composer
from tunaflow_tui.widgets.message_block import MessageBlock

PARAGRAPH = "Some streamed text with `code`, **bold** words and a list:\n\n- one\n- two\n\n"


class ThreeChats(App[None]):
    CSS = "#chats { height: 1fr; } #chats ChatView { width: 1fr; }"

    def compose(self) -> ComposeResult:
        with Horizontal(id="chats"):
            for index in range(3):
                yield ChatView(ListMessageSource(), id=f"chat-{index}")
        yield Composer("Architect (test)", cursor_blink=False, id="composer")

    def on_mount(self) -> None:
        self.query_one(Composer).focus_input()


async def _stream(block: MessageBlock, stop: asyncio.Event, sent: list[int]) -> None:
    index = 0
    while not stop.is_set():
        await block.append(PARAGRAPH[index % len(PARAGRAPH) : index % len(PARAGRAPH) + 5])
        index += 5
        sent.append(index)
        await asyncio.sleep(0.002)


async def test_keys_reach_the_composer_within_a_few_frames_while_three_answers_stream() -> None:
    app = ThreeChats()
    async with app.run_test(size=(160, 40)) as pilot:
        composer = app.query_one(Composer)
        frames: list[str] = []
        on_each_frame(app, lambda: frames.append(composer.input.text))
        blocks = [
            await app.query_one(f"#chat-{i}", ChatView).start_stream(
                MessageView(1, "assistant", f"Developer · stream {i}", "", "streaming"))
            for i in range(3)
        ]
        stop = asyncio.Event()
        sent: list[int] = []
        tasks = [asyncio.create_task(_stream(block, stop, sent)) for block in blocks]
        await until(None, lambda: len(frames) >= 3 and all(block.text for block in blocks), "all three streaming on screen")
        typed = ""
        for char in "hello":
            before_frames, before_sent = len(frames), len(sent)
            await pilot.press(char)
            typed += char
            await until(None, lambda typed=typed, before_frames=before_frames: any(
                text == typed for text in frames[before_frames:]), f"{typed!r} drawn")
            shown_at = next(i for i, text in enumerate(frames[before_frames:]) if text == typed)
            assert shown_at <= 2, f"{char!r} appeared only in the {shown_at + 1}th frame after the key"
            assert len(sent) > before_sent, "the streams stalled while the key was handled"
        # the typing over, growth beats come back and the finished paragraphs move into the bodies
        await until(pilot, lambda: all("streamed text" in block.query_one(".message-body").source
                                       for block in blocks), "the streamed paragraphs sealed into the bodies")
        stop.set()
        await asyncio.gather(*tasks)
        assert composer.input.text == "hello"
        assert all(len(block.text) > 500 for block in blocks)
        await until(pilot, lambda: all(not block._pending for block in blocks), "the streams flushed")
