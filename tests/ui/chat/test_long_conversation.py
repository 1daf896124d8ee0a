"""A 10,000-message conversation from the database: home / end reach either end at once, and paging
through it in either direction keeps a bounded window of blocks (and lets the released ones go)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_harness import screen_text
from textual.widget import Widget
from waiting import until

from tunaflow_tui.app import TunaflowApp
from tunaflow_tui.controllers.sources import StoreMessageSource
from tunaflow_tui.core.storage import Store
from tunaflow_tui.textual_compat import StylesCache, styles_cache_of
from tunaflow_tui.viewmodels.chat import MessageSource
from tunaflow_tui.widgets.message_block import MessageBlock

COUNT = 10_000


def body(n: int) -> str:
    """Realistic Markdown, different in every message; message 1 and the newest say which they are."""
    marks = {1: "THE FIRST MESSAGE", COUNT: "THE NEWEST MESSAGE"}
    return (f"### Step {n} {marks.get(n, '')}\n\nI read `module_{n}.py` and changed:\n\n- **one** thing\n"
            f"- another, see `f_{n}()`\n\n```python\ndef f_{n}(x):\n    return x * {n}\n```\n")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path) as opened:
        opened.add_messages("main", (
            {"role": "user", "content": body(n)} if n % 2 else
            {"role": "assistant", "content": body(n), "persona": "developer", "engine": "demo"}
            for n in range(1, COUNT + 1)
        ))  # fmt: skip
        yield opened


class StoreController:
    """Serves the stored conversation; nothing is sent."""

    session = None
    is_open = True
    error = None

    def __init__(self, store: Store) -> None:
        self.store = store

    def attach(self, app: TunaflowApp) -> None:
        pass

    async def ready(self) -> None:
        pass

    def hold_update(self, update: object) -> None:
        pass

    def message_source(self, conversation_id: str) -> MessageSource:
        return StoreMessageSource(self.store, conversation_id)

    def recipient(self, conversation_id: str) -> str:
        return "Architect (demo)"

    def send(self, conversation_id: str, text: str) -> None:
        pass

    def retry(self, conversation_id: str, message_id: int) -> None:
        pass


def app_on(store: Store) -> TunaflowApp:
    return TunaflowApp(StoreController(store), cursor_blink=False)  # type: ignore[arg-type]


def ids(app: TunaflowApp) -> list[int]:
    return [block.message_id for block in app.chat_view.blocks()]


async def test_home_shows_the_first_message_and_end_the_newest(store: Store) -> None:
    app = app_on(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        chat = app.chat_view
        await pilot.press("escape")  # to the chat: the newest message has the focus
        assert chat.focused_message_id == COUNT
        await pilot.press("home")
        await pilot.pause()
        assert ids(app)[0] == 1 and chat.focused_message_id == 1
        await until(pilot, lambda: "THE FIRST MESSAGE" in screen_text(app), "THE FIRST MESSAGE on screen")
        assert len(app.query(MessageBlock)) <= chat.max_mounted
        assert chat.has_newer and not chat.has_older
        await pilot.press("end")
        await pilot.pause()
        assert ids(app)[-1] == COUNT and chat.focused_message_id == COUNT
        await until(pilot, lambda: "THE NEWEST MESSAGE" in screen_text(app), "THE NEWEST MESSAGE on screen")
        assert not chat.has_newer and len(app.query(MessageBlock)) <= chat.max_mounted


async def test_ctrl_home_and_ctrl_end_from_the_composer_keep_the_cursor_there(store: Store) -> None:
    app = app_on(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("h", "i", "ctrl+home")
        await pilot.pause()
        await until(pilot, lambda: "THE FIRST MESSAGE" in screen_text(app), "THE FIRST MESSAGE on screen")
        assert app.focused is app.composer.input and app.composer.text == "hi"
        await pilot.press("ctrl+end")
        await pilot.pause()
        await until(pilot, lambda: "THE NEWEST MESSAGE" in screen_text(app), "THE NEWEST MESSAGE on screen")
        assert ids(app)[-1] == COUNT and app.composer.text == "hi"


def _orphaned_styles() -> int:
    """Style caches (each holding every line its widget drew) that no live widget owns any more."""
    gc.collect()
    objects = gc.get_objects()
    owned = {id(styles_cache_of(obj)) for obj in objects if isinstance(obj, Widget)}
    return sum(isinstance(obj, StylesCache) and id(obj) not in owned for obj in objects)


async def test_paging_up_and_back_down_keeps_the_window_bounded(store: Store) -> None:
    app = app_on(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        chat = app.chat_view

        async def page(direction: str) -> None:
            chat.scroll_home(animate=False) if direction == "up" else chat.scroll_end(animate=False)
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert len(chat.blocks()) <= chat.max_mounted
            assert len(app.query(MessageBlock)) <= chat.max_mounted

        for _ in range(8):
            await page("up")
        assert ids(app)[0] == COUNT - 12 - 8 * chat.page_size + 1  # 24 rows open 12, then 8 pages
        assert ids(app) == list(range(ids(app)[0], ids(app)[0] + len(ids(app))))  # contiguous
        assert chat.has_newer
        assert _orphaned_styles() <= 10  # released blocks do not stay alive with their lines
        for _ in range(8):
            await page("down")
            if not chat.has_newer:
                break
        assert ids(app)[-1] == COUNT
        assert len(ids(app)) <= chat.max_mounted


async def test_holding_home_mounts_the_first_page_once(store: Store) -> None:
    app = app_on(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("escape", "home")
        await pilot.pause()
        first_page = app.chat_view.blocks()
        await pilot.press(*["home"] * 15)  # a held key repeats
        await pilot.pause()
        assert app.chat_view.blocks() == first_page  # the same blocks: nothing was mounted again
        assert app.chat_view.focused_message_id == 1


async def test_open_at_a_message_deep_in_the_history_and_page_on_from_there(store: Store) -> None:
    """A search hit 5,000 messages back: its page alone is mounted, it has the focus and shows,
    and scrolling pages older and newer from there; an id the conversation lacks changes nothing."""
    app = app_on(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        chat = app.chat_view
        block = await chat.open_at(5_001)
        await pilot.pause()
        assert block is not None and chat.focused_message_id == 5_001
        assert ids(app) == list(range(ids(app)[0], ids(app)[-1] + 1)) and ids(app)[0] < 5_001 < ids(app)[-1]
        assert len(ids(app)) <= chat.window_size + 1
        assert chat.has_older and chat.has_newer
        await until(pilot, lambda: "Step 5001" in screen_text(app), "Step 5001 on screen")
        await until(pilot, lambda: chat.pages_on_scroll, "the hit scrolled into place")
        chat.scroll_end(animate=False)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert ids(app)[-1] > 5_001 + chat.window_size // 2  # a newer page came
        chat.scroll_home(animate=False)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert ids(app)[0] < 5_001 - chat.window_size // 2  # and an older one
        before = ids(app)
        assert await chat.open_at(COUNT + 50) is None
        assert ids(app) == before

