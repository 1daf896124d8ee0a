"""The roundtable board, at 80×24 and 120×40: a live round (one seat answering, one failed with its
retry, one waiting, a moderator's message held) and the end of the rounds with the brief's Key
Positions, the consensus card and the peer ranking."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from tunaflow_tui.widgets.roundtable.roundtable_board import (
    BoardState,
    BriefView,
    RankingView,
    RoundtableBoard,
    SeatBlock,
    SeatUsage,
    board_content,
    brief_content,
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
    held=("Weigh the memory cost first.",),
    keys="> next round · + add seat · - remove seat · ctrl+r stop")
ENDED = BoardState(
    round=2, mode="sequential",
    seats=(SeatBlock("ada", "claude", "proposer", "answered", round_usage=SeatUsage(1_300, 700, 0.01),
                     total_usage=SeatUsage(2_600, 1_400, 0.02)),
           SeatBlock("syn", "claude", "synthesizer", "answered", round_usage=SeatUsage(1_900, 400, 0.008),
                     total_usage=SeatUsage(1_900, 400, 0.008))),
    rounds=((1, SeatUsage(1_300, 700, 0.01)), (2, SeatUsage(3_200, 1_100, 0.018))),
    brief=BriefView((("ada", "proposer", "Split the module now. The migrations can follow."),
                     ("syn", "synthesizer", "The seats agree on the split. Timing stays open.")),
                    RankingView(3, (("syn", 1), ("ada", 0)), (("ada", "its reply did not rank every answer"),))),
    consensus=("Split the module after the migrations land",),
    contested=("Whether the cache moves too",), dissent=("ada: split now, the migrations can follow",))


class BoardApp(App[None]):
    def __init__(self, state: BoardState, *, collapsed: bool | None = False) -> None:
        super().__init__()
        self.state = state
        self.collapsed = collapsed

    def compose(self) -> ComposeResult:
        yield RoundtableBoard(self.state, collapsed=self.collapsed, toggle_key="ctrl+n")


def test_a_failed_seat_shows_its_reason_and_the_retry_on_its_own_block() -> None:
    text = board_content(LIVE).plain
    lines = text.splitlines()
    failed = next(i for i, line in enumerate(lines) if line.startswith("✗ bram"))
    assert lines[failed] == "✗ bram · codex · critic  failed  0 in / 0 out · all 2,300 in / 640 out", "no cost invented"
    assert "exited with code 1: rate limited — re-run this seat to retry" in lines[failed + 1]
    assert "▸ ada · claude · proposer  answering  1,200 in / 80 out · $0.0042 · all 2,500 in / 900 out · $0.0121" \
        in lines
    assert "Round 1: 6,900 in / 2,040 out · $0.0079" in text
    assert "✉ held for the next round: Weigh the memory cost first." in lines
    assert brief_content(LIVE).plain == "", "no brief while the round runs"


def test_the_end_shows_the_brief_the_consensus_card_and_the_ranking() -> None:
    assert "between rounds" in board_content(ENDED).plain
    text = brief_content(ENDED).plain
    assert "Key Positions\n• ada (proposer): Split the module now. The migrations can follow." in text
    assert "Consensus\n  • Split the module after the migrations land" in text
    assert "Contested\n  • Whether the cache moves too" in text
    assert "Dissent\n  • ada: split now, the migrations can follow" in text
    assert "Peer ranking (round 3, Borda points)\n  1. syn    1\n  2. ada    0" in text
    assert "left out: ada — its reply did not rank every answer" in text


def test_agent_text_on_the_board_is_drawn_inert() -> None:
    hostile = BoardState(round=1, mode="sequential", seats=(
        SeatBlock("ada", "claude", "proposer", "failed", "boom \x1b]52;c;cGF3bmVk\x07 [bold]x[/bold]"),),
        brief=BriefView((("ada", "proposer", "ok \x1b[2J [red]no[/red]"),)))
    seats, brief = board_content(hostile), brief_content(hostile)
    assert "\x1b" not in seats.plain + brief.plain
    assert "[bold]x[/bold]" in seats.plain and "[red]no[/red]" in brief.plain, "brackets stay text, never markup"


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_live_round(snap_compare, size) -> None:
    assert snap_compare(BoardApp(LIVE), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_brief_and_consensus_card(snap_compare, size) -> None:
    assert snap_compare(BoardApp(ENDED), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_folded_as_it_starts_at_each_height(snap_compare, size) -> None:
    """Folded to its summary line under 32 rows, whole above."""
    assert snap_compare(BoardApp(LIVE, collapsed=None), terminal_size=size)
