"""Snapshots of a roundtable in the whole app at 80×24 and 120×40: a live deliberative round (two seats
streaming, one done), the brief at the end (Key Positions, whom each answer responds to, the peer
ranking) and the consensus card. Finished states are seeded in the store; the live round holds two
seats mid-answer."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from app_harness import quiet
from holding_engine import holding_factory
from roundtable_seeds import TOPIC, seed_ended
from textual.containers import ScrollableContainer
from waiting import until

from tunaflow_tui.controllers import status_controller
from tunaflow_tui.core.roundtable.seats import RoundtableSetup, Seat
from tunaflow_tui.screens.roundtable_setup import RoundtableRequest
from tunaflow_tui.widgets.message_block import MessageBlock
from tunaflow_tui.widgets.roundtable.roundtable_board import RoundtableBoard
from tunaflow_tui.widgets.roundtable.roundtable_thread import RoundtableThread
from tunaflow_tui.widgets.stream_clock import GROW_INTERVAL

SIZES = [(80, 24), (120, 40)]
IDS = ["80x24", "120x40"]
FOLDER = "tunaflow-roundtable-snapshots"


def _blocks(app: Any) -> dict[str, MessageBlock]:
    found = app.query(RoundtableThread)
    if not found:
        return {}
    # a block mounted a moment ago may not have composed its label yet: it is not listed until it has
    return {str(labels.first().render()).split(" · ")[0]: block
            for block in found.first().chat.blocks() if (labels := block.query(".message-label"))}


async def _settled_view(pilot: Any) -> None:
    """Every runtime update drawn, no toast, every scrollbar where its view is (agents may still be held)."""
    app = pilot.app
    await app.controller.bridge.drained()
    await pilot.pause()
    app.clear_notifications()

    def thumbs_in_place() -> bool:
        stale = [view for view in app.screen.query(ScrollableContainer)
                 if view.show_vertical_scrollbar and view.display and (
                     view.vertical_scrollbar.position != view.scroll_y
                     or view.vertical_scrollbar.window_virtual_size != view.virtual_size.height
                     or view.vertical_scrollbar.window_size != view.scrollable_content_region.height)]
        for view in stale:
            view.refresh(layout=True)
            view.vertical_scrollbar.refresh()
        return not stale

    await until(pilot, thumbs_in_place, "the scrollbars to show where their views are")
    for view in app.screen.query(ScrollableContainer):  # drawn anew from where they are now
        if view.show_vertical_scrollbar and view.display:
            view.vertical_scrollbar.refresh()
    await pilot.pause()
    await pilot.pause()


def _started_in_seat_order(runtime: Any, monkeypatch: pytest.MonkeyPatch, order: tuple[str, ...]) -> None:
    """Seats of a deliberative round still run at once, but each one's message is created after the
    previous seat's: their blocks (and status lines) stand in seat order on every run."""
    real_run = runtime.runner.run
    started: list[str] = []

    async def run(**kwargs: Any) -> Any:
        seat = str(kwargs["meta"]["seat"])
        while len(started) < order.index(seat):  # the seats before it have their message
            await asyncio.sleep(0.005)
        turn = asyncio.ensure_future(real_run(**kwargs))
        while not turn.done() and not any(m.meta.get("seat") == seat for m in
                                          runtime.store.list_messages(kwargs["conversation_id"], limit=50)):
            await asyncio.sleep(0.005)
        started.append(seat)
        return await turn

    monkeypatch.setattr(runtime.runner, "run", run)


@pytest.fixture
def live_app(steady_app: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(status_controller, "now", lambda: 0.0)  # the status line's elapsed time reads 0s
    factory, engine = holding_factory("proposer", "critic", after="report")
    app = steady_app(FOLDER, engine_factory=factory)
    _started_in_seat_order(app.controller.runtime, monkeypatch, ("alice", "bob", "carl"))
    app.held_engine = engine
    return app


async def _live_round(pilot: Any) -> None:
    app = pilot.app
    await quiet(pilot)
    session = app.controller
    setup = RoundtableSetup(topic=TOPIC, mode="deliberative", seats=(
        Seat("alice", "demo", "proposer"), Seat("bob", "demo", "critic"), Seat("carl", "demo", "judge")))
    session.workers.run_agent(session.roundtable.run(RoundtableRequest(setup, 1)), "run the roundtable")

    def two_writing_one_done() -> bool:
        blocks = _blocks(app)
        if not {"alice", "bob", "carl"} <= set(blocks):
            return False
        alice, bob, carl = blocks["alice"], blocks["bob"], blocks["carl"]
        return (alice.is_streaming and bob.is_streaming and not carl.is_streaming and "report" in alice.text
                and "report" in bob.text and alice.shows_all and bob.shows_all
                and "carl · demo · judge  answered" in app.query_one(RoundtableBoard).text)

    await until(pilot, two_writing_one_done, "alice and bob writing, carl done", limit=60)
    chat = app.query_one(RoundtableThread).chat
    # the streaming tails have taken their rows and the chat follows its newest line
    seen: list[tuple[float, tuple[int, float]]] = []

    def laid_out() -> bool:  # the tails have their rows: the chat's height and place hold over two growth beats
        now = (chat.virtual_size.height, chat.scroll_y)
        if not seen or seen[-1][1] != now:
            seen.append((time.monotonic(), now))
        return (all(b.shows_all for b in _blocks(app).values()) and chat.scroll_y == chat.max_scroll_y
                and time.monotonic() - seen[-1][0] >= 2 * GROW_INTERVAL)

    await until(pilot, laid_out, "the pane's chat laid out at its newest line")
    chat.scroll_home(animate=False)  # the topic, then the two seats writing, then the one done
    await until(pilot, lambda: chat.scroll_y == 0, "the pane's chat at its first message")
    await _settled_view(pilot)


@pytest.fixture
def ended_app(steady_app: Any) -> Any:
    return steady_app(FOLDER)


async def _open_seeded(pilot: Any, *, synthesizer: bool, ranking: bool) -> None:
    app = pilot.app
    await quiet(pilot)
    table = seed_ended(app.controller.runtime, synthesizer=synthesizer, ranking=ranking)
    await app.controller.panes.refresh_sidebar()
    await app.controller.panes.open_branch(table.branch.id, focus=True)
    if app.workspace.narrow:
        await pilot.press("f7")  # the pinned pane takes the whole width of a narrow terminal
    await until(pilot, lambda: app.query(RoundtableBoard) and "Key Positions" in app.query_one(RoundtableBoard).text,
                "the roundtable with its brief")
    await quiet(pilot)


async def _brief(pilot: Any) -> None:
    await _open_seeded(pilot, synthesizer=False, ranking=True)


async def _consensus(pilot: Any) -> None:
    await _open_seeded(pilot, synthesizer=True, ranking=False)
    board = pilot.app.query_one(RoundtableBoard)
    board.focus()
    await pilot.press("end")  # the card closes the brief: scrolled into view
    await until(pilot, lambda: board.scroll_y == board.max_scroll_y, "the board scrolled to the consensus card")
    await quiet(pilot)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_live_round(snap_compare: Any, live_app: Any, size: tuple[int, int]) -> None:
    assert snap_compare(live_app, terminal_size=size, run_before=_live_round)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_brief(snap_compare: Any, ended_app: Any, size: tuple[int, int]) -> None:
    assert snap_compare(ended_app, terminal_size=size, run_before=_brief)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_consensus_card(snap_compare: Any, ended_app: Any, size: tuple[int, int]) -> None:
    assert snap_compare(ended_app, terminal_size=size, run_before=_consensus)
