"""The roundtable board, at 80×24 and 120×40: a live round (one seat answering, one failed with its
retry, one waiting) and the end of the rounds with the brief and the consensus card."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from tunaflow_tui.widgets.roundtable_board import (
    BoardState,
    RoundtableBoard,
    SeatBlock,
    SeatUsage,
    board_content,
)

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]

LIVE = BoardState(
    round=2, mode="deliberative", running=True,
    seats=(SeatBlock("ada", "claude", "proposer", "answering", round_usage=SeatUsage(1_200, 80, 0.0042),
                     total_usage=SeatUsage(2_500, 900, 0.0121)),
           SeatBlock("bram", "codex", "critic", "failed", "exited with code 1: rate limited",
                     total_usage=SeatUsage(2_300, 640)),
           SeatBlock("chen", "gemini", "security auditor", "waiting", total_usage=SeatUsage(2_100, 500))),
    rounds=((1, SeatUsage(6_900, 2_040, 0.0079)), (2, SeatUsage(1_200, 80, 0.0042))),
    keys="palette: Next round · Stop roundtable · Cancel seat · Re-run seat")
ENDED = BoardState(
    round=2, mode="sequential",
    seats=(SeatBlock("ada", "claude", "proposer", "answered", round_usage=SeatUsage(1_300, 700, 0.01),
                     total_usage=SeatUsage(2_600, 1_400, 0.02)),
           SeatBlock("syn", "claude", "synthesizer", "answered", round_usage=SeatUsage(1_900, 400, 0.008),
                     total_usage=SeatUsage(1_900, 400, 0.008))),
    rounds=((1, SeatUsage(1_300, 700, 0.01)), (2, SeatUsage(3_200, 1_100, 0.018))),
    brief_ready=True, consensus=("Split the module after the migrations land",),
    contested=("Whether the cache moves too",), dissent=("ada: split now, the migrations can follow",))


class BoardApp(App[None]):
    def __init__(self, state: BoardState) -> None:
        super().__init__()
        self.state = state

    def compose(self) -> ComposeResult:
        yield RoundtableBoard(self.state)


def test_a_failed_seat_shows_its_reason_and_the_retry_on_its_own_block() -> None:
    text = board_content(LIVE).plain
    lines = text.splitlines()
    failed = next(i for i, line in enumerate(lines) if line.startswith("✗ bram"))
    assert "bram · codex · critic  failed" in lines[failed]
    assert "exited with code 1: rate limited — re-run this seat to retry" in lines[failed + 1]
    assert "ada · claude · proposer  answering" in text and "round 2: 1,200 in / 80 out · $0.0042" in text
    assert "all: 2,300 in / 640 out" in text and "$" not in lines[failed].split("all:")[1], "no cost invented"
    assert "Round 1: 6,900 in / 2,040 out · $0.0079" in text and "Brief ready" not in text


def test_the_end_shows_the_brief_and_the_consensus_card() -> None:
    text = board_content(ENDED).plain
    assert "Brief ready" in text and "between rounds" in text
    assert "Consensus\n  • Split the module after the migrations land" in text
    assert "Contested\n  • Whether the cache moves too" in text
    assert "Dissent\n  • ada: split now, the migrations can follow" in text


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_live_round(snap_compare, size) -> None:
    assert snap_compare(BoardApp(LIVE), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_brief_and_consensus_card(snap_compare, size) -> None:
    assert snap_compare(BoardApp(ENDED), terminal_size=size)
