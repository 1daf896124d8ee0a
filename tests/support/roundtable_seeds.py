"""Roundtables seeded in the store for the app tests: rounds answered, a consensus, a peer ranking."""

from __future__ import annotations

import json
from typing import Any

from tunaflow_tui.core.roundtable.seats import RoundtableSetup, Seat
from tunaflow_tui.core.turns import Usage
from tunaflow_tui.runtime.roundtable import Roundtable
from tunaflow_tui.runtime.roundtable_records import ANSWER_KIND, RANKING_MEMO_KIND

TOPIC = "Should the report also list bigrams?"

ANSWERS = {
    "alice": "List bigrams behind a flag. The default output stays as it is today.",
    "bob": "Bigrams double the memory of the report. Count them only when asked, and test the flag.",
    "syn": ("The seats agree on a flag. The memory cost stays open.\n\n<!-- tunaflow:consensus -->\n"
            "consensus:\n- Bigrams go behind a --bigrams flag\ncontested:\n- Whether to cap the memory used\n"
            "dissent:\n- bob: count nothing by default\n<!-- /tunaflow:consensus -->\n"),
}


def seed_ended(runtime: Any, *, synthesizer: bool, ranking: bool, rounds: int = 2) -> Roundtable:
    """A sequential roundtable whose ``rounds`` are stored (alice, bob and, with ``synthesizer``, syn), its
    brief written; with ``ranking``, a peer ranking that left syn out."""
    seats = [Seat("alice", "demo", "proposer"), Seat("bob", "demo", "critic")]
    if synthesizer:
        seats.append(Seat("syn", "demo", "synthesizer"))
    table = Roundtable.convene(runtime, RoundtableSetup(topic=TOPIC, seats=tuple(seats), mode="sequential"))
    for number in range(1, rounds + 1):
        for seat in seats:
            message = runtime.store.add_message(
                table.conversation_id, "assistant", ANSWERS[seat.name], persona=seat.persona, engine="demo",
                meta={"kind": ANSWER_KIND, "seat": seat.name, "round": number, "role": seat.role,
                      "role_label": seat.role_label, "blind": False, "mode": "sequential", "prompt": "…",
                      "context_tokens": 300, "responds_to": ["alice"] if seat.name != "alice" else []})
            runtime.store.update_message(message.id, usage=Usage(input_tokens=300 * number, output_tokens=40))
    if ranking:
        runtime.store.add_memo(RANKING_MEMO_KIND, json.dumps({
            "round": rounds, "scores": [{"seat": "bob", "points": 2}, {"seat": "alice", "points": 1},
                                            {"seat": "syn", "points": 0}],
            "left_out": {"syn": "its reply did not rank every answer exactly once"}}),
            branch_id=table.branch.id, conversation_id=table.conversation_id)
    table.write_brief()
    return table
