"""Whose consensus block becomes the roundtable's consensus: only a synthesizer seat's, whatever the others write."""

from __future__ import annotations

from roundtable_seats import convene, runtime
from runtime_harness import Harness

from tunaflow_tui.core.roundtable.seats import Seat
from tunaflow_tui.runtime.roundtable import Roundtable
from tunaflow_tui.runtime.roundtable_records import ANSWER_KIND
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _block(item: str) -> str:
    return (f"My view.\n\n<!-- tunaflow:consensus -->\nconsensus:\n- {item}\n"
            "<!-- /tunaflow:consensus -->\n")


def _answer(rt: WorkflowRuntime, table: Roundtable, seat: Seat, number: int, text: str) -> None:
    rt.store.add_message(
        table.conversation_id, "assistant", text, persona=seat.persona, engine="fclaude",
        meta={"kind": ANSWER_KIND, "seat": seat.name, "round": number, "role": seat.role,
              "role_label": seat.role_label, "blind": False, "mode": "sequential", "prompt": "…",
              "context_tokens": 100, "responds_to": []})


def test_a_proposers_or_critics_consensus_block_never_becomes_the_roundtables(harness: Harness) -> None:
    rt = runtime(harness)
    alice, bob, syn = Seat("alice", "fclaude", "proposer"), Seat("bob", "fcodex", "critic"), \
        Seat("syn", "fclaude", "synthesizer")
    table = convene(rt, alice, bob, syn)
    _answer(rt, table, alice, 1, _block("Split into three modules now"))
    _answer(rt, table, bob, 1, _block("Never split"))
    _answer(rt, table, syn, 1, _block("Split once the migrations settle"))
    _answer(rt, table, alice, 2, _block("Split into three modules now"))
    _answer(rt, table, bob, 2, _block("Never split"))
    consensus = table.consensus()
    assert consensus is not None and consensus.consensus == ("Split once the migrations settle",)
    brief = table.brief()
    assert "## Consensus\n**Agreed**\n- Split once the migrations settle" in brief
    assert "- Never split" not in brief and "- Split into three modules now" not in brief
    rt.close()


def test_without_a_synthesizer_there_is_no_consensus_whatever_the_seats_write(harness: Harness) -> None:
    rt = runtime(harness)
    alice, bob = Seat("alice", "fclaude", "proposer"), Seat("bob", "fcodex", "critic")
    table = convene(rt, alice, bob)
    _answer(rt, table, alice, 1, _block("Split into three modules now"))
    _answer(rt, table, bob, 1, _block("Never split"))
    assert table.consensus() is None
    assert "## Consensus" not in table.brief()
    rt.close()
