"""Workspace and branch pane: hidden, drawer over the chat, pinned 50:50, narrow pinned with a switch."""

from __future__ import annotations

import pytest
from app_harness import notifications, refreshes_of, screen_text
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static
from waiting import until

from tunaflow_tui.viewmodels.plan_rows import BranchView
from tunaflow_tui.widgets.branch_pane import BranchPane
from tunaflow_tui.widgets.workspace import Workspace

BRANCH = BranchView(id=3, label="try sqlite FTS instead", kind="general", mode="chat", status="active")


class MainChat(Vertical):
    def compose(self) -> ComposeResult:
        yield Static("Architect: here is the plan for rate limiting.\n" * 3, id="log")
        yield Input(placeholder="Message the Architect", id="composer")


class WorkspaceApp(App[None]):
    def __init__(self, mode: str = "hidden", with_branch: bool = True) -> None:
        super().__init__()
        self.start_mode = mode
        self.with_branch = with_branch

    def compose(self) -> ComposeResult:
        yield Workspace(MainChat(id="main-chat"))

    async def on_mount(self) -> None:
        workspace = self.query_one(Workspace)
        if self.with_branch:
            body = Vertical(Static("Branch: what about FTS5 trigram?"), Input(id="branch-input"))
            await workspace.pane.show(BRANCH, body)
        workspace.mode = self.start_mode  # type: ignore[assignment]
        self.query_one("#composer", Input).focus()


def mode_changes(messages: list[Message]) -> list[str]:
    unique = {id(m): m for m in messages if isinstance(m, Workspace.ModeChanged)}
    return [m.mode for m in unique.values()]


async def test_toggle_shows_drawer_over_the_chat_and_hides_it() -> None:
    seen: list[Message] = []
    app = WorkspaceApp()
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        main = app.query_one("#main-chat")
        pane = app.query_one(BranchPane)
        assert not pane.display or pane.region.width == 0
        await pilot.press("f6")
        await pilot.pause()
        assert app.query_one(Workspace).mode == "drawer"
        # the drawer overlays: the chat keeps its full width, the pane covers its right ~45%
        assert main.region.width == 120
        assert abs(pane.region.width - 54) <= 1
        assert pane.region.right == 120
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert app.query_one(Workspace).mode == "hidden"
        assert mode_changes(seen) == ["drawer", "hidden"]


async def test_pin_splits_fifty_fifty_and_unpin_returns_to_drawer() -> None:
    app = WorkspaceApp(mode="drawer")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f7")
        await pilot.pause()
        main = app.query_one("#main-chat")
        pane = app.query_one(BranchPane)
        assert app.query_one(Workspace).mode == "pinned"
        assert abs(main.region.width - 60) <= 1
        assert abs(pane.region.width - 60) <= 1
        assert main.region.right <= pane.region.x
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.query_one(Workspace).mode == "drawer"
        assert main.region.width == 120


async def test_narrow_pinned_is_full_width_and_switches_back_to_the_chat() -> None:
    app = WorkspaceApp(mode="pinned")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        pane = app.query_one(BranchPane)
        main = app.query_one("#main-chat")
        assert pane.region.width == 80
        assert not main.region.width
        await pilot.press("f8")
        await pilot.pause()
        assert main.region.width == 80
        assert app.focused is app.query_one("#composer")
        await pilot.press(*"hi")
        assert app.query_one("#composer", Input).value == "hi"
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert pane.region.width == 80
        assert app.focused is app.query_one("#branch-input")


async def test_narrow_pinned_shows_the_side_the_focus_moves_to() -> None:
    """The app's own keys (i: write, esc: to the chat) move the focus to the chat: the chat must show,
    or the user types into a composer that is not on the screen."""
    app = WorkspaceApp(mode="pinned")
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(BranchPane)
        main = app.query_one("#main-chat")
        await until(pilot, lambda: pane.region.width == 80 and app.focused is app.query_one("#branch-input"),
                    "the pane shown, its composer focused")
        app.query_one("#composer", Input).focus()  # what i (write) and esc (to the chat) do
        await until(pilot, lambda: main.region.width == 80, "the chat shown with its composer focused", limit=10)
        assert not app.query_one(Workspace).showing_pane


def said(app: App[None]) -> list[str]:
    return [notification.message for notification in notifications(app)]


async def test_switch_when_wide_moves_the_keys_to_the_other_side() -> None:
    app = WorkspaceApp(mode="pinned")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f8")
        await pilot.pause()
        assert abs(app.query_one("#main-chat").region.width - 60) <= 1  # both sides stay
        assert app.focused is app.query_one("#branch-input")
        await pilot.press("f8")
        await pilot.pause()
        assert app.focused is app.query_one("#composer")
        assert said(app) == []


