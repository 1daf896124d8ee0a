"""A plan's review branch is one of its branches, not a roundtable: sidebar section and pane header."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from app_harness import screen_text
from textual.app import App, ComposeResult
from textual.widgets import Static

from tunaflow_tui.controllers import plan_views
from tunaflow_tui.core.storage import Store
from tunaflow_tui.widgets.branch_pane import BranchPane
from tunaflow_tui.widgets.sidebar import Sidebar


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path) as opened:
        impl = opened.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                    mode="chat", kind="implementation", label="Implement: rate limiting")
        opened.create_branch(conversation_id=f"branch:{impl.id}", checkpoint_id=None, parent_branch_id=impl.id,
                             mode="roundtable", kind="review", label="Review: rate limiting")
        yield opened


def section_lines(text: str, heading: str, following: str) -> list[str]:
    """The sidebar rows between `heading` and the next section `following`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if heading in line)
    end = next(i for i, line in enumerate(lines) if following in line)
    return lines[start + 1:end]


class SidebarApp(App[None]):
    CSS = "Sidebar { width: 60; }"

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store

    def compose(self) -> ComposeResult:
        yield Sidebar(plan_views.sidebar_sections(self.store))


async def test_review_branch_is_listed_under_branches_and_no_empty_roundtables_section(store: Store) -> None:
    app = SidebarApp(store)
    async with app.run_test(size=(80, 24)):
        text = screen_text(app)
        branches = "\n".join(section_lines(text, "Branches", "Archive"))
        assert "[implementation] Implement: rate limiting" in branches
        assert "[review] Review: rate limiting" in branches
        # nothing in the app convenes a roundtable: the sidebar does not offer an empty section for one
        assert "Roundtables" not in text


async def test_a_convened_roundtable_is_still_listed_under_roundtables(store: Store) -> None:
    store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="roundtable",
                        kind="general", label="Storage engine debate")
    app = SidebarApp(store)
    async with app.run_test(size=(80, 24)):
        text = screen_text(app)
        assert "Storage engine debate" in "\n".join(section_lines(text, "Roundtables", "Archive"))
        assert "Review: rate limiting" in "\n".join(section_lines(text, "Branches", "Roundtables"))


class PaneApp(App[None]):
    def __init__(self, store: Store, branch_id: int) -> None:
        super().__init__()
        self.store, self.branch_id = store, branch_id

    def compose(self) -> ComposeResult:
        yield BranchPane()

    async def on_mount(self) -> None:
        view = plan_views.branch_view(self.store, self.branch_id)
        assert view is not None
        await self.query_one(BranchPane).show(view, Static("shadow conversation"))


@pytest.mark.parametrize(("branch_id", "says"), [(1, "implementation · plan branch · active"),
                                                  (2, "review · plan branch · active")])
async def test_pane_header_names_the_plan_branch(store: Store, branch_id: int, says: str) -> None:
    app = PaneApp(store, branch_id)
    async with app.run_test(size=(100, 10)) as pilot:
        await pilot.pause()
        header = "\n".join(screen_text(app).splitlines()[:2])  # under the pane's titled rule
        assert says in header
        assert "roundtable" not in header
