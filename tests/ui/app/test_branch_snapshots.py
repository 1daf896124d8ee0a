"""Snapshots of branches at 80×24 and 120×40: the message cursor, a branch with its composer in the
drawer and pinned, the branch tree, the adopt editor and the adopt card. States are seeded in the store."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from app_harness import footers_current, quiet
from textual.widgets import TextArea
from waiting import until

from tunaflow_tui.runtime.adoption import BranchSummary
from tunaflow_tui.widgets.message_block import MessageBlock

SIZES = [(80, 24), (120, 40)]


def _seed(app: Any) -> dict[str, int]:
    """Main with two turns, a branch of it with one turn and a branch of that branch."""
    runtime = app.controller.runtime
    store = runtime.store
    store.main_conversation()
    store.add_messages("main", [
        {"role": "user", "content": "Should the report count words or lines?"},
        {"role": "assistant", "persona": "architect", "engine": "demo",
         "content": "Words: the users asked for frequencies."},
        {"role": "user", "content": "And the output format?"},
        {"role": "assistant", "persona": "architect", "engine": "demo", "content": "A table, sorted by count."},
    ])
    main = [m.id for m in store.list_messages("main", limit=10)]
    branch = runtime.fork("main", main[1], label="count lines instead")
    store.add_messages(f"branch:{branch.id}", [
        {"role": "user", "content": "What if the report counted lines?"},
        {"role": "assistant", "persona": "architect", "engine": "demo",
         "content": "Lines are cheaper to count but say less; keep words and add a line total."},
    ])
    last = store.list_messages(f"branch:{branch.id}", limit=10)[-1].id
    nested = runtime.fork(f"branch:{branch.id}", last, label="line totals per file")
    return {"checkpoint": main[1], "branch": branch.id, "nested": nested.id}


@pytest.fixture
def branch_app(steady_app: Any) -> Any:
    app = steady_app("tunaflow-branch-snapshots")
    app.seeded = _seed(app)
    return app


async def _cursor(pilot: Any) -> None:
    await quiet(pilot)
    await pilot.press("escape", "up", "up")
    await quiet(pilot)


async def _drawer(pilot: Any) -> None:
    await quiet(pilot)
    await pilot.app.controller.panes.open_branch(pilot.app.seeded["branch"], reveal=True, focus=True)
    await quiet(pilot)


async def _pinned(pilot: Any) -> None:
    await _drawer(pilot)
    await pilot.press("f7")
    await quiet(pilot)


async def _tree(pilot: Any) -> None:
    runtime = pilot.app.controller.runtime
    runtime.archive_branch(runtime.fork("main", pilot.app.seeded["checkpoint"], label="an old idea").id)
    await quiet(pilot)
    if pilot.app.has_class("-sidebar-hidden"):
        await pilot.press("ctrl+b")
    await pilot.app.controller.panes.refresh_sidebar()
    await quiet(pilot)


async def _adopt_editor(pilot: Any) -> None:
    from tunaflow_tui.screens.adopt_editor import AdoptEditorScreen

    await _drawer(pilot)
    pilot.app.controller.branches.requested(None, "adopt")
    # the editor waits for the user: no settling while it is open, only its summary
    await until(pilot, lambda: isinstance(pilot.app.screen, AdoptEditorScreen)
                and any(area.text for area in pilot.app.screen.query(TextArea)),  # composed, and filled
                "the adopt editor with the summary")
    pilot.app.clear_notifications()
    # the summary's turn ends a moment after its text is in: its message settles under the editor,
    # and the footer below takes the keys of the settled chat
    chat_screen = pilot.app.screen_stack[0]
    await until(pilot, lambda: not any(block.is_streaming for block in chat_screen.query(MessageBlock)),
                "the summary's message settled")
    await until(pilot, lambda: footers_current(pilot.app), "the footer to show the keys in force")
    await pilot.pause()


def _adopted(app: Any) -> None:
    runtime = app.controller.runtime
    summary = BranchSummary("Keep counting words; add a line total under the table.", "summarizer", "demo")
    asyncio.run(runtime.adopt_branch(app.seeded["branch"], summary=summary))


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_message_cursor(snap_compare: Any, branch_app: Any, size: tuple[int, int]) -> None:
    assert snap_compare(branch_app, terminal_size=size, run_before=_cursor)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_branch_with_its_composer_in_the_drawer(snap_compare: Any, branch_app: Any, size: tuple[int, int]) -> None:
    assert snap_compare(branch_app, terminal_size=size, run_before=_drawer)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_branch_with_its_composer_pinned(snap_compare: Any, branch_app: Any, size: tuple[int, int]) -> None:
    assert snap_compare(branch_app, terminal_size=size, run_before=_pinned)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_branch_tree(snap_compare: Any, branch_app: Any, size: tuple[int, int]) -> None:
    assert snap_compare(branch_app, terminal_size=size, run_before=_tree)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_adopt_editor(snap_compare: Any, branch_app: Any, size: tuple[int, int]) -> None:
    assert snap_compare(branch_app, terminal_size=size, run_before=_adopt_editor)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_adopt_card(snap_compare: Any, branch_app: Any, size: tuple[int, int]) -> None:
    _adopted(branch_app)
    assert snap_compare(branch_app, terminal_size=size, run_before=quiet)
