"""RoundtableBoard: a roundtable's seats, live, above its answers in the branch pane, and its brief at the end.

One line per seat: its name, engine and role, what it is doing (waiting, answering, answered,
failed with the reason and how to retry, cancelled), and its tokens in and out and cost where the
engine reports it, for the round shown and in all. A line per round gives the round's totals. When
the rounds end, the brief follows: each seat's key position, the synthesizer's consensus card, and
the peer-ranking table when that round ran. The board scrolls (it takes the focus for the arrow
keys) so the whole brief is readable in a small terminal; its scrollbar is hidden, so the pane has one
(the answers'). It folds to one summary line (the thread's key, :attr:`RoundtableBoard.collapsed`),
as it starts in a terminal shorter than :data:`FOLD_BELOW_ROWS`, so the answers keep their room.

The board only draws a :class:`BoardState`; the controller builds it from the roundtable's stored
answers and the seats running now, so what it shows is what is stored. Every text from an agent is
neutralised and drawn as plain text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from tunaflow_tui.core.terminal_text import neutralize


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
class RankingView:
    """The peer-ranking round's Borda totals (best first) and the voters left out, with why."""

    round: int
    scores: tuple[tuple[str, int], ...]
    left_out: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class BriefView:
    """The brief as the board shows it: each seat's key position, then the ranking if it ran."""

    positions: tuple[tuple[str, str, str], ...]
    """(seat, role, its first two sentences)."""
    ranking: RankingView | None = None


@dataclass(frozen=True, slots=True)
class BoardState:
    """What the board shows: the round, each seat, the totals per round, the end of the rounds."""

    round: int
    mode: str
    seats: tuple[SeatBlock, ...]
    rounds: tuple[tuple[int, SeatUsage], ...] = ()
    running: bool = False
    brief: BriefView | None = None
    """The brief, once the rounds are over (None while they run or before any answer)."""
    consensus: tuple[str, ...] = ()
    contested: tuple[str, ...] = ()
    dissent: tuple[str, ...] = ()
    held: tuple[str, ...] = ()
    """The moderator's messages waiting for the running round to end (they go with the next one)."""
    keys: str = ""

    @property
    def brief_ready(self) -> bool:
        """Whether the brief is shown."""
        return self.brief is not None


_MARKS = {"waiting": ("·", "dim"), "answering": ("▸", "bold $accent"), "answered": ("✓", "$success"),
          "failed": ("✗", "bold $error"), "cancelled": ("⊘", "$warning"), "stopped": ("⊘", "$warning")}


def _line(text: str) -> str:
    return " ".join(neutralize(text).split())


def _usage_text(seat: SeatBlock) -> str:
    """The seat's tokens this round, and in all when it spoke in earlier rounds too; empty before any."""
    spent = seat.round_usage
    total = seat.total_usage
    if total == SeatUsage():
        return ""
    if spent == total:
        return spent.label()
    return f"{spent.label()} · all {total.label()}"


FOLD_BELOW_ROWS = 32
"""A terminal shorter than this starts with the board folded to its summary line."""


def summary_content(state: BoardState, toggle_key: str = "") -> Content:
    """The folded board's one line: the round, how many seats did what, the key that unfolds it."""
    how = "running" if state.running else "between rounds"
    counts: dict[str, int] = {}
    for seat in state.seats:
        counts[seat.state] = counts.get(seat.state, 0) + 1
    parts: list[tuple[str, str] | str] = [(f"Roundtable · round {state.round} · {how}", "bold")]
    for seat_state, number in counts.items():
        mark, style = _MARKS.get(seat_state, ("·", ""))
        parts += [("  ", ""), (f"{mark} {number} {seat_state}", style)]
    if state.held:
        parts += [("  ", ""), (f"✉ {len(state.held)} held", "bold $warning")]
    if state.brief_ready:
        parts += [("  ", ""), ("brief ready", "$success")]
    if toggle_key:
        parts += [("  ", ""), (f"{toggle_key} shows the board", "dim")]
    return Content.assemble(*parts)


def board_content(state: BoardState) -> Content:
    """The seats and the rounds as styled text, a line per seat (pure: the snapshot and unit tests read it)."""
    parts: list[tuple[str, str] | str] = []
    how = "running" if state.running else "between rounds"
    parts.append((f"Roundtable · round {state.round} · {state.mode} · {how}\n", "bold"))
    for seat in state.seats:
        mark, style = _MARKS.get(seat.state, ("·", ""))
        parts += [(f"{mark} ", style), (_line(seat.name), "bold"),
                  (f" · {_line(seat.engine)} · {_line(seat.role)}", "dim"), ("  ", ""), (seat.state, style)]
        spent = _usage_text(seat)
        parts.append((f"  {spent}\n" if spent else "\n", "dim"))
        if seat.state == "failed":
            parts.append((f"    {_line(seat.error) or 'the seat failed'} — re-run this seat to retry\n", "$error"))
    for number, usage in state.rounds:
        parts.append((f"Round {number}: {usage.label()}\n", "dim"))
    for text in state.held:
        parts.append(("✉ held for the next round: ", "bold $warning"))
        parts.append((f"{_line(text)[:120]}\n", ""))
    if state.keys:
        parts.append((state.keys, "dim"))
    return Content.assemble(*parts).rstrip()


