"""Starting a roundtable in the app: the palette opens the set-up form, which estimates, refuses bad lines,
and on confirm opens the roundtable as a branch in the pane while its seats answer."""

from __future__ import annotations

from app_harness import run_from_palette, settle
from textual.widgets import Input, Static, TextArea
from waiting import until

from tunaflow_tui.screens.roundtable_setup import RoundtableSetupScreen, parse_seat_line, seat_line

TOPIC = "Should the report also list bigrams?"


async def _setup_form(pilot, app) -> RoundtableSetupScreen:  # type: ignore[no-untyped-def]
    """Open the set-up form from the palette, its topic typed in."""
    await settle(pilot, app)
    await run_from_palette(pilot, app, "Start roundtable")
    await until(pilot, lambda: isinstance(app.screen, RoundtableSetupScreen), "the set-up form")
    form = app.screen
    assert isinstance(form, RoundtableSetupScreen)
    form.query_one("#rt-topic", Input).value = TOPIC
    return form


def test_a_seat_line_carries_model_and_limit() -> None:
    seat = parse_seat_line("sec=demo:security auditor:blind model=opus limit=300")
    assert (seat.name, seat.role_text, seat.blind, seat.model, seat.output_limit) == (
        "sec", "security auditor", True, "opus", 300)
    assert parse_seat_line(seat_line(seat)) == seat


async def test_start_roundtable_sets_up_estimates_and_opens_the_branch_in_the_pane(open_app) -> None:
    app, session, runtime = open_app()
    async with app.run_test(size=(140, 44)) as pilot:
        form = await _setup_form(pilot, app)
        seats = form.query_one("#rt-seats", TextArea)
        seats.text = "alice=demo:proposer\nbob=nope:critic"
        error = form.query_one("#rt-error", Static)
        await until(pilot, lambda: "unknown engine 'nope'" in str(error.render()), "the bad line named")
        form.query_one("#rt-topic", Input).focus()
        await pilot.press("enter")  # enter in the form starts, as the Start button does
        await pilot.pause()
        assert app.screen is form and not runtime.store.list_branches(), "nothing starts"
        seats.text = "alice=demo:proposer\nbob=demo:critic:blind limit=200"
        form.query_one("#rt-rounds", Input).value = "2"
        estimate = form.query_one("#rt-estimate", Static)
        await until(pilot, lambda: "2 seats × 2 rounds = 4 calls" in str(estimate.render()), "the estimate")
        assert "input tokens in round 1: alice ~" in str(estimate.render())
        form.query_one("#rt-topic", Input).focus()
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, RoundtableSetupScreen), "the form closing")

        def answered() -> bool:
            branches = runtime.store.list_branches()
            if not branches:
                return False
            messages = runtime.store.list_messages(branches[0].shadow_conversation_id)
            return sum(1 for m in messages if m.meta.get("kind") == "roundtable_answer" and m.status == "done") == 4

        await until(pilot, answered, "both seats answering both rounds")
        [branch] = runtime.store.list_branches()
        assert branch.mode == "roundtable"
        assert session.panes.branch_conversation == branch.shadow_conversation_id
        await until(pilot, lambda: not session.workers.agents_running(), "the rounds to end")
        assert runtime.store.list_memos(kind="roundtable_brief", branch_id=branch.id)


async def test_the_board_shows_each_seat_live_and_the_controls_run_a_round_and_rerun_one_seat(open_app) -> None:
    from textual.widgets import OptionList

    from tunaflow_tui.widgets.roundtable.roundtable_board import RoundtableBoard

    app, session, runtime = open_app()
    async with app.run_test(size=(140, 44)) as pilot:
        form = await _setup_form(pilot, app)
        form.query_one("#rt-rounds", Input).value = "1"
        form.query_one("#rt-seats", TextArea).text = "alice=demo:proposer\nbob=demo:critic"
        await pilot.click("#rt-start")
        await until(pilot, lambda: not isinstance(app.screen, RoundtableSetupScreen), "the form closing")
        await until(pilot, lambda: app.query(RoundtableBoard), "the board in the pane")
        board = app.query_one(RoundtableBoard)
        await until(pilot, lambda: not session.workers.agents_running() and "between rounds" in board.text,
                    "the round to end")
        text = board.text
        assert "alice · demo · proposer" in text and "bob · demo · critic" in text, text
        assert text.count("answered") == 2 and "between rounds" in text
        live = session.roundtable.shown_live()
        assert live is not None
        table = live.table
        tokens = table.token_totals()["per_seat"]["alice"]
        assert f"{tokens['input']:,} in / {tokens['output']:,} out" in text, "the seat's tokens, as stored"
        assert "Round 1: " in text and "Key Positions" in text

        done = table.last_round()
        await run_from_palette(pilot, app, "Next round")
        nxt = done + 1
        await until(pilot, lambda: len(table.answers()) == 2 * nxt and not session.workers.agents_running(),
                    "one more round answered by both seats")
        await until(pilot, lambda: f"round {nxt} ·" in board.text and f"Round {nxt}: " in board.text,
                    "the board on the new round")

        before = {a.seat: a.message.id for a in table.answers() if a.round == nxt}
        await run_from_palette(pilot, app, "Re-run seat")
        await until(pilot, lambda: app.screen.query(OptionList), "the seat picker")
        await pilot.press("down", "enter")  # bob
        await until(pilot, lambda: not session.workers.agents_running()
                    and {a.seat: a.message.id for a in table.answers() if a.round == nxt}.get("bob") not in
                    (None, before["bob"]), "bob's answer replaced")
        after = {a.seat: a.message.id for a in table.answers() if a.round == nxt}
        assert after["alice"] == before["alice"], "only the re-run seat's answer is replaced"
        assert len(table.answers()) == 2 * nxt

        other = runtime.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                            mode="chat", kind="general", label="another branch")
        await session.panes.open_branch(other.id)
        await until(pilot, lambda: not app.query(RoundtableBoard), "the board leaving with its roundtable")
