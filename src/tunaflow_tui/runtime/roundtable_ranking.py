"""The optional anonymous peer-ranking round of a roundtable (see :mod:`tunaflow_tui.core.roundtable.ranking`).

Every seat, at once, ranks the others' latest answers shown under letters in an order shuffled for
it alone; it never sees its own answer or any name. The rankings are stored as messages of their
own round (no later round shows them to a seat); the Borda totals and which letter meant which
seat for each voter are stored as a ``roundtable_ranking`` memo, for the user only. A seat whose
turn fails or whose reply does not rank every letter once is left out, and the result says so.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import TYPE_CHECKING, Protocol

from tunaflow_tui.agents.base import PermissionProfile, TurnRequest
from tunaflow_tui.core.roundtable.ranking import (
    Ballot,
    RankedLine,
    RankingResult,
    borda,
    make_ballots,
    parse_ranking,
)
from tunaflow_tui.core.roundtable.seat_prompts import ranking_prompt
from tunaflow_tui.core.roundtable.seats import Seat
from tunaflow_tui.runtime.ports import ProjectData
from tunaflow_tui.runtime.roundtable_records import (
    RANKING_KIND,
    RANKING_MEMO_KIND,
    RankingFinished,
    SeatAnswer,
)
from tunaflow_tui.runtime.roundtable_text import RoundtableError, plain_text_keep_lines, system_text
from tunaflow_tui.runtime.tokens import default_counter

if TYPE_CHECKING:
    from tunaflow_tui.agents.base import Engine
    from tunaflow_tui.core.roundtable.seats import RoundtableSetup
    from tunaflow_tui.core.storage.records import BranchRecord
    from tunaflow_tui.runtime.agent_turn import TurnRunner
    from tunaflow_tui.runtime.roundtable_records import RoundtableEvent


class RankingHost(ProjectData, Protocol):
    """What a ranking round uses of the runtime: the project's data and the turn runner."""

    @property
    def runner(self) -> TurnRunner:
        """Runs the seats' ranking turns."""


class RankedTable(Protocol):
    """What a ranking round uses of its roundtable."""

    @property
    def rt(self) -> RankingHost:
        """The runtime the roundtable runs in."""

    @property
    def branch(self) -> BranchRecord:
        """The roundtable's branch."""

    @property
    def setup(self) -> RoundtableSetup:
        """The topic and the seats."""

    @property
    def conversation_id(self) -> str:
        """The conversation the seats speak into."""

    def ensure_between_rounds(self, what: str) -> None:
        """Raise while a round runs or when the branch is read-only."""

    def answers(self) -> tuple[SeatAnswer, ...]:
        """Every stored seat answer."""

    def last_round(self) -> int:
        """The latest round in which seats spoke."""

    def engine_for_seat(self, seat: Seat) -> tuple[Engine, str]:
        """The engine and model of ``seat``."""

    def emit(self, event: RoundtableEvent) -> None:
        """Tell the roundtable's observers."""


async def rank(table: RankedTable, rng: random.Random | None = None) -> RankingResult:
    """Run the peer-ranking round over the seats' latest answers; the result is stored and returned."""
    table.ensure_between_rounds("rank the answers")
    latest: dict[str, str] = {}
    for answer in table.answers():
        if answer.ok and answer.seat in {seat.name for seat in table.setup.seats}:
            latest[answer.seat] = plain_text_keep_lines(answer.message.content)
    if len(latest) < 2:
        raise RoundtableError("ranking needs the answers of at least two seats")
    ballots = make_ballots(latest, rng or random.Random())
    number = table.last_round()  # the round whose answers are ranked: ranking takes no round of its own
    seats = {seat.name: seat for seat in table.setup.seats}
    texts = await asyncio.gather(*(_vote(table, seats[b.voter], b, latest, number) for b in ballots))
    rankings: dict[str, tuple[RankedLine, ...]] = {}
    left_out: dict[str, str] = {}
    for ballot, (text, failure) in zip(ballots, texts, strict=True):
        if failure:
            left_out[ballot.voter] = failure
            continue
        parsed = parse_ranking(text, list(ballot.labels))
        if parsed is None:
            left_out[ballot.voter] = "its reply did not rank every answer exactly once"
            continue
        rankings[ballot.voter] = tuple(RankedLine(ballot.labels[label], label, reason) for label, reason in parsed)
    scores = borda({voter: [line.seat for line in lines] for voter, lines in rankings.items()}, list(latest))
    result = RankingResult(scores, rankings, left_out, {b.voter: dict(b.labels) for b in ballots})
    table.rt.store.add_memo(RANKING_MEMO_KIND, json.dumps({"round": number, **result.to_json()}, ensure_ascii=False),
                            branch_id=table.branch.id, conversation_id=table.conversation_id)
    table.emit(RankingFinished(scores, left_out))
    return result


async def _vote(table: RankedTable, seat: Seat, ballot: Ballot, latest: dict[str, str],
                number: int) -> tuple[str, str]:
    """One seat's ranking turn: ``(reply, "")`` or ``("", why it failed)``."""
    labelled = [(label, latest[seat_name]) for label, seat_name in ballot.labels.items()]
    prompt = ranking_prompt(seat, table.setup.topic, labelled)
    meta: dict[str, object] = {"kind": RANKING_KIND, "seat": seat.name, "round": number, "prompt": prompt,
                               "context_tokens": default_counter().count(prompt)}
    try:
        engine, model = table.engine_for_seat(seat)
        request = TurnRequest(prompt=prompt, cwd=table.rt.project_dir, system=system_text(seat),
                              role=seat.persona, profile=PermissionProfile.READ_ONLY)
        result = await table.rt.runner.run(engine=engine, model=model, conversation_id=table.conversation_id,
                                           role=seat.persona, request=request, meta=meta)
    except Exception as exc:  # a seat that cannot run is left out; the others still count
        return "", f"its turn could not start: {exc}"
    if not result.ok:
        message = result.message
        return "", f"its turn failed: {(message.error_message or message.status).splitlines()[0]}"
    return result.text, ""
