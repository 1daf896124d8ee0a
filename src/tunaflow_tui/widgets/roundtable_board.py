"""RoundtableBoard: a roundtable's seats, live, above its answers in the branch pane.

One block per seat: its name, engine and role, what it is doing (waiting, answering, answered,
failed with the reason and how to retry, cancelled), and its tokens in and out and cost where the
engine reports it, for the round shown and in all. A line per round gives the round's totals; when
the rounds end, the brief's state and the synthesizer's consensus show as a card.

The board only draws a :class:`BoardState`; the controller builds it from the roundtable's stored
answers and the seats running now, so what it shows is what is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.content import Content
from textual.widgets import Static


@dataclass(frozen=True, slots=True)
class SeatUsage:
    """Tokens in and out and the cost (None: not reported) of some answers."""

    input: int = 0
    output: int = 0
    cost_usd: float | None = None

    def plus(self, other: SeatUsage) -> SeatUsage:
        """Both together (a cost is known when either reports one)."""
        cost = None if self.cost_usd is None and other.cost_usd is None else \
            (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return SeatUsage(self.input + other.input, self.output + other.output, cost)

    def label(self) -> str:
        """"1,200 in / 300 out · $0.0040"."""
        cost = f" · ${self.cost_usd:.4f}" if self.cost_usd is not None else ""
        return f"{self.input:,} in / {self.output:,} out{cost}"


@dataclass(frozen=True, slots=True)
class SeatBlock:
    """One seat as the board shows it."""

    name: str
    engine: str
    role: str
    state: str
    """"waiting", "answering", "answered", "failed", "cancelled" or "stopped"."""
    error: str = ""
    round_usage: SeatUsage = field(default_factory=SeatUsage)
    total_usage: SeatUsage = field(default_factory=SeatUsage)


@dataclass(frozen=True, slots=True)
class BoardState:
    """What the board shows: the round, each seat, the totals per round, the end of the rounds."""

    round: int
    mode: str
    seats: tuple[SeatBlock, ...]
    rounds: tuple[tuple[int, SeatUsage], ...] = ()
    running: bool = False
    brief_ready: bool = False
    consensus: tuple[str, ...] = ()
    contested: tuple[str, ...] = ()
    dissent: tuple[str, ...] = ()
    keys: str = ""


_MARKS = {"waiting": ("·", "dim"), "answering": ("▸", "bold $accent"), "answered": ("✓", "$success"),
          "failed": ("✗", "bold $error"), "cancelled": ("⊘", "$warning"), "stopped": ("⊘", "$warning")}


def board_content(state: BoardState) -> Content:
    """The board as styled text (pure: the snapshot and unit tests read it)."""
    parts: list[tuple[str, str] | str] = []
    how = "running" if state.running else "between rounds"
    parts.append((f"Roundtable · round {state.round} · {state.mode} · {how}\n", "bold"))
    for seat in state.seats:
        mark, style = _MARKS.get(seat.state, ("·", ""))
        parts += [(f"{mark} ", style), (seat.name, "bold"), (f" · {seat.engine} · {seat.role}", "dim"),
                  ("  ", ""), (seat.state, style)]
        parts.append((f"   round {state.round}: {seat.round_usage.label()} · all: {seat.total_usage.label()}\n", "dim"))
        if seat.state == "failed":
            parts.append((f"    {seat.error or 'the seat failed'} — re-run this seat to retry\n", "$error"))
    for number, usage in state.rounds:
        parts.append((f"Round {number}: {usage.label()}\n", "dim"))
    if state.brief_ready or state.consensus or state.contested or state.dissent:
        parts.append(("Brief ready" if state.brief_ready else "No brief yet", "bold $success"))
        parts.append((" — adopt the branch to bring it into the main conversation\n", "dim"))
    if state.consensus or state.contested or state.dissent:
        parts.append(("Consensus\n", "bold"))
        parts += [f"  • {line}\n" for line in state.consensus]
        if state.contested:
            parts.append(("Contested\n", "bold"))
            parts += [f"  • {line}\n" for line in state.contested]
        if state.dissent:
            parts.append(("Dissent\n", "bold"))
            parts += [f"  • {line}\n" for line in state.dissent]
    if state.keys:
        parts.append((state.keys, "dim"))
    return Content.assemble(*parts).rstrip()


class RoundtableBoard(Static):
    """The seats of the roundtable shown in the branch pane, redrawn with :meth:`show`."""

    DEFAULT_CSS = """
    RoundtableBoard {
        height: auto; max-height: 50%; overflow-y: auto; padding: 0 1;
        background: $boost; border-bottom: solid $primary;
    }
    """

    def __init__(self, state: BoardState, *, id: str | None = None) -> None:
        super().__init__(board_content(state), id=id)
        self.state = state

    def show(self, state: BoardState) -> None:
        """Redraw for ``state``."""
        self.state = state
        self.update(board_content(state))
