"""The roundtable set-up form: topic, participants, mode, rounds, and what it will cost before it starts.

Participants are written one per line, as on the command line, with an optional model and output
limit: ``NAME=ENGINE[:ROLE][:blind] [model=M] [limit=N]``. Two presets fill the lines: the last
line-up used in this project, and one seat per vendor CLI found on this machine. Under the form,
the estimate: calls (seats × rounds) and the input tokens each seat is sent in round 1 (later
rounds add the compressed excerpts of earlier ones). Enter on a field or "Start" confirms; escape
cancels. What is wrong is named under the form once the user has changed something or pressed
Start (never on a form just opened), and nothing starts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Select, Static, TextArea

from tunaflow_tui.core.roundtable.seats import MODES, RoundtableSetup, Seat, SeatSpecError, parse_seat_spec
from tunaflow_tui.keyhints import key_for
from tunaflow_tui.screens.dialog import DialogScreen

_OPTION = re.compile(r"\s+(model|limit)=(\S+)\s*$")
LATER_ROUND_EXTRA_TOKENS = 1_000
"""About what compressed excerpts of earlier rounds add to a sighted seat's prompt (5 chunks)."""


@dataclass(frozen=True, slots=True)
class RoundtableRequest:
    """What the form confirmed: the set-up and how many rounds to run."""

    setup: RoundtableSetup
    rounds: int


def parse_seat_line(line: str) -> Seat:
    """A seat from ``NAME=ENGINE[:ROLE][:blind] [model=M] [limit=N]``; SeatSpecError when it is wrong."""
    options: dict[str, str] = {}
    rest = line.strip()
    while (match := _OPTION.search(rest)) is not None:
        options[match.group(1)] = match.group(2)
        rest = rest[: match.start()]
    seat = parse_seat_spec(rest)
    limit = options.get("limit")
    if limit is not None and not limit.isdigit():
        raise SeatSpecError(f"seat {seat.name!r}: limit must be a number of tokens, not {limit!r}")
    return replace(seat, model=options.get("model", ""), output_limit=int(limit) if limit else None)


def seat_line(seat: Seat) -> str:
    """The form's line for ``seat``."""
    role = seat.role_text if seat.role == "custom" else seat.role
    line = f"{seat.name}={seat.engine}:{role}" + (":blind" if seat.blind else "")
    if seat.model:
        line += f" model={seat.model}"
    if seat.output_limit is not None:
        line += f" limit={seat.output_limit}"
    return line


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


Estimator = Callable[[RoundtableSetup], Sequence[tuple[str, int]]]
"""Round-1 input tokens per seat for a set-up (the controller counts with the real prompt)."""


