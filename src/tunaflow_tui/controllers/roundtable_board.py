"""A running roundtable in the app: its board in the branch pane, and the moderator's controls.

The board (:mod:`tunaflow_tui.widgets.roundtable_board`) is redrawn from the store on every event of
the roundtable, so it shows what is stored: each seat's state, its tokens and cost this round and
in all, the totals per round, and at the end the brief and the consensus card. The controls
(palette: next round, stop, cancel one seat, re-run one seat) act on the roundtable shown.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from tunaflow_tui.widgets.roundtable_board import BoardState, RoundtableBoard, SeatBlock, SeatUsage

if TYPE_CHECKING:
    from textual.widget import Widget

    from tunaflow_tui.controllers.session import ProjectSession
    from tunaflow_tui.runtime.roundtable import Roundtable
    from tunaflow_tui.runtime.roundtable_records import RoundtableEvent, SeatAnswer

CONTROLS = "palette: Next round · Stop roundtable · Cancel seat · Re-run seat"
_LIVE: weakref.WeakKeyDictionary[ProjectSession, dict[int, RoundtableLive]] = weakref.WeakKeyDictionary()
"""The roundtables started in each open project window, by branch id."""


def live_of(session: ProjectSession, branch_id: int) -> RoundtableLive | None:
    """The board keeper of the roundtable ``branch_id`` started in ``session``'s window."""
    return _LIVE.get(session, {}).get(branch_id)


def _usage(answer: SeatAnswer) -> SeatUsage:
    usage = answer.message.usage
    return SeatUsage(usage.input_tokens, usage.output_tokens, usage.cost_usd)


def board_state(table: Roundtable, *, running: bool) -> BoardState:
    """The board of ``table`` as stored now; seats answering now show as answering."""
    answers = table.answers()
    shown_round = max([a.round for a in answers] + [1])
    blocks: list[SeatBlock] = []
    for seat in table.setup.seats:
        mine = [a for a in answers if a.seat == seat.name]
        this_round = [a for a in mine if a.round == shown_round]
        total = SeatUsage()
        for answer in mine:
            total = total.plus(_usage(answer))
        round_usage = SeatUsage()
        for answer in this_round:
            round_usage = round_usage.plus(_usage(answer))
        if table.seat_running(seat.name):
            state, error = "answering", ""
        elif not this_round:
            state, error = "waiting", ""
        elif this_round[-1].ok:
            state, error = "answered", ""
        else:
            failed = this_round[-1]
            error = failed.error
            state = "cancelled" if failed.message.status == "cancelled" else "failed"
        blocks.append(SeatBlock(seat.name, seat.engine, seat.role_label,
                                state, error, round_usage, total))
    per_round: dict[int, SeatUsage] = {}
    for answer in answers:
        per_round[answer.round] = per_round.get(answer.round, SeatUsage()).plus(_usage(answer))
    consensus = table.consensus()
    finished = not running and bool(answers)
    return BoardState(
        round=shown_round, mode=table.setup.mode, seats=tuple(blocks), rounds=tuple(sorted(per_round.items())),
        running=running, brief_ready=finished and bool(table.brief().strip()),
        consensus=consensus.consensus if consensus and finished else (),
        contested=consensus.contested if consensus and finished else (),
        dissent=consensus.dissent if consensus and finished else (),
        keys=CONTROLS)


class RoundtableLive:
    """Keeps the board of one roundtable in step with its events."""

    def __init__(self, session: ProjectSession, table: Roundtable) -> None:
        self.session = session
        self.table = table
        self.board = RoundtableBoard(board_state(table, running=False), id="roundtable-board")
        self.running = False
        table.subscribe(self._event)
        _LIVE.setdefault(session, {})[table.branch.id] = self

    async def attach(self) -> None:
        """Put the board at the top of the branch pane (above the answers)."""
        pane = self.session.app.workspace.pane
        if self.board.is_attached:
            return
        body = pane.body
        if body is None or not body.is_attached:
            return
        await pane.mount(self.board, before=body)
        # the board belongs to this roundtable's answers: when the pane shows another branch, it goes too
        self.board.set_interval(0.25, lambda: self._follow(body))

    def _follow(self, body: Widget) -> None:
        if not body.is_attached and self.board.is_attached:
            self.board.remove()

    def redraw(self) -> None:
        """Show the roundtable as stored now."""
        if self.board.is_attached:
            self.board.show(board_state(self.table, running=self.running))

    def _event(self, _event: RoundtableEvent) -> None:
        self.redraw()


def shown_table(session: ProjectSession) -> Roundtable | None:
    """The roundtable whose branch the pane shows, if it was started in this app."""
    cid = session.panes.branch_conversation
    if cid is None or not cid.startswith("branch:"):
        return None
    live = live_of(session, int(cid.removeprefix("branch:")))
    return live.table if live is not None else None


def _table_or_say(session: ProjectSession) -> Roundtable | None:
    table = shown_table(session)
    if table is None:
        session.app.notify("Open a roundtable started in this window in the branch pane first.", severity="warning")
    return table


def next_round(session: ProjectSession) -> None:
    """Run one more round of the roundtable shown (the user's messages since are seen by every seat)."""
    table = _table_or_say(session)
    if table is None:
        return
    if table.running:
        session.app.notify("A round is running: wait for it, or stop it.", severity="warning")
        return
    live = live_of(session, table.branch.id)

    async def one_round() -> None:
        if live is not None:
            live.running = True
            live.redraw()
        try:
            await table.run_round()
        finally:
            if live is not None:
                live.running = False
                live.redraw()
        table.write_brief()

    session.workers.run_agent(one_round(), "run the next round")


def stop(session: ProjectSession) -> None:
    """Stop the roundtable shown: its running seats are cancelled, no further seat starts."""
    table = _table_or_say(session)
    if table is not None:
        stopped = table.stop()
        session.app.notify(f"Roundtable stopped ({stopped} seats cancelled)." if stopped else "Roundtable stopped.")


def _pick_seat(session: ProjectSession, table: Roundtable, title: str, running_only: bool,
               then: Callable[[str], None]) -> None:
    from tunaflow_tui.screens.pickers import PickerScreen

    seats = [s for s in table.setup.seats if table.seat_running(s.name) or not running_only]
    if not seats:
        session.app.notify("No seat is answering now.", severity="warning")
        return
    choices = [(s.name, f"{s.name} · {s.engine} · {s.role_label}") for s in seats]

    def picked(name: str | None) -> None:
        if name:
            then(name)

    session.app.push_screen(PickerScreen(title, "Pick a seat (enter), escape to leave it.", choices), picked)


def cancel_seat(session: ProjectSession) -> None:
    """Cancel one answering seat of the roundtable shown; the others go on."""
    table = _table_or_say(session)
    if table is not None:
        _pick_seat(session, table, "Cancel seat", True, lambda name: _cancelled(session, table, name))


def _cancelled(session: ProjectSession, table: Roundtable, name: str) -> None:
    if not table.cancel_seat(name):
        session.app.notify(f"{name} is not answering now.", severity="warning")


def rerun_seat(session: ProjectSession) -> None:
    """Run one seat's latest turn again; its new answer replaces only that one."""
    table = _table_or_say(session)
    if table is None:
        return
    if table.running:
        session.app.notify("A round is running: re-run a seat between rounds.", severity="warning")
        return

    def rerun(name: str) -> None:
        live = live_of(session, table.branch.id)

        async def again() -> None:
            await table.rerun_seat(name)
            if live is not None:
                live.redraw()

        session.workers.run_agent(again(), f"run {name} again")

    _pick_seat(session, table, "Re-run seat", False, rerun)