def brief_content(state: BoardState) -> Content:
    """The brief (Key Positions), the consensus card and the ranking table as styled text."""
    brief = state.brief
    if brief is None:
        return Content("")
    parts: list[tuple[str, str] | str] = [("Brief", "bold $success"),
                                          (" — adopt the branch to bring it into the main conversation\n", "dim"),
                                          ("Key Positions\n", "bold")]
    for seat, role, summary in brief.positions:
        parts += [("• ", ""), (_line(seat), "bold"), (f" ({_line(role)}): ", "dim"),
                  (f"{_line(summary) or '(no answer)'}\n", "")]
    if state.consensus or state.contested or state.dissent:
        parts.append(("Consensus\n", "bold"))
        parts += [f"  • {_line(line)}\n" for line in state.consensus]
        if state.contested:
            parts.append(("Contested\n", "bold"))
            parts += [f"  • {_line(line)}\n" for line in state.contested]
        if state.dissent:
            parts.append(("Dissent\n", "bold"))
            parts += [f"  • {_line(line)}\n" for line in state.dissent]
    ranking = brief.ranking
    if ranking is not None:
        parts.append((f"Peer ranking (round {ranking.round}, Borda points)\n", "bold"))
        width = max((len(_line(seat)) for seat, _points in ranking.scores), default=4)
        for place, (seat, points) in enumerate(ranking.scores, 1):
            parts.append(f"  {place}. {_line(seat).ljust(width)}  {points:>3}\n")
        for seat, why in ranking.left_out:
            parts.append((f"  left out: {_line(seat)} — {_line(why)}\n", "dim"))
    return Content.assemble(*parts).rstrip()


class RoundtableBoard(VerticalScroll, can_focus=True):
    """The seats of the roundtable shown in the branch pane, redrawn with :meth:`show`."""

    HELP = """\
## Roundtable board
The seats, what each is doing and what it cost; when the rounds end, the brief: each seat's key
position, the consensus and the peer ranking. **up/down** and **page up/down** scroll it.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "scroll_up", "Scroll up", show=False),
        Binding("down", "scroll_down", "Scroll down", show=False),
    ]

    DEFAULT_CSS = """
    RoundtableBoard {
        height: auto; max-height: 50%; padding: 0 1;
        background: $boost; border-bottom: solid $primary;
        scrollbar-visibility: hidden;
    }
    RoundtableBoard.-brief { max-height: 60%; }
    RoundtableBoard.-folded { max-height: 2; }
    RoundtableBoard:focus { background-tint: $accent 10%; }
    RoundtableBoard > Static { height: auto; }
    RoundtableBoard > #rt-brief { margin-top: 1; }
    RoundtableBoard > #rt-summary { display: none; text-wrap: nowrap; text-overflow: ellipsis; }
    RoundtableBoard.-folded > #rt-summary { display: block; }
    RoundtableBoard.-folded > #rt-seats-view, RoundtableBoard.-folded > #rt-brief { display: none; }
    """

    collapsed: reactive[bool] = reactive(False, init=False)
    """Folded to its summary line."""

    def __init__(self, state: BoardState, *, collapsed: bool | None = None, toggle_key: str = "",
                 id: str | None = None) -> None:
        """``collapsed``: None folds it when the terminal is shorter than :data:`FOLD_BELOW_ROWS`;
        ``toggle_key``: the key that unfolds it, as the summary line names it."""
        super().__init__(id=id)
        self.state = state
        self._collapsed_at_start = collapsed
        self.toggle_key = toggle_key

    def compose(self) -> ComposeResult:
        yield Static(summary_content(self.state, self.toggle_key), id="rt-summary")
        yield Static(board_content(self.state), id="rt-seats-view")
        brief = Static(brief_content(self.state), id="rt-brief")
        brief.display = self.state.brief_ready
        yield brief
        self.set_class(self.state.brief_ready, "-brief")

    def on_mount(self) -> None:
        folded = self._collapsed_at_start
        self.collapsed = self.app.size.height < FOLD_BELOW_ROWS if folded is None else folded
        self.set_class(self.collapsed, "-folded")

    def watch_collapsed(self, collapsed: bool) -> None:
        self.set_class(collapsed, "-folded")
        self.scroll_home(animate=False)

    def toggle(self) -> None:
        """Fold the board to its summary line, or unfold it."""
        self.collapsed = not self.collapsed

    @property
    def text(self) -> str:
        """What the board says, as plain text (seats, then the brief)."""
        text = board_content(self.state).plain
        if self.state.brief_ready:
            text += "\n" + brief_content(self.state).plain
        return text

    def show(self, state: BoardState) -> None:
        """Redraw for ``state``."""
        self.state = state
        if not self.is_mounted:
            return
        self.query_one("#rt-summary", Static).update(summary_content(state, self.toggle_key))
        self.query_one("#rt-seats-view", Static).update(board_content(state))
        brief = self.query_one("#rt-brief", Static)
        brief.update(brief_content(state))
        brief.display = state.brief_ready
        self.set_class(state.brief_ready, "-brief")
