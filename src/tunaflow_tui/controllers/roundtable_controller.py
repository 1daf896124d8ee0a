"""RoundtableController: roundtables in the app — set up, run in rounds, moderated, shown in the branch pane.

"Start roundtable" (command palette) opens the form with the topic taken from the message that has
the focus, if any, and the last line-up used in this project (else one seat per vendor CLI found
on this machine). On confirm the roundtable branch is convened, opened in the branch pane, and its
rounds run as agent work: the seats' answers stream into the pane like any reply. What the user
writes in the roundtable's composer is the moderator's word (:meth:`RoundtableController.moderate`);
the pane's keys and the palette run the next round or stop it (seats:
:class:`~tunaflow_tui.controllers.roundtable_seats.SeatControls`). The controller keeps one
:class:`~tunaflow_tui.controllers.roundtable_live.RoundtableLive` per roundtable the window shows.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from typing import TYPE_CHECKING

from tunaflow_tui.controllers.roundtable_live import RoundtableLive
from tunaflow_tui.controllers.roundtable_seats import SeatControls
from tunaflow_tui.core.roundtable.brief import plain_text
from tunaflow_tui.core.roundtable.seat_prompts import PromptParts, build_seat_prompt
from tunaflow_tui.core.roundtable.seats import CRITIC, JUDGE, PROPOSER, SYNTHESIZER, RoundtableSetup, Seat
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.runtime.roundtable import Roundtable, RoundtableError
from tunaflow_tui.runtime.roundtable_context import runtime_minimal_context
from tunaflow_tui.runtime.roundtable_records import SETUP_MEMO_KIND
from tunaflow_tui.runtime.tokens import default_counter
from tunaflow_tui.screens.roundtable_setup import RoundtableRequest, RoundtableSetupScreen
from tunaflow_tui.widgets.roundtable.roundtable_thread import RoundtableThread

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.panes import PaneController
    from tunaflow_tui.controllers.workers import Workers
    from tunaflow_tui.core.settings import EngineConfig
    from tunaflow_tui.runtime.roundtable_records import RoundResult
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.widgets.chat_view import ChatView

TOPIC_CHARS = 600
_VENDOR_ROLES = (PROPOSER, CRITIC, JUDGE)


def last_line_up(runtime: WorkflowRuntime) -> tuple[Seat, ...]:
    """The seats of the project's most recent roundtable (none before the first)."""
    memos = runtime.store.list_memos(kind=SETUP_MEMO_KIND)
    if not memos:
        return ()
    try:
        setup = RoundtableSetup.from_json(json.loads(memos[-1].content))
    except (ValueError, KeyError, TypeError):
        return ()
    return tuple(seat for seat in setup.seats if seat.engine in runtime.settings.engines)


def vendor_line_up(runtime: WorkflowRuntime) -> tuple[Seat, ...]:
    """One seat per vendor CLI found on this machine (as doctor finds them), then a synthesizer; demo without any."""
    found: list[tuple[str, EngineConfig]] = []
    for name, config in runtime.settings.engines.items():
        kind = config.effective_type
        if kind in ("claude", "codex", "gemini") and shutil.which(config.command or kind) \
                and kind not in {c.effective_type for _n, c in found}:
            found.append((name, config))
    if not found:
        return (Seat("demo", "demo", PROPOSER),)
    seats = [Seat(name, name, _VENDOR_ROLES[i % len(_VENDOR_ROLES)]) for i, (name, _config) in enumerate(found)]
    seats.append(Seat("synthesis", found[0][0], SYNTHESIZER))
    return tuple(seats)


def round_one_tokens(runtime: WorkflowRuntime, setup: RoundtableSetup) -> list[tuple[str, int]]:
    """Input tokens each seat would be sent in round 1 (its real prompt, counted)."""
    parts = PromptParts(topic=setup.topic, round=1, participants=tuple(s.name for s in setup.seats),
                        project_context=runtime_minimal_context(runtime))
    counter = default_counter()
    return [(seat.name, counter.count(build_seat_prompt(seat, parts))) for seat in setup.seats]


