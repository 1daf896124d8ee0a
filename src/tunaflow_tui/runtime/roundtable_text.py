"""How a seat is addressed, how its answer reads to the other seats, and the error a roundtable control raises."""

from __future__ import annotations

from tunaflow_tui.core.markers import scrub_markers
from tunaflow_tui.core.roundtable.seats import Seat
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.runtime.branching import BranchError


class RoundtableError(BranchError):
    """A roundtable control that cannot be done now; the message says why."""


def system_text(seat: Seat) -> str:
    """The short system prompt of a seat (its identity; the guidance is in the prompt itself)."""
    return (f"Role: {seat.persona}\nSeat: {seat.name}\n"
            "You are one participant of a roundtable discussion. Do not edit files.")


def plain_text_keep_lines(text: str) -> str:
    """An answer as another seat reads it: markers scrubbed, control sequences removed, lines kept."""
    return scrub_markers(neutralize(text)).strip()
