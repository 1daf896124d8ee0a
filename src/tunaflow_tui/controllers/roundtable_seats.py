"""The seats of the roundtable in the pane: add or remove one between rounds, cancel one, run one again.

Adding opens a small form (name, engine, role, blind); removing, cancelling and re-running pick a
seat from a list. A change the roundtable cannot take now (a round is running, the roundtable is
archived) is said in one line and nothing changes. A failed seat's error card retries by running
that seat again (:meth:`SeatControls.rerun_message`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from tunaflow_tui.core.roundtable.seats import SeatSpecError
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.runtime.roundtable import RoundtableError
from tunaflow_tui.runtime.roundtable_records import ANSWER_KIND

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.roundtable_live import RoundtableLive
    from tunaflow_tui.controllers.workers import Workers
    from tunaflow_tui.core.roundtable.seats import Seat
    from tunaflow_tui.core.storage.records import MessageRecord
    from tunaflow_tui.runtime.roundtable_records import RoundResult
    from tunaflow_tui.runtime.runtime import WorkflowRuntime


class Rounds(Protocol):
    """What the seat controls use of the roundtable controller."""

    def live_or_say(self) -> RoundtableLive | None:
        """The roundtable in the pane; otherwise the user is told to open one."""
        ...

    def live_for(self, branch_id: int) -> RoundtableLive | None:
        """The window's keeper of roundtable ``branch_id``; None if it is none."""
        ...

    async def run_rounds(self, live: RoundtableLive, rounds: int) -> list[RoundResult]:
        """Run ``rounds`` rounds of ``live``'s roundtable."""
        ...


class SeatControls:
    """Adds, removes, cancels and re-runs seats of the roundtable in the pane.

    Args:
        app: The app.
        runtime: The project's runtime (its engines are the seats' choices).
        workers: Where a re-run seat runs (as agent work).
        rounds: The roundtable controller: the roundtable in the pane, and its rounds.
    """

    def __init__(self, app: AppPort, runtime: WorkflowRuntime, workers: Workers, rounds: Rounds) -> None:
        self._app = app
        self._runtime = runtime
        self._workers = workers
        self._rounds = rounds

    def _between_rounds(self, live: RoundtableLive, what: str) -> bool:
        try:
            if live.busy:
                raise RoundtableError(f"a round is running; {what} between rounds")
            live.table.ensure_between_rounds(what)
        except RoundtableError as error:
            self._app.notify(f"{neutralize(str(error)).capitalize()}.", severity="warning")
            return False
        return True

    def _pick_seat(self, live: RoundtableLive, title: str, running_only: bool, then: Callable[[str], None]) -> None:
        from tunaflow_tui.screens.pickers import PickerScreen

        table = live.table
        seats = [s for s in table.setup.seats if table.seat_running(s.name) or not running_only]
        if not seats:
            self._app.notify("No seat is answering now.", severity="warning")
            return
        choices = [(s.name, f"{s.name} · {s.engine} · {s.role_label}" + (" · blind" if s.blind else ""))
                   for s in seats]

        def picked(name: str | None) -> None:
            if name:
                then(name)

        self._app.push_screen(PickerScreen(title, "Pick a seat (enter), escape to leave it.", choices), picked)

    def add_seat(self) -> None:
        """Add a seat to the roundtable in the pane (between rounds): a form asks for it."""
        from tunaflow_tui.screens.roundtable_seat import AddSeatScreen

        live = self._rounds.live_or_say()
        if live is None or not self._between_rounds(live, "add seats"):
            return

        def added(seat: Seat | None) -> None:
            if seat is None:
                return
            try:
                live.table.add_seat(seat)
            except (RoundtableError, SeatSpecError) as error:
                self._app.notify(f"Not added: {neutralize(str(error))}", severity="warning", timeout=8)
                return
            live.redraw()
            self._app.notify(f"{seat.name} joins the roundtable; it speaks from the next round.")

        self._app.push_screen(AddSeatScreen(seats=live.table.setup.seats,
                                            engines=sorted(self._runtime.settings.engines)), added)

    def remove_seat(self) -> None:
        """Remove a seat from the roundtable in the pane (between rounds); its answers stay."""
        live = self._rounds.live_or_say()
        if live is None or not self._between_rounds(live, "remove seats"):
            return

        def remove(name: str) -> None:
            try:
                live.table.remove_seat(name)
            except (RoundtableError, SeatSpecError) as error:
                self._app.notify(f"Not removed: {neutralize(str(error))}", severity="warning", timeout=8)
                return
            live.redraw()
            self._app.notify(f"{name} left the roundtable; its answers stay.")

        self._pick_seat(live, "Remove seat", False, remove)

    def cancel_seat(self) -> None:
        """Cancel one answering seat of the roundtable shown; the others go on."""
        live = self._rounds.live_or_say()
        if live is not None:
            self._pick_seat(live, "Cancel seat", True, lambda name: self._cancelled(live, name))

    def _cancelled(self, live: RoundtableLive, name: str) -> None:
        if not live.table.cancel_seat(name):
            self._app.notify(f"{name} is not answering now.", severity="warning")

    def rerun_seat(self) -> None:
        """Run one seat's latest turn again; its new answer replaces only that one."""
        live = self._rounds.live_or_say()
        if live is None or not self._between_rounds(live, "re-run a seat"):
            return
        self._pick_seat(live, "Re-run seat", False, lambda name: self._rerun(live, name, None))

    def _rerun(self, live: RoundtableLive, name: str, round_number: int | None) -> None:
        async def again() -> None:
            try:
                await live.table.rerun_seat(name, round_number)
            except (RoundtableError, SeatSpecError) as error:
                self._app.notify(f"Not re-run: {neutralize(str(error))}", severity="warning", timeout=8)
            live.redraw()
            if live.held and not live.busy:  # the moderator wrote meanwhile: the seats answer it
                live.flush_held()
                await self._rounds.run_rounds(live, 1)

        self._workers.run_agent(again(), f"run {name} again")

    def rerun_message(self, message: MessageRecord) -> bool:
        """The retry key on a seat's failed answer: run that seat again for that round; False if it is no seat's."""
        if message.meta.get("kind") != ANSWER_KIND or not message.conversation_id.startswith("branch:"):
            return False
        live = self._rounds.live_for(int(message.conversation_id.removeprefix("branch:")))
        if live is None:
            return False
        if self._between_rounds(live, "re-run a seat"):
            number = message.meta.get("round")
            self._rerun(live, str(message.meta.get("seat", "")), number if isinstance(number, int) else None)
        return True