async def test_switch_when_wide_with_an_empty_pane_says_why() -> None:
    app = WorkspaceApp(mode="pinned", with_branch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f8")
        await pilot.pause()
        assert app.focused is app.query_one("#composer")
        assert said(app) == ["The branch pane is empty: pick a branch in the sidebar, or fork one from a message."]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
@pytest.mark.parametrize("mode", ["hidden", "drawer"])
async def test_switch_without_a_pinned_pane_says_how_to_pin_it(size: tuple[int, int], mode: str) -> None:
    app = WorkspaceApp(mode=mode)
    async with app.run_test(size=size) as pilot:
        before = app.focused
        await pilot.press("f8")
        await pilot.pause()
        assert app.query_one(Workspace).mode == mode and app.focused is before
        assert said(app) == ["f8 switches between the chat and the branch pane once the pane is pinned; "
                             "press f7 to pin it."]


async def test_the_switch_message_names_the_keys_as_remapped() -> None:
    app = WorkspaceApp(mode="drawer")
    app.set_keymap({"pane.switch": "f9", "pane.pin": "ctrl+y"})
    app.keymap_overrides = {"pane.switch": "f9", "pane.pin": "ctrl+y"}  # type: ignore[attr-defined]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f9")
        await pilot.pause()
        assert said(app) == ["f9 switches between the chat and the branch pane once the pane is pinned; "
                             "press ctrl+y to pin it."]


@pytest.mark.parametrize("mode", ["drawer", "pinned"])
async def test_main_chat_keeps_working_while_the_pane_is_open(mode: str) -> None:
    app = WorkspaceApp(mode=mode)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"hello 세계")
        assert app.query_one("#composer", Input).value == "hello 세계"
        await pilot.click("#composer")
        assert app.focused is app.query_one("#composer")


async def test_hiding_the_pane_returns_focus_to_the_chat() -> None:
    app = WorkspaceApp(mode="drawer")
    async with app.run_test(size=(120, 40)) as pilot:
        app.query_one("#branch-input").focus()
        await pilot.press("f6")
        await pilot.pause()
        assert app.focused is not None and app.query_one("#main-chat") in app.focused.ancestors_with_self


async def test_pane_header_shows_branch_and_empty_pane_says_so() -> None:
    app = WorkspaceApp(mode="pinned")
    async with app.run_test(size=(120, 40)):
        text = screen_text(app)
        assert "try sqlite FTS instead" in text and "active" in text
    app = WorkspaceApp(mode="pinned", with_branch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        def text() -> str:
            return screen_text(app)

        # the empty pane names its keys after the first frame
        await until(pilot, lambda: "press b to fork" in text(), "the empty pane's words")
        assert "No branch open" in text()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize("mode", ["drawer", "pinned"])
def test_snapshot_workspace(snap_compare, mode: str, size: tuple[int, int]) -> None:
    # at 80 columns "pinned" is the narrow layout: the pane takes the full width
    assert snap_compare(WorkspaceApp(mode=mode), terminal_size=size)


class SidebarWorkspaceApp(App[None]):
    CSS = "#side { width: 28; } #row { height: 1fr; }"

    def compose(self) -> ComposeResult:
        from textual.containers import Horizontal

        with Horizontal(id="row"):
            yield Static("sidebar", id="side")
            yield Workspace(MainChat(id="main-chat"))

    async def on_mount(self) -> None:
        workspace = self.query_one(Workspace)
        await workspace.pane.show(BRANCH, Vertical(Static("Branch"), Input(id="branch-input")))
        workspace.mode = "pinned"


async def test_narrow_follows_the_terminal_width_not_the_workspace_width() -> None:
    # 120 columns with a sidebar leaves the workspace 92 wide: still a wide terminal, so 50:50
    app = SidebarWorkspaceApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        workspace = app.query_one(Workspace)
        assert not workspace.narrow
        main, pane = app.query_one("#main-chat"), app.query_one(BranchPane)
        assert abs(main.region.width - pane.region.width) <= 1
        assert main.region.width + pane.region.width == workspace.region.width
        await pilot.resize_terminal(90, 30)
        await pilot.pause()
        assert workspace.narrow
        assert pane.region.width == workspace.region.width


async def test_the_branch_header_follows_a_status_change_in_place(monkeypatch) -> None:
    # the header follows every agent starting or ending in the branch; a layout would redo the screen
    from dataclasses import replace

    from tunaflow_tui.widgets.branch_pane import BranchHeader

    app = WorkspaceApp(mode="drawer")
    async with app.run_test(size=(120, 40)) as pilot:
        header = app.query_one(BranchHeader)
        layouts = refreshes_of(header, monkeypatch)
        app.query_one(BranchPane).update_view(replace(BRANCH, live=True))
        await pilot.pause()
        assert layouts and not any(layouts)
        assert "● try sqlite FTS instead" in str(header.render())
        app.query_one(BranchPane).update_view(replace(BRANCH, kind="implementation", mode="plan"))
        await pilot.pause()
        assert any(layouts)  # one line instead of two: the header gets shorter
        assert header.size.height == 1