class RoundtableController:
    """Sets roundtables up, runs their rounds, passes the moderator's words, and keeps their boards in step.

    Args:
        app: The app.
        runtime: The project's runtime (the roundtables' store and engines).
        panes: The branch pane, which shows a roundtable as a branch.
        workers: Where the rounds run (as agent work).
        conversation_in_focus: The conversation the user is in (its focused message is the topic).
    """

    def __init__(self, app: AppPort, runtime: WorkflowRuntime, panes: PaneController, workers: Workers,
                 conversation_in_focus: Callable[[], str]) -> None:
        self._app = app
        self._runtime = runtime
        self._panes = panes
        self._workers = workers
        self._conversation_in_focus = conversation_in_focus
        self._lives: dict[int, RoundtableLive] = {}
        """The roundtables this window has shown, by branch id."""
        self.seats = SeatControls(app, runtime, workers, self)
        """Adding, removing, cancelling and re-running seats of the roundtable in the pane."""

    # ------------------------------------------------------------------ the roundtables shown
    def live_for(self, branch_id: int) -> RoundtableLive | None:
        """The window's keeper of roundtable ``branch_id`` (opened from the store the first time); None if it is none."""
        live = self._lives.get(branch_id)
        if live is None:
            try:
                table = Roundtable.open(self._runtime, branch_id)
            except (RoundtableError, ValueError, KeyError, TypeError):
                return None
            live = self._lives[branch_id] = RoundtableLive(self._app, table)
        return live

    def thread(self, branch_id: int, chat: ChatView, recipient: str, *, read_only: str, restorable: bool,
               cursor_blink: bool) -> RoundtableThread | None:
        """The pane's thread of roundtable ``branch_id``: its board, answers and composer (None: not a roundtable)."""
        live = self.live_for(branch_id)
        if live is None:
            return None
        return RoundtableThread(live.conversation_id, chat, live.state(), recipient, read_only=read_only,
                                restorable=restorable, cursor_blink=cursor_blink)

    def shown_live(self) -> RoundtableLive | None:
        """The roundtable the pane shows, if it shows one."""
        cid = self._panes.branch_conversation
        if cid is None or not cid.startswith("branch:"):
            return None
        return self.live_for(int(cid.removeprefix("branch:")))

    def live_or_say(self) -> RoundtableLive | None:
        """The roundtable in the pane; otherwise the user is told to open one."""
        live = self.shown_live()
        if live is None:
            self._app.notify("Open a roundtable in the branch pane first (the sidebar lists them under Roundtables).",
                             severity="warning")
        return live

    def is_roundtable(self, conversation_id: str) -> bool:
        """Whether ``conversation_id`` is a roundtable the user convened (its composer talks to the seats)."""
        branch_id = conversation_id.removeprefix("branch:")
        if not conversation_id.startswith("branch:") or not branch_id.isdigit():
            return False
        branch = self._runtime.store.get_branch(int(branch_id))
        return branch is not None and branch.mode == "roundtable" and branch.kind == "general"

    # ------------------------------------------------------------------ starting one
    def _focused_topic(self) -> str:
        chat = self._panes.chat_for(self._conversation_in_focus())
        message_id = chat.focused_message_id if chat is not None else None
        message = self._runtime.store.get_message(message_id) if message_id is not None else None
        return plain_text(message.display_text)[:TOPIC_CHARS] if message is not None else ""

    def start(self) -> None:
        """Open the set-up form; on confirm, convene the roundtable and run its rounds."""
        runtime = self._runtime
        last, vendors = last_line_up(runtime), vendor_line_up(runtime)
        presets = [(f"Last line-up ({len(last)})", last)] if last else []
        presets.append((f"One seat per vendor ({len(vendors)})", vendors))
        screen = RoundtableSetupScreen(topic=self._focused_topic(), seats=last or vendors, presets=presets,
                                       estimate=lambda setup: round_one_tokens(runtime, setup),
                                       engines=sorted(runtime.settings.engines))

        def confirmed(request: RoundtableRequest | None) -> None:
            if request is not None:
                self._workers.run_agent(self.run(request), "run the roundtable")

        self._app.push_screen(screen, confirmed)

    async def run(self, request: RoundtableRequest) -> Roundtable:
        """Convene the roundtable, show it in the branch pane and run its rounds; say how it went."""
        table = Roundtable.convene(self._runtime, request.setup)
        live = self._lives[table.branch.id] = RoundtableLive(self._app, table)
        await self._panes.refresh_sidebar()
        await self._panes.open_branch(table.branch.id, focus=True)  # the user moderates it from here
        workspace = self._app.workspace
        if workspace.narrow and workspace.mode == "drawer":  # a narrow drawer cannot hold the seats: full width
            workspace.mode = "pinned"
        results = await self.run_rounds(live, request.rounds)
        await self._panes.refresh_sidebar()
        failed = sorted({answer.seat for result in results for answer in result.failed})
        note = f"; {', '.join(failed)} failed" if failed else ""
        self._app.notify(f"Roundtable {table.branch.id}: {len(results)} rounds done{note}. Its brief is ready to adopt.",
                         severity="warning" if failed else "information")
        return table

    async def run_rounds(self, live: RoundtableLive, rounds: int) -> list[RoundResult]:
        """Run ``rounds`` rounds; what the moderator wrote meanwhile goes in between, and is answered.

        A message held during the last planned round adds one more round (the seats answer it, as a
        reply follows a message in a chat); a stopped round ends the run, its held messages stored.
        """
        table = live.table
        results: list[RoundResult] = []
        live.running = True
        live.redraw()
        try:
            planned = rounds
            while planned > 0:
                planned -= 1
                result = await table.run_round(prefetch=planned > 0)
                results.append(result)
                if result.stopped:
                    break
                if live.flush_held():
                    planned = max(planned, 1)
        finally:
            live.flush_held()  # stopped, failed or the window closing: the moderator's words are kept
            live.running = False
            live.redraw()
        return results

    # ------------------------------------------------------------------ the moderator's keys
    def moderate(self, conversation_id: str, text: str) -> None:
        """The moderator wrote to the seats: between rounds it is stored and the next round starts at once;
        while a round runs it is held (the board shows it) and goes with the next round."""
        live = self.live_for(int(conversation_id.removeprefix("branch:")))
        if live is None:
            self._app.notify("This roundtable cannot be opened: its set-up is missing.", severity="error")
            return
        text = text.strip()
        if not text:
            return
        if live.busy:
            live.held.append(text)
            live.redraw()
            self._app.notify("A round is running: your message is held and goes to every seat as soon as it ends.")
            return
        try:
            live.table.add_user_message(text)
        except RoundtableError as error:
            self._app.notify(f"Not sent: {neutralize(str(error))}", severity="warning", timeout=8)
            return
        self._workers.run_agent(self.run_rounds(live, 1), "run the next round")

    def next_round(self) -> None:
        """Run one more round of the roundtable shown (the user's messages since are seen by every seat)."""
        live = self.live_or_say()
        if live is None:
            return
        if live.busy:
            self._app.notify("A round is running: wait for it, or stop it.", severity="warning")
            return
        try:
            live.table.ensure_between_rounds("run a round")
        except RoundtableError as error:
            self._app.notify(neutralize(str(error)), severity="warning")
            return
        self._workers.run_agent(self.run_rounds(live, 1), "run the next round")

    def stop(self) -> None:
        """Stop the roundtable shown: its running seats are cancelled, no further seat starts."""
        live = self.live_or_say()
        if live is None:
            return
        if not live.busy:
            self._app.notify("No round is running.")
            return
        stopped = live.table.stop()
        self._app.notify(f"Roundtable stopped ({stopped} seats cancelled)." if stopped else "Roundtable stopped.")

    def rank(self) -> None:
        """The anonymous peer-ranking round of the roundtable shown; its table joins the brief."""
        live = self.live_or_say()
        if live is None:
            return
        try:
            if live.busy:
                raise RoundtableError("a round is running; rank the answers between rounds")
            live.table.ensure_between_rounds("rank the answers")
        except RoundtableError as error:
            self._app.notify(f"{neutralize(str(error)).capitalize()}.", severity="warning")
            return

        async def ranking() -> None:
            live.running = True
            live.redraw()
            try:
                result = await live.table.rank()
            except RoundtableError as error:
                self._app.notify(f"Not ranked: {neutralize(str(error))}", severity="warning", timeout=8)
                return
            finally:
                live.flush_held()
                live.running = False
                live.redraw()
            left = f"; {len(result.left_out)} left out (see the brief)" if result.left_out else ""
            self._app.notify(f"Peer ranking done{left}.", severity="warning" if result.left_out else "information")

        self._workers.run_agent(ranking(), "rank the answers")

    def requested(self, conversation_id: str, action: str) -> None:
        """A key of the roundtable's thread: add_seat, remove_seat, next_round or stop."""
        if self._panes.branch_conversation != conversation_id:
            return
        actions = {"add_seat": self.seats.add_seat, "remove_seat": self.seats.remove_seat,
                   "next_round": self.next_round, "stop": self.stop}
        act = actions.get(action)
        if act is not None:
            act()
