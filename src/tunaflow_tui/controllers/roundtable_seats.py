"""The seats of the roundtable in the pane: add or remove one between rounds, cancel one, run one again.

Adding opens a small form (name, engine, role, blind); removing, cancelling and re-running pick a
seat from a list. A change the roundtable cannot take now (a round is running, the roundtable is
archived) is said in one line and nothing changes. A failed seat's error card retries by running
that seat again (:func:`rerun_message`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tunaflow_tui.controllers.roundtable import live_or_say, run_rounds
from tunaflow_tui.core.roundtable.seats import SeatSpecError
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.runtime.roundtable import RoundtableError
from tunaflow_tui.runtime.roundtable_records import ANSWER_KIND

if TYPE_CHECKING:
    from tunaflow_tui.controllers.roundtable_board import RoundtableLive
    from tunaflow_tui.controllers.session import ProjectSession
    from tunaflow_tui.core.roundtable.seats import Seat
    from tunaflow_tui.core.storage.records import MessageRecord


def _between_rounds(session: ProjectSession, live: RoundtableLive, what: str) -> bool:
    try:
        if live.busy:
            raise RoundtableError(f"a round is running; {what} between rounds")
        live.table.ensure_between_rounds(what)
    except RoundtableError as error:
        session.app.notify(f"{neutralize(str(error)).capitalize()}.", severity="warning")
        return False
    return True


def _pick_seat(session: ProjectSession, live: RoundtableLive, title: str, running_only: bool,
               then: Callable[[str], None]) -> None:
    from tunaflow_tui.screens.pickers import PickerScreen

    table = live.table
    seats = [s for s in table.setup.seats if table.seat_running(s.name) or not running_only]
    if not seats:
        session.app.notify("No seat is answering now.", severity="warning")
        return
    choices = [(s.name, f"{s.name} · {s.engine} · {s.role_label}" + (" · blind" if s.blind else "")) for s in seats]

    def picked(name: str | None) -> None:
        if name:
            then(name)

    session.app.push_screen(PickerScreen(title, "Pick a seat (enter), escape to leave it.", choices), picked)


def add_seat(session: ProjectSession) -> None:
    """Add a seat to the roundtable in the pane (between rounds): a form asks for it."""
    from tunaflow_tui.screens.roundtable_seat import AddSeatScreen

    live = live_or_say(session)
    if live is None or not _between_rounds(session, live, "add seats"):
        return

    def added(seat: Seat | None) -> None:
        if seat is None:
            return
        try:
            live.table.add_seat(seat)
        except (RoundtableError, SeatSpecError) as error:
            session.app.notify(f"Not added: {neutralize(str(error))}", severity="warning", timeout=8)
            return
        live.redraw()
        session.app.notify(f"{seat.name} joins the roundtable; it speaks from the next round.")

    session.app.push_screen(AddSeatScreen(seats=live.table.setup.seats,
                                          engines=sorted(session.runtime.settings.engines)), added)


def remove_seat(session: ProjectSession) -> None:
    """Remove a seat from the roundtable in the pane (between rounds); its answers stay."""
    live = live_or_say(session)
    if live is None or not _between_rounds(session, live, "remove seats"):
        return

    def remove(name: str) -> None:
        try:
            live.table.remove_seat(name)
        except (RoundtableError, SeatSpecError) as error:
            session.app.notify(f"Not removed: {neutralize(str(error))}", severity="warning", timeout=8)
            return
        live.redraw()
        session.app.notify(f"{name} left the roundtable; its answers stay.")

    _pick_seat(session, live, "Remove seat", False, remove)


def cancel_seat(session: ProjectSession) -> None:
    """Cancel one answering seat of the roundtable shown; the others go on."""
    live = live_or_say(session)
    if live is not None:
        _pick_seat(session, live, "Cancel seat", True, lambda name: _cancelled(session, live, name))


def _cancelled(session: ProjectSession, live: RoundtableLive, name: str) -> None:
    if not live.table.cancel_seat(name):
        session.app.notify(f"{name} is not answering now.", severity="warning")


def rerun_seat(session: ProjectSession) -> None:
    """Run one seat's latest turn again; its new answer replaces only that one."""
    live = live_or_say(session)
    if live is None or not _between_rounds(session, live, "re-run a seat"):
        return
    _pick_seat(session, live, "Re-run seat", False, lambda name: _rerun(session, live, name, None))


def _rerun(session: ProjectSession, live: RoundtableLive, name: str, round_number: int | None) -> None:
    async def again() -> None:
        try:
            await live.table.rerun_seat(name, round_number)
        except (RoundtableError, SeatSpecError) as error:
            session.app.notify(f"Not re-run: {neutralize(str(error))}", severity="warning", timeout=8)
        live.redraw()
        if live.held and not live.busy:  # the moderator wrote meanwhile: the seats answer it
            live.flush_held()
            await run_rounds(session, live, 1)

    session.workers.run_agent(again(), f"run {name} again")


def rerun_message(session: ProjectSession, message: MessageRecord) -> bool:
    """The retry key on a seat's failed answer: run that seat again for that round; False if it is no seat's."""
    from tunaflow_tui.controllers.roundtable_board import live_for

    if message.meta.get("kind") != ANSWER_KIND or not message.conversation_id.startswith("branch:"):
        return False
    live = live_for(session.app, session.runtime, int(message.conversation_id.removeprefix("branch:")))
    if live is None:
        return False
    if _between_rounds(session, live, "re-run a seat"):
        number = message.meta.get("round")
        _rerun(session, live, str(message.meta.get("seat", "")), number if isinstance(number, int) else None)
    return True
