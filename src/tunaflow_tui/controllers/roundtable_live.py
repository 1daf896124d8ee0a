"""A roundtable in the app: its thread in the branch pane, its board kept in step with its events.

Any roundtable the pane shows — started here, started from the shell with ``tunaflow roundtable``,
or opened from the sidebar — gets a :class:`RoundtableLive`, kept by the session's
:class:`~tunaflow_tui.controllers.roundtable_controller.RoundtableController`: the roundtable (opened from the store
when this window did not start it), whether its rounds are running here, and the moderator's
messages held for the next round. The board (:mod:`tunaflow_tui.widgets.roundtable.roundtable_board`) is
redrawn from the store on every event of the roundtable, so it shows what is stored: each seat's
state, its tokens and cost this round and in all, the totals per round, and at the end the brief,
the consensus card and the peer ranking.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tunaflow_tui.controllers.sources import message_view
from tunaflow_tui.core.roundtable.brief import first_sentences
from tunaflow_tui.runtime.roundtable import Roundtable, RoundtableError
from tunaflow_tui.runtime.roundtable_records import RANKING_MEMO_KIND, SeatFinished
from tunaflow_tui.widgets.roundtable.roundtable_board import (
    BoardState,
    BriefView,
    RankingView,
    SeatBlock,
    SeatUsage,
)
from tunaflow_tui.widgets.roundtable.roundtable_thread import RoundtableThread

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.runtime.roundtable_records import RoundtableEvent, SeatAnswer

CONTROLS = "> next round · + add seat · - remove seat · ctrl+r stop"


def _usage(answer: SeatAnswer) -> SeatUsage:
    usage = answer.message.usage
    return SeatUsage(usage.input_tokens, usage.output_tokens, usage.cost_usd)


def ranking_view(table: Roundtable) -> RankingView | None:
    """The latest peer ranking of ``table`` as stored, if that round ran."""
    memos = table.rt.store.list_memos(kind=RANKING_MEMO_KIND, branch_id=table.branch.id)
    if not memos:
        return None
    try:
        data = json.loads(memos[-1].content)
        scores = tuple((str(row["seat"]), int(row["points"])) for row in data.get("scores") or ())
        left_out = tuple((str(seat), str(why)) for seat, why in (data.get("left_out") or {}).items())
        return RankingView(int(data.get("round") or 0), scores, left_out)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def brief_view(table: Roundtable) -> BriefView | None:
    """Each seat's key position (the first two sentences of its last answer) and the ranking; None before any answer."""
    latest: dict[str, SeatAnswer] = {}
    for answer in table.answers():
        if answer.ok:
            latest[answer.seat] = answer
    if not latest:
        return None
    order = [seat.name for seat in table.setup.seats]
    names = [name for name in order if name in latest] + [name for name in latest if name not in order]
    positions = tuple((name, latest[name].role,
                       first_sentences(latest[name].message.display_text or latest[name].message.content))
                      for name in names)
    return BriefView(positions, ranking_view(table))


def board_state(table: Roundtable, *, running: bool, held: tuple[str, ...] = ()) -> BoardState:
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
        latest = this_round[-1] if this_round else None
        if latest is not None and latest.message.status != "streaming":  # its answer (or failure) is stored
            state, error = ("answered", "") if latest.ok else (
                "cancelled" if latest.message.status == "interrupted" else "failed", latest.error)
        elif table.seat_running(seat.name) or latest is not None:
            state, error = "answering", ""
        else:
            state, error = "waiting", ""
        blocks.append(SeatBlock(seat.name, seat.engine, seat.role_label, state, error, round_usage, total))
    per_round: dict[int, SeatUsage] = {}
    for answer in answers:
        per_round[answer.round] = per_round.get(answer.round, SeatUsage()).plus(_usage(answer))
    running = running or table.running
    brief = None if running else brief_view(table)
    consensus = table.consensus() if brief is not None else None
    return BoardState(
        round=shown_round, mode=table.setup.mode, seats=tuple(blocks), rounds=tuple(sorted(per_round.items())),
        running=running, brief=brief,
        consensus=consensus.consensus if consensus else (),
        contested=consensus.contested if consensus else (),
        dissent=consensus.dissent if consensus else (),
        held=held, keys=CONTROLS)


class RoundtableLive:
    """One roundtable shown in a window: keeps its board in step with its events, holds the moderator's words."""

    def __init__(self, app: AppPort, table: Roundtable) -> None:
        self.app = app
        self.table = table
        self.running = False
        """True while this window runs rounds of it (between two planned rounds too)."""
        self.held: list[str] = []
        """What the moderator wrote while a round ran: it goes to every seat when the round ends."""
        table.subscribe(self._event)

    @property
    def conversation_id(self) -> str:
        """The roundtable's conversation (``branch:{id}``)."""
        return self.table.conversation_id

    @property
    def busy(self) -> bool:
        """Whether a round or a seat's re-run is in progress."""
        return self.running or self.table.running

    def state(self) -> BoardState:
        """The board as the store and the running seats are now."""
        return board_state(self.table, running=self.busy, held=tuple(self.held))

    def thread(self) -> RoundtableThread | None:
        """The pane's thread of this roundtable, when the pane shows it."""
        for thread in self.app.query(RoundtableThread):
            if thread.conversation_id == self.conversation_id and thread.is_attached:
                return thread
        return None

    def redraw(self) -> None:
        """Show the roundtable as stored now (when the pane shows it)."""
        thread = self.thread()
        if thread is not None:
            thread.board.show(self.state())

    def flush_held(self) -> int:
        """Store the held messages as the moderator's word between rounds; how many were stored."""
        stored = 0
        while self.held:
            text = self.held.pop(0)
            try:
                self.table.add_user_message(text)
            except RoundtableError as error:
                self.app.notify(f"Your message was not stored: {error}", severity="error", timeout=10)
                continue
            stored += 1
        self.redraw()
        return stored

    def _event(self, event: RoundtableEvent) -> None:
        self.redraw()
        if isinstance(event, SeatFinished):
            # whom the answer responds to is known once it is stored: its heading says so
            self.app.call_later(self._relabel, event.answer.message.id)

    async def _relabel(self, message_id: int) -> None:
        thread = self.thread()
        record = self.table.rt.store.get_message(message_id)
        block = thread.chat.block_for(message_id) if thread is not None else None
        if block is not None and record is not None and not block.is_streaming and record.status != "streaming":
            await block.finish(message_view(record))
