"""Sidebar: sections, phase badges, keyboard navigation, Enter selects, refresh keeps the cursor."""

from __future__ import annotations

from dataclasses import replace

import pytest
from app_harness import screen_text
from textual.app import App, ComposeResult
from textual.message import Message
from waiting import until

from tunaflow_tui.viewmodels.plan_rows import SidebarItem, SidebarSections
from tunaflow_tui.widgets.sidebar import Sidebar, SidebarTree

SECTIONS = SidebarSections(
    conversations=(SidebarItem("conversation", 1, "Main"),),
    branches=(
        SidebarItem("branch", 3, "try sqlite FTS instead"),
        SidebarItem("branch", 4, "한글 검색 실험"),
    ),
    roundtables=(SidebarItem("roundtable", 9, "Storage engine debate"),),
    archive=(),
    plans=(
        SidebarItem("plan", 7, "Add rate limiting", badge="approval"),
        SidebarItem("plan", 5, "Fix README typos", badge="done"),
    ),
)


class SidebarApp(App[None]):
    def __init__(self, sections: SidebarSections = SECTIONS) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        yield Sidebar(self.sections)

    def on_mount(self) -> None:
        self.query_one(SidebarTree).focus()


def selections(messages: list[Message]) -> list[tuple[str, int | str]]:
    unique = {id(m): m for m in messages if isinstance(m, Sidebar.Selected)}
    return [(m.kind, m.id) for m in unique.values()]


async def test_sections_and_badges_are_listed() -> None:
    app = SidebarApp()
    async with app.run_test(size=(80, 24)):
        text = screen_text(app)
        for heading in ("Conversations", "Branches 2", "Roundtables", "Archive", "Plans 2"):
            assert heading in text
        assert "[approval] Add rate" in text
        assert "none yet" in text  # the empty archive says so


async def test_keyboard_navigation_and_enter_posts_selected() -> None:
    seen: list[Message] = []
    app = SidebarApp()
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        await pilot.press("down", "enter")  # Conversations > Main
        await pilot.press("down", "down", "enter")  # Branches heading, then the first branch
        await pilot.press("down", "enter")  # the Korean branch
        await pilot.pause()
        assert selections(seen) == [("conversation", 1), ("branch", 3), ("branch", 4)]


async def test_enter_on_a_heading_folds_it_and_posts_nothing() -> None:
    seen: list[Message] = []
    app = SidebarApp()
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        await pilot.press("enter")  # on "Conversations"
        await pilot.pause()
        assert "Main" not in screen_text(app)
        assert selections(seen) == []


async def test_update_keeps_the_cursor_on_the_same_item() -> None:
    app = SidebarApp()
    async with app.run_test(size=(80, 24)) as pilot:
        sidebar = app.query_one(Sidebar)
        tree = sidebar.sidebar_tree
        await pilot.press("down", "down", "down", "down")  # the Korean branch
        assert tree.cursor_node is not None and tree.cursor_node.data == SECTIONS.branches[1]
        new_branch = SidebarItem("branch", 2, "an older branch")
        sidebar.update(replace(SECTIONS, branches=(new_branch, *SECTIONS.branches)))
        await pilot.pause()
        assert tree.cursor_node is not None and tree.cursor_node.data == SECTIONS.branches[1]


async def test_an_update_with_nothing_new_leaves_a_folded_section_folded() -> None:
    # the sidebar is refreshed on every change of a plan or a branch, often with the same content
    app = SidebarApp()
    async with app.run_test(size=(80, 24)) as pilot:
        sidebar = app.query_one(Sidebar)
        await pilot.press("enter")  # "Conversations" folded
        await pilot.pause()
        sidebar.update(replace(SECTIONS))  # equal content, a new object
        await pilot.pause()
        assert "Main" not in screen_text(app)
        sidebar.update(replace(SECTIONS, archive=(SidebarItem("archive", 8, "an adopted branch"),)))
        await pilot.pause()
        await until(pilot, lambda: "an adopted branch" in screen_text(app), "an adopted branch on screen")  # something new: the tree is built again


async def test_a_plans_live_mark_changes_its_row_in_place() -> None:
    # an agent starting or stopping on a plan changes one row: the tree is not built again, so nothing
    # else is drawn anew, the cursor stays and a folded section stays folded
    app = SidebarApp()
    async with app.run_test(size=(80, 24)) as pilot:
        sidebar = app.query_one(Sidebar)
        tree = sidebar.sidebar_tree
        await pilot.press("enter")  # "Conversations" folded
        await pilot.press("down", "down", "down")  # the Korean branch
        cursor = tree.cursor_node
        nodes = sidebar._all_nodes()
        rate, readme = SECTIONS.plans
        working = replace(SECTIONS, plans=(replace(rate, badge="dev", live=True), readme))
        sidebar.update(working)
        await until(pilot, lambda: "[dev] ● Add rate" in screen_text(app), "the working mark")
        assert sidebar._all_nodes() == nodes and tree.cursor_node is cursor
        assert "Main" not in screen_text(app)
        sidebar.update(replace(SECTIONS, plans=(replace(rate, badge="review", waiting=True), readme)))
        await until(pilot, lambda: "[review] ◆ Add rate" in screen_text(app), "the waiting-for-you mark")
        assert "●" not in screen_text(app)
        assert sidebar._all_nodes() == nodes and tree.cursor_node is cursor


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_snapshot_sidebar(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(SidebarApp(), terminal_size=size)


LIVE = (SidebarItem("native", "main", "Main", detail="claude", live=True),
        SidebarItem("native", "branch:3", "try sqlite FTS instead", detail="codex", live=True))


async def test_live_sessions_are_listed_on_top_while_they_run_and_enter_picks_one() -> None:
    seen: list[Message] = []
    app = SidebarApp()
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        sidebar = app.query_one(Sidebar)
        assert "Live sessions" not in screen_text(app)
        sidebar.show_live_sessions(LIVE)
        await until(pilot, lambda: "Live sessions 2" in screen_text(app), "the live sessions listed")
        lines = screen_text(app).splitlines()
        assert any("● Main  claude" in line for line in lines)
        assert any("● try sqlite FTS" in line for line in lines)  # the engine is cut at the sidebar's edge
        headings = [line for line in lines if "Live sessions" in line or "Conversations" in line]
        assert "Live sessions" in headings[0] and "Conversations" in headings[1]  # on top
        await pilot.press("home", "down", "down", "enter")  # the heading, Main, the branch's session
        await pilot.pause()
        assert selections(seen) == [("native", "branch:3")]
        sidebar.show_live_sessions(LIVE[:1])  # the branch's CLI ended
        await until(pilot, lambda: "Live sessions 1" in screen_text(app), "one live session left")
        sidebar.show_live_sessions(())
        await until(pilot, lambda: "Live sessions" not in screen_text(app), "the section gone")
        assert "Conversations" in screen_text(app)


def test_snapshot_sidebar_with_live_sessions(snap_compare) -> None:
    """The live sessions on top, each with its live mark and engine, above the sections."""

    async def live(pilot) -> None:
        pilot.app.query_one(Sidebar).show_live_sessions(LIVE)
        await until(pilot, lambda: "Live sessions 2" in screen_text(pilot.app), "the live sessions listed")

    assert snap_compare(SidebarApp(), terminal_size=(80, 24), run_before=live)
