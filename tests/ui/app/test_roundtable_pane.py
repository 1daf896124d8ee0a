"""A roundtable in the branch pane: every seat streams into its own block headed with its name, engine and
role; the moderator writes to every seat from the pane's composer; seats are added and removed between
rounds; the brief shows at the end; the sidebar lists the project's roundtables, shell-started ones too."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar

import pytest
from app_harness import posted, run_from_palette, screen_text, settle
from holding_engine import holding_factory
from roundtable_seeds import seed_ended
from textual.widgets import Checkbox, Input, OptionList
from waiting import until

from tunaflow_tui.agents.agent_events import EngineEvent, FinalMessage, SessionStarted, TextDelta, Usage
from tunaflow_tui.agents.base import Engine, Turn, TurnRequest
from tunaflow_tui.core.roundtable.seats import RoundtableSetup, Seat
from tunaflow_tui.core.settings.engines import EngineConfig
from tunaflow_tui.runtime.roundtable import Roundtable
from tunaflow_tui.runtime.roundtable_records import ANSWER_KIND, USER_KIND
from tunaflow_tui.screens.roundtable_setup import RoundtableRequest
from tunaflow_tui.widgets.message_block import MessageBlock
from tunaflow_tui.widgets.roundtable.roundtable_board import RoundtableBoard
from tunaflow_tui.widgets.roundtable.roundtable_thread import RoundtableThread

TOPIC = "Should the report also list bigrams?"
THREE = (Seat("alice", "demo", "proposer"), Seat("bob", "demo", "critic"), Seat("carl", "demo", "judge"))


def _start(session: Any, *seats: Seat, mode: str = "deliberative", rounds: int = 1) -> None:
    setup = RoundtableSetup(topic=TOPIC, seats=seats or THREE, mode=mode)
    session.workers.run_agent(session.roundtable.run(RoundtableRequest(setup, rounds)), "run the roundtable")


async def _round_one_of_two(pilot: Any, app: Any, session: Any, runtime: Any) -> None:
    """Start a roundtable of alice (proposer) and bob (critic) and wait until its first round is over."""
    await settle(pilot, app)
    _start(session, Seat("alice", "demo", "proposer"), Seat("bob", "demo", "critic"))
    await until(pilot, lambda: len(_answers(runtime)) == 2 and not session.workers.agents_running()
                and _thread(app) is not None, "round 1")


def _thread(app: Any) -> RoundtableThread | None:
    found = app.query(RoundtableThread)
    return found.first() if found else None


def _labels(app: Any) -> list[str]:
    thread = _thread(app)
    if thread is None:
        return []
    # a block mounted a moment ago may not have composed its label yet: it is not listed until it has
    return [str(labels.first().render()) for block in thread.chat.blocks()
            if (labels := block.query(".message-label"))]


def _block(app: Any, seat: str) -> MessageBlock | None:
    thread = _thread(app)
    for block in thread.chat.blocks() if thread is not None else ():
        labels = block.query(".message-label")  # none yet in a block mounted a moment ago
        if block.view.meta.get("seat") == seat or (labels and str(labels.first().render()).startswith(seat)):
            return block
    return None


def _answers(runtime: Any) -> list[Any]:
    branches = runtime.store.list_branches()
    if not branches:
        return []
    [branch] = branches
    return [m for m in runtime.store.list_messages(branch.shadow_conversation_id, limit=500)
            if m.meta.get("kind") == ANSWER_KIND]


async def test_deliberative_seats_stream_at_once_each_in_its_own_block_and_answers_show_as_they_finish(
        open_app: Any) -> None:
    factory, engine = holding_factory("proposer", "critic", after="report")
    app, session, _runtime = open_app(engine_factory=factory)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        _start(session)

        def two_writing_one_done() -> bool:
            # carl's block and the board's line for carl each follow carl's finished turn (in either order)
            alice, bob, carl = _block(app, "alice"), _block(app, "bob"), _block(app, "carl")
            return (alice is not None and bob is not None and carl is not None and alice.is_streaming
                    and bob.is_streaming and "report" in alice.text and "report" in bob.text
                    and not carl.is_streaming
                    and "carl · demo · judge  answered" in app.query_one(RoundtableBoard).text)

        await until(pilot, two_writing_one_done, "alice and bob writing at once while carl's answer is done")
        labels = _labels(app)
        assert any(label.startswith("alice · demo · proposer · round 1") and "writing…" in label for label in labels)
        assert any(label.startswith("bob · demo · critic · round 1") and "writing…" in label for label in labels)
        assert "carl · demo · judge · round 1" in labels, labels
        carl = _block(app, "carl")
        assert carl is not None and "As judge" in carl.text
        for seat in ("alice", "bob", "carl"):  # a fixed few widgets per message, as in the chat
            block = _block(app, seat)
            assert block is not None and len(block.query("*")) <= 12, seat
        board = app.query_one(RoundtableBoard)
        assert "alice · demo · proposer  answering" in board.text and "carl · demo · judge  answered" in board.text
        engine().release()
        await until(pilot, lambda: not session.workers.agents_running() and "Key Positions" in board.text,
                    "the round to end with the brief")
        await until(pilot, lambda: not any("writing…" in label for label in _labels(app)), "every answer finished")


class _NamingTurn(Turn):
    """A seat's turn shaped like the demo engine's: the critic names and quotes the proposer."""

    ANSWERS: ClassVar[dict[str, str]] = {"proposer": "Split the storage layer into three modules. Schema, records and queries each stand alone.",
               "critic": "I disagree with alice: two modules are enough. The queries belong with the records."}

    def __init__(self, request: TurnRequest) -> None:
        self.request = request

    async def __aiter__(self) -> AsyncIterator[EngineEvent]:
        text = self.ANSWERS.get(self.request.role, "No opinion.")
        yield SessionStarted(f"naming-{self.request.role}")
        for word in text.split(" "):
            yield TextDelta(word + " ")
        yield Usage(input_tokens=len(self.request.prompt) // 4, output_tokens=len(text) // 4)
        yield FinalMessage(text + " ")

    async def cancel(self) -> None:
        return None


class _NamingEngine(Engine):
    type = "demo"

    def __init__(self, config: EngineConfig) -> None:
        self.name = config.name or "demo"

    def start(self, request: TurnRequest) -> Turn:
        return _NamingTurn(request)


async def test_a_sequential_answer_says_whom_it_responds_to(open_app: Any) -> None:
    app, session, runtime = open_app(engine_factory=_NamingEngine)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        _start(session, Seat("alice", "demo", "proposer"), Seat("bob", "demo", "critic"), mode="sequential")
        await until(pilot, lambda: not session.workers.agents_running() and len(_answers(runtime)) == 2,
                    "both seats answering")
        await until(pilot, lambda: "bob · demo · critic · round 1 — responds to alice" in _labels(app),
                    "bob's heading naming alice")
        assert "alice · demo · proposer · round 1" in _labels(app), "the first speaker responds to nobody"


async def test_the_moderator_writes_between_rounds_every_seat_reads_it_next_round(open_app: Any) -> None:
    app, session, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _round_one_of_two(pilot, app, session, runtime)
        thread = _thread(app)
        assert thread is not None and thread.composer is not None
        assert "every seat of the roundtable" in str(thread.composer.query_one("#composer-recipient").render())
        thread.composer.focus_input()
        thread.composer.input.load_text("Weigh the memory cost of bigrams.")
        await pilot.press("enter")
        await until(pilot, lambda: len(_answers(runtime)) == 4 and not session.workers.agents_running(),
                    "the seats answering the moderator at once")
        [branch] = runtime.store.list_branches()
        messages = runtime.store.list_messages(branch.shadow_conversation_id, limit=50)
        [said] = [m for m in messages if m.meta.get("kind") == USER_KIND]
        assert said.content == "Weigh the memory cost of bigrams." and said.meta["round"] == 2, "the round it goes to"
        later = [m for m in _answers(runtime) if m.meta["round"] == 2]
        assert len(later) == 2 and all("Weigh the memory cost of bigrams." in m.meta["prompt"] for m in later)
        await until(pilot, lambda: "You · to every seat" in _labels(app), "the moderator's message in the pane")
        board = app.query_one(RoundtableBoard)
        await until(pilot, lambda: "Roundtable · round 2 ·" in board.text, "the board on round 2, not 3")
        await until(pilot, lambda: "alice · demo · proposer · round 2" in _labels(app), "the headers on round 2")
        assert not any("round 3" in label for label in _labels(app)) and "Round 3" not in board.text


async def test_a_message_written_while_a_round_runs_is_held_and_goes_with_the_next_round(open_app: Any) -> None:
    factory, engine = holding_factory("proposer", after="report")
    app, session, runtime = open_app(engine_factory=factory)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        _start(session, Seat("alice", "demo", "proposer"), Seat("bob", "demo", "critic"))
        await until(pilot, lambda: _thread(app) is not None and _block(app, "alice") is not None
                    and "report" in _block(app, "alice").text, "alice writing")  # type: ignore[union-attr]
        thread = _thread(app)
        assert thread is not None and thread.composer is not None
        thread.composer.focus_input()
        thread.composer.input.load_text("Keep it to one module.")
        await pilot.press("enter")
        board = app.query_one(RoundtableBoard)
        await until(pilot, lambda: "held for the next round: Keep it to one module." in board.text, "the held line")
        assert any("held and goes to every seat as soon as it ends" in str(n.message) for n in posted(app))
        assert not [m for m in runtime.store.list_messages(thread.conversation_id, limit=50)
                    if m.meta.get("kind") == USER_KIND], "nothing enters the running round"
        engine().release()
        await until(pilot, lambda: len(_answers(runtime)) == 4 and not session.workers.agents_running(),
                    "the round ending, the message stored and the seats answering it")
        [said] = [m for m in runtime.store.list_messages(thread.conversation_id, limit=50)
                  if m.meta.get("kind") == USER_KIND]
        assert said.meta["round"] == 2
        assert all("Keep it to one module." in m.meta["prompt"] for m in _answers(runtime) if m.meta["round"] == 2)
        await until(pilot, lambda: "held for the next round" not in board.text, "the held line gone")


async def test_seats_are_added_and_removed_between_rounds_and_refused_during_one(open_app: Any) -> None:
    from tunaflow_tui.screens.pickers import PickerScreen
    from tunaflow_tui.screens.roundtable_seat import AddSeatScreen

    factory, engine = holding_factory("proposer", after="report")
    app, session, runtime = open_app(engine_factory=factory)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        _start(session, Seat("alice", "demo", "proposer"), Seat("bob", "demo", "critic"))
        await until(pilot, lambda: engine().holding("proposer") if engine_made(engine) else False, "a round running")
        thread = _thread(app)
        assert thread is not None
        thread.chat.focus()
        await pilot.press("plus")
        await until(pilot, lambda: any("add seats between rounds" in str(n.message) for n in posted(app)),
                    "the refusal")
        assert not isinstance(app.screen, AddSeatScreen)
        engine().release()
        await until(pilot, lambda: not session.workers.agents_running() and "between rounds" in thread.board.text,
                    "the round to end")

        thread.chat.focus()
        await pilot.press("plus")
        await until(pilot, lambda: isinstance(app.screen, AddSeatScreen), "the add-seat form")
        form = app.screen
        form.query_one("#seat-name", Input).value = "bob"
        form.query_one("#seat-role", Input).value = "security auditor"
        form.query_one("#seat-blind", Checkbox).value = True
        form.query_one("#seat-name", Input).focus()
        await pilot.press("enter")
        await until(pilot, lambda: "two seats are called 'bob'" in str(form.query_one("#seat-error").render()),
                    "the taken name refused")
        form.query_one("#seat-name", Input).value = "dora"
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, AddSeatScreen), "the form closing")
        live = session.roundtable.shown_live()
        assert live is not None
        dora = live.table.setup.seat("dora")
        assert (dora.engine, dora.role, dora.role_text, dora.blind) == ("demo", "custom", "security auditor", True)
        assert "dora · demo · security auditor  waiting" in thread.board.text
        stored = Roundtable.open(runtime, live.table.branch.id).setup
        assert [s.name for s in stored.seats] == ["alice", "bob", "dora"], "the line-up is stored"

        await run_from_palette(pilot, app, "Remove seat")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the seat picker")
        await pilot.press("down", "down", "enter")  # dora
        await until(pilot, lambda: "dora" not in thread.board.text, "dora gone from the board")
        assert [s.name for s in Roundtable.open(runtime, live.table.branch.id).setup.seats] == ["alice", "bob"]


def engine_made(getter: Any) -> bool:
    try:
        getter()
    except IndexError:
        return False
    return True


async def test_the_brief_shows_key_positions_consensus_and_ranking_and_scrolls_at_80x24(open_app: Any) -> None:
    app, session, runtime = open_app()
    table = seed_ended(runtime, synthesizer=True, ranking=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await session.panes.open_branch(table.branch.id, focus=True)
        await until(pilot, lambda: _thread(app) is not None, "the roundtable in the pane")
        board = app.query_one(RoundtableBoard)
        text = board.text
        assert "Key Positions" in text
        assert "• alice (proposer): List bigrams behind a flag. The default output stays as it is today." in text
        assert "• bob (critic): Bigrams double the memory of the report. Count them only when asked, and test" \
               " the flag." in text
        assert "Consensus\n  • Bigrams go behind a --bigrams flag" in text
        assert "Contested\n  • Whether to cap the memory used" in text and "Dissent\n  • bob: count nothing" in text
        assert "Peer ranking (round 2, Borda points)\n  1. bob" in text
        assert "left out: syn — its reply did not rank every answer exactly once" in text
        assert "<!--" not in text, "no marker shows"
        await pilot.press("ctrl+n")  # a short terminal starts with the board folded
        await until(pilot, lambda: board.max_scroll_y > 0, "the brief taller than its room at 80×24")
        board.focus()
        await pilot.press("end")
        await until(pilot, lambda: board.scroll_y == board.max_scroll_y, "the board scrolled to the ranking")


@pytest.mark.parametrize("how", ["palette", "retry key"])
async def test_a_failed_seat_runs_again_from_its_error_card_or_the_palette(open_app: Any, how: str) -> None:
    app, session, runtime = open_app()
    table = Roundtable.convene(runtime, RoundtableSetup(topic=TOPIC, seats=(Seat("alice", "demo", "proposer"),)))
    failed = runtime.store.add_message(table.conversation_id, "assistant", "", persona="proposer", engine="demo",
                                       status="error", meta={"kind": ANSWER_KIND, "seat": "alice", "round": 1,
                                                             "role": "proposer", "role_label": "proposer",
                                                             "mode": "sequential", "prompt": TOPIC})
    runtime.store.update_message(failed.id, error_kind="crashed", error_message="exited with code 1")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await session.panes.open_branch(table.branch.id, focus=True)
        await until(pilot, lambda: _block(app, "alice") is not None, "alice's failed answer")
        assert "alice · demo · proposer  failed" in app.query_one(RoundtableBoard).text
        if how == "palette":
            await run_from_palette(pilot, app, "Re-run seat")
            await until(pilot, lambda: app.screen.query(OptionList), "the seat picker")
            await pilot.press("enter")
        else:
            block = _block(app, "alice")
            assert block is not None
            block.focus()
            await pilot.press("r")
        await until(pilot, lambda: [m.status for m in _answers(runtime)] == ["done"], "alice's answer replacing it")
        await until(pilot, lambda: "alice · demo · proposer  answered" in app.query_one(RoundtableBoard).text,
                    "the board following")


async def test_the_sidebar_lists_a_roundtable_started_from_the_shell_and_opens_it(
        open_app: Any, demo_project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    from tunaflow_tui.widgets.sidebar import Sidebar

    monkeypatch.setenv("TUNAFLOW_ENGINES__DEMO__DEMO_DELAY_S", "0")
    shell = subprocess.run([sys.executable, "-m", "tunaflow_tui", "roundtable", str(demo_project), "--topic", TOPIC,
                            "--seat", "ada=demo:proposer", "--seat", "ben=demo:critic", "--rounds", "1"],
                           capture_output=True, text=True, timeout=120, check=False)
    assert shell.returncode == 0, shell.stderr
    app, _session, _runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        tree = app.query_one(Sidebar).sidebar_tree
        labels = [str(node.label) for node in tree.root.children]
        assert "Roundtables 1" in labels, labels
        section = tree.root.children[labels.index("Roundtables 1")]
        [row] = section.children
        assert TOPIC[:20] in str(row.label)
        tree.focus()
        tree.move_cursor(row)
        await pilot.press("enter")
        await until(pilot, lambda: _thread(app) is not None and "Key Positions" in app.query_one(RoundtableBoard).text,
                    "the roundtable in the pane with its brief")
        text = app.query_one(RoundtableBoard).text
        assert "ada · demo · proposer  answered" in text and "ben · demo · critic  answered" in text
        labels = _labels(app)
        assert "ada · demo · proposer · round 1" in labels and "ben · demo · critic · round 1" in labels, labels


async def test_rank_answers_from_the_palette_adds_the_ranking_table_to_the_brief(open_app: Any) -> None:
    app, session, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _round_one_of_two(pilot, app, session, runtime)
        await run_from_palette(pilot, app, "Rank answers")
        board = app.query_one(RoundtableBoard)
        # the demo seats rank the answers they were shown (never their own): each scores its one place
        await until(pilot, lambda: "Peer ranking (round 1, Borda points)" in board.text
                    and not session.workers.agents_running(), "the ranking table in the brief")
        assert "left out" not in board.text
        assert "1. alice    1" in board.text and "2. bob      1" in board.text, board.text
        await until(pilot, lambda: any(str(n.message) == "Peer ranking done." for n in posted(app)),
                    "the ranking said done, nobody left out")
        await until(pilot, lambda: "alice · demo · ranks the others' answers" in _labels(app), "the ballots headed")


@pytest.mark.parametrize(("size", "folded"), [((80, 24), True), ((120, 40), False)], ids=["80x24", "120x40"])
async def test_the_board_folds_to_one_line_and_the_answers_keep_their_room(
        open_app: Any, size: tuple[int, int], folded: bool) -> None:
    app, session, runtime = open_app()
    table = seed_ended(runtime, synthesizer=True, ranking=True)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await session.panes.open_branch(table.branch.id, focus=True)
        await until(pilot, lambda: _thread(app) is not None, "the roundtable in the pane")
        thread = _thread(app)
        assert thread is not None
        board = app.query_one(RoundtableBoard)

        def shown(text: str) -> bool:
            return text in screen_text(app)

        summary = "Roundtable · round 2 · between"
        await until(pilot, lambda: board.collapsed is folded and shown(summary) is folded
                    and shown("Key Positions") is not folded, "the board as it starts at this height")
        line = str(board.query_one("#rt-summary").render())
        assert line == "Roundtable · round 2 · between rounds  ✓ 3 answered  brief ready  ctrl+n shows the board"
        assert thread.composer is not None and thread.composer.has_focus_within
        await pilot.press("ctrl+n")  # from the composer: the key works wherever the focus is in the thread
        await until(pilot, lambda: board.collapsed is not folded and (board.outer_size.height > 2) is folded,
                    "the board toggled", limit=20)
        if not board.collapsed:
            await pilot.press("ctrl+n")
            await until(pilot, lambda: board.collapsed and shown(summary), "the board folded again", limit=20)
        assert board.outer_size.height == 2, "one summary line and its border"
        assert thread.chat.outer_size.height >= 14, f"the answers get {thread.chat.outer_size.height} rows"
        assert board.styles.scrollbar_visibility == "hidden", "one scrollbar in the pane: the answers'"
        thread.chat.focus()
        await until(pilot, lambda: "Board" in screen_text(app).splitlines()[-1], "the footer naming the key", limit=20)
        await pilot.press("ctrl+n")
        await until(pilot, lambda: not board.collapsed and board.outer_size.height > 2, "unfolded again", limit=20)


async def test_a_window_opened_again_on_the_project_keeps_its_own_roundtable_board(open_app: Any) -> None:
    """Each window's session keeps the roundtables it shows: a seat removed in a second window leaves that
    window's board, not the board of a window closed before it on the same runtime."""
    from tunaflow_tui.screens.pickers import PickerScreen
    from tunaflow_tui.subcommands.open_command import build_app

    first, session, runtime = open_app()
    table = seed_ended(runtime, synthesizer=True, ranking=False)
    async with first.run_test(size=(120, 40)) as pilot:
        await settle(pilot, first)
        await session.panes.open_branch(table.branch.id, focus=True)
        await until(pilot, lambda: _thread(first) is not None, "the roundtable in the first window")

    app = build_app(runtime, notes=(), cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await app.controller.panes.open_branch(table.branch.id, focus=True)
        await until(pilot, lambda: _thread(app) is not None, "the roundtable in the second window")
        thread = _thread(app)
        assert thread is not None and "syn · demo" in thread.board.text
        await run_from_palette(pilot, app, "Remove seat")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the seat picker")
        await pilot.press("down", "down", "enter")  # syn
        await until(pilot, lambda: "syn · demo" not in thread.board.text, "syn gone from this window's board")
        assert [s.name for s in Roundtable.open(runtime, table.branch.id).setup.seats] == ["alice", "bob"]
