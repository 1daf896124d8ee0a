"""The sidebar widens with the terminal (28 columns up to 140, at most 40) and keeps rows to one line."""

from __future__ import annotations

import pytest
from app_harness import screen_text
from waiting import until

from tunaflow_tui.widgets.sidebar import Sidebar

LABEL = "Implement: add a word frequency report to textstats"  # longer than any sidebar


@pytest.mark.parametrize(("columns", "width"), [(100, 28), (120, 28), (140, 28), (170, 34), (240, 40)])
async def test_sidebar_width_follows_the_terminal(open_app, columns: int, width: int) -> None:
    app, _controller, runtime = open_app()
    runtime.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                                kind="general", label=LABEL)
    async with app.run_test(size=(columns, 30)) as pilot:
        await pilot.pause()
        slot = app.query_one("#sidebar")
        assert slot.region.width == width
        # the row is cut with an ellipsis at the sidebar's edge, and nothing of it spills onto a second line
        rows = [line[:width] for line in screen_text(app).splitlines()]
        [row] = [line for line in rows if "Implement: add" in line]
        assert row.rstrip(" ▕▎▏│").endswith("…")
        assert not any("textstats" in line for line in rows)
        assert app.query_one(Sidebar).sidebar_tree.virtual_size.width <= app.query_one(Sidebar).sidebar_tree.size.width


async def test_a_wide_terminal_shows_more_of_each_label(open_app) -> None:
    app, _controller, runtime = open_app()
    runtime.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                                kind="general", label="Try sqlite FTS5 with trigrams")
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        assert "Try sqlite FTS5 with trigrams" not in screen_text(app)
        await pilot.resize_terminal(240, 30)
        await pilot.pause()
        await until(pilot, lambda: "Try sqlite FTS5 with trigrams" in screen_text(app), "Try sqlite FTS5 with trigrams on screen")


async def test_the_sidebar_gives_way_when_the_window_narrows_and_comes_back(open_app) -> None:
    app, _controller, _runtime = open_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        slot = app.query_one("#sidebar")
        assert slot.display and slot.region.width == 28
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert slot.region.width == 0 and "Conversations" not in screen_text(app)
        assert app.chat_view.region.width == 80
        await pilot.press("ctrl+b")  # asked for on a narrow terminal: it stays while the width does not cross
        await pilot.pause()
        assert slot.region.width == 28
        await pilot.resize_terminal(90, 24)
        await pilot.pause()
        assert slot.region.width == 28
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert slot.region.width == 28 and "Conversations" in screen_text(app)