class RoundtableSetupScreen(DialogScreen[RoundtableRequest | None]):
    """Set up a roundtable: returns a :class:`RoundtableRequest`, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # ctrl+s as in the other dialogs: enter writes a new line in the participants
        Binding("ctrl+s", "start", "Start", id="roundtable.start", priority=True),
        Binding("escape", "cancel", "Cancel", id="roundtable.cancel"),
    ]
    DEFAULT_CSS = """
    RoundtableSetupScreen > #dialog { width: 90%; max-width: 110; }
    RoundtableSetupScreen #rt-seats { height: 7; }
    RoundtableSetupScreen.-short #rt-seats { height: 1fr; min-height: 3; max-height: 7; }
    RoundtableSetupScreen .rt-row { height: auto; margin-top: 1; }
    RoundtableSetupScreen .rt-row > Label { width: auto; margin-right: 1; }
    RoundtableSetupScreen #rt-presets { margin-top: 0; }
    RoundtableSetupScreen #rt-mode { width: 18; margin-right: 3; }
    RoundtableSetupScreen #rt-rounds { width: 6; }
    RoundtableSetupScreen .rt-row Button { margin-right: 1; }
    RoundtableSetupScreen #rt-estimate { width: 1fr; height: auto; min-height: 2; margin-top: 1; color: $text-muted; }
    RoundtableSetupScreen #rt-error { display: none; }
    """

    def __init__(self, *, topic: str, seats: Sequence[Seat], presets: Sequence[tuple[str, Sequence[Seat]]],
                 estimate: Estimator, engines: Sequence[str], mode: str = "sequential", rounds: int = 2) -> None:
        super().__init__()
        self._topic = topic
        self._seats = tuple(seats)
        self._presets = tuple((name, tuple(line_up)) for name, line_up in presets)
        self._estimate = estimate
        self._engines = tuple(engines)
        self._mode = mode
        self._rounds = rounds
        self._opened: tuple[str, str, str, str] | None = None
        self.touched = False
        """True once the user changed a field or pressed Start: from then on what is wrong is shown."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = "Start roundtable"
            yield Label("Topic", classes="field-label")
            yield Input(self._topic, placeholder="What should the seats discuss?", id="rt-topic")
            yield Static("Participants, one per line: NAME=ENGINE[:ROLE][:blind] [model=M] [limit=N]. "
                         "Roles: proposer, critic, judge, synthesizer or your own words. "
                         f"Engines: {', '.join(self._engines)}.", id="rt-seats-hint", classes="field-label",
                         markup=False)
            yield TextArea("\n".join(seat_line(seat) for seat in self._seats), id="rt-seats")
            with Horizontal(id="rt-options", classes="rt-row"):
                yield Label("Mode", classes="field-label")
                yield Select([(mode, mode) for mode in MODES], value=self._mode, allow_blank=False,
                             id="rt-mode", compact=True)
                yield Label("Rounds", classes="field-label")
                yield Input(str(self._rounds), id="rt-rounds", placeholder="1-20", compact=True)
            if self._presets:
                with Horizontal(id="rt-presets", classes="rt-row"):
                    yield Label("Fill with", classes="field-label")
                    for index, (name, _seats) in enumerate(self._presets):
                        yield Button(name, id=f"rt-preset-{index}", compact=True)
            yield Static("", id="rt-estimate", markup=False)
            yield Static("", id="rt-error", classes="dialog-problem", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"Cancel ({self._key('roundtable.cancel')})", id="rt-cancel")
                yield Button(f"Start ({self._key('roundtable.start')})", variant="primary", id="rt-start")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#rt-topic", Input).focus()
        self._opened = self._fields()
        self._refresh_estimate()

    def read(self) -> RoundtableRequest:
        """The form as a request; SeatSpecError naming the first thing that is wrong."""
        topic = self.query_one("#rt-topic", Input).value.strip()
        lines = [line for line in self.query_one("#rt-seats", TextArea).text.splitlines() if line.strip()]
        seats = tuple(parse_seat_line(line) for line in lines)
        for seat in seats:
            if seat.engine not in self._engines:
                raise SeatSpecError(f"seat {seat.name!r}: unknown engine {seat.engine!r}")
        rounds_text = self.query_one("#rt-rounds", Input).value.strip()
        if not rounds_text.isdigit() or not 1 <= int(rounds_text) <= 20:
            raise SeatSpecError("rounds must be a whole number from 1 to 20")
        mode = str(self.query_one("#rt-mode", Select).value)
        return RoundtableRequest(RoundtableSetup(topic=topic, seats=seats, mode=mode), int(rounds_text))

    def _refresh_estimate(self) -> None:
        estimate = self.query_one("#rt-estimate", Static)
        try:
            request = self.read()
        except SeatSpecError as exc:
            self._show_problem(str(exc) if self.touched else "")
            estimate.update("" if self.touched else "The estimate shows here once the topic and the participants "
                            "are filled in.")
            return
        self._show_problem("")
        tokens = list(self._estimate(request.setup))
        blind = {seat.name for seat in request.setup.seats if seat.blind}
        total = sum(first + (request.rounds - 1) * (first + (0 if name in blind else LATER_ROUND_EXTRA_TOKENS))
                    for name, first in tokens)
        per_seat = ", ".join(f"{name} ~{first:,}" for name, first in tokens)
        calls = len(tokens) * request.rounds
        estimate.update(f"{_count(len(tokens), 'seat')} × {_count(request.rounds, 'round')} = "
                        f"{_count(calls, 'call')} · input tokens in round 1: {per_seat} · "
                        f"about {total:,} input tokens in all")

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Select.Changed)
    def _changed(self) -> None:
        # fields report their first values as changes while the form is built: only a value other
        # than the one the form opened with is the user's
        if self._opened is not None and self._fields() != self._opened:
            self.touched = True
        self._refresh_estimate()

    def _fields(self) -> tuple[str, str, str, str]:
        return (self.query_one("#rt-topic", Input).value, self.query_one("#rt-seats", TextArea).text,
                self.query_one("#rt-rounds", Input).value, str(self.query_one("#rt-mode", Select).value))

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self._start()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        button = event.button.id or ""
        if button == "rt-start":
            self._start()
        elif button == "rt-cancel":
            self.dismiss(None)
        elif button.startswith("rt-preset-"):
            _name, seats = self._presets[int(button.removeprefix("rt-preset-"))]
            self.query_one("#rt-seats", TextArea).text = "\n".join(seat_line(seat) for seat in seats)
            self._refresh_estimate()

    def _start(self) -> None:
        self.touched = True
        try:
            request = self.read()
        except SeatSpecError as exc:
            self._show_problem(str(exc))
            return
        self.dismiss(request)

    def _show_problem(self, text: str) -> None:
        problem = self.query_one("#rt-error", Static)
        problem.update(text)
        problem.display = bool(text)

    def _key(self, binding_id: str) -> str:
        return key_for(self.app, type(self), binding_id, words=True)

    def action_start(self) -> None:
        """Start the roundtable as set up, or name what is wrong."""
        self._start()

    def action_cancel(self) -> None:
        """Close the form; nothing starts."""
        self.dismiss(None)
