"""Starting a roundtable from the app: the set-up form, then the rounds in a worker, shown in the branch pane.

"Start roundtable" (command palette) opens the form with the topic taken from the message that has
the focus, if any, and the last line-up used in this project (else one seat per vendor CLI found
on this machine). On confirm the roundtable branch is convened, opened in the branch pane, and its
rounds run as agent work: the seats' answers stream into the pane like any reply. What the user
writes in the roundtable's composer is the moderator's word (:func:`moderate`); the pane's keys and
the palette run the next round or stop it (seats: :mod:`.roundtable_seats`).
"""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

from tunaflow_tui.core.roundtable.brief import plain_text
from tunaflow_tui.core.roundtable.prompts import PromptParts, build_seat_prompt
from tunaflow_tui.core.roundtable.seats import CRITIC, JUDGE, PROPOSER, SYNTHESIZER, RoundtableSetup, Seat
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.runtime.roundtable import Roundtable, RoundtableError
from tunaflow_tui.runtime.roundtable_context import runtime_minimal_context
from tunaflow_tui.runtime.roundtable_records import SETUP_MEMO_KIND
from tunaflow_tui.runtime.tokens import default_counter
from tunaflow_tui.screens.roundtable_setup import RoundtableRequest, RoundtableSetupScreen

if TYPE_CHECKING:
    from tunaflow_tui.controllers.roundtable_board import RoundtableLive
    from tunaflow_tui.controllers.session import ProjectSession
    from tunaflow_tui.core.settings import EngineConfig
    from tunaflow_tui.runtime.roundtable_records import RoundResult
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

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


def _focused_topic(session: ProjectSession) -> str:
    chat = session.panes.chat_for(session.conversation_in_focus())
    message_id = chat.focused_message_id if chat is not None else None
    message = session.store.get_message(message_id) if message_id is not None else None
    return plain_text(message.display_text)[:TOPIC_CHARS] if message is not None else ""


def start_roundtable(session: ProjectSession) -> None:
    """Open the set-up form; on confirm, convene the roundtable and run its rounds."""
    runtime = session.runtime
    last, vendors = last_line_up(runtime), vendor_line_up(runtime)
    presets = [(f"Last line-up ({len(last)})", last)] if last else []
    presets.append((f"One seat per vendor ({len(vendors)})", vendors))
    screen = RoundtableSetupScreen(topic=_focused_topic(session), seats=last or vendors, presets=presets,
                                   estimate=lambda setup: round_one_tokens(runtime, setup),
                                   engines=sorted(runtime.settings.engines))

    def confirmed(request: RoundtableRequest | None) -> None:
        if request is not None:
            session.workers.run_agent(run_roundtable(session, request), "run the roundtable")

    session.app.push_screen(screen, confirmed)


async def run_roundtable(session: ProjectSession, request: RoundtableRequest) -> Roundtable:
    """Convene the roundtable, show it in the branch pane and run its rounds; say how it went."""
    from tunaflow_tui.controllers.roundtable_board import adopt

    table = Roundtable.convene(session.runtime, request.setup)
    live = adopt(session.app, table)
    await session.panes.refresh_sidebar()
    await session.panes.open_branch(table.branch.id, focus=True)  # the user moderates it from here
    workspace = session.app.workspace
    if workspace.narrow and workspace.mode == "drawer":  # a narrow drawer cannot hold the seats: full width
        workspace.mode = "pinned"
    results = await run_rounds(session, live, request.rounds)
    await session.panes.refresh_sidebar()
    failed = sorted({answer.seat for result in results for answer in result.failed})
    note = f"; {', '.join(failed)} failed" if failed else ""
    session.app.notify(f"Roundtable {table.branch.id}: {len(results)} rounds done{note}. Its brief is ready to adopt.",
                       severity="warning" if failed else "information")
    return table


async def run_rounds(session: ProjectSession, live: RoundtableLive, rounds: int) -> list[RoundResult]:
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


def shown_live(session: ProjectSession) -> RoundtableLive | None:
    """The roundtable the pane shows, if it shows one."""
    from tunaflow_tui.controllers.roundtable_board import live_for

    cid = session.panes.branch_conversation
    if cid is None or not cid.startswith("branch:"):
        return None
    return live_for(session.app, session.runtime, int(cid.removeprefix("branch:")))


def live_or_say(session: ProjectSession) -> RoundtableLive | None:
    """The roundtable in the pane; otherwise the user is told to open one."""
    live = shown_live(session)
    if live is None:
        session.app.notify("Open a roundtable in the branch pane first (the sidebar lists them under Roundtables).",
                           severity="warning")
    return live


def is_roundtable(session: ProjectSession, conversation_id: str) -> bool:
    """Whether ``conversation_id`` is a roundtable the user convened (its composer talks to the seats)."""
    branch_id = conversation_id.removeprefix("branch:")
    if not conversation_id.startswith("branch:") or not branch_id.isdigit():
        return False
    branch = session.store.get_branch(int(branch_id))
    return branch is not None and branch.mode == "roundtable" and branch.kind == "general"


def moderate(session: ProjectSession, conversation_id: str, text: str) -> None:
    """The moderator wrote to the seats: between rounds it is stored and the next round starts at once;
    while a round runs it is held (the board shows it) and goes with the next round."""
    from tunaflow_tui.controllers.roundtable_board import live_for

    live = live_for(session.app, session.runtime, int(conversation_id.removeprefix("branch:")))
    if live is None:
        session.app.notify("This roundtable cannot be opened: its set-up is missing.", severity="error")
        return
    text = text.strip()
    if not text:
        return
    if live.busy:
        live.held.append(text)
        live.redraw()
        session.app.notify("A round is running: your message is held and goes to every seat as soon as it ends.")
        return
    try:
        live.table.add_user_message(text)
    except RoundtableError as error:
        session.app.notify(f"Not sent: {neutralize(str(error))}", severity="warning", timeout=8)
        return
    session.workers.run_agent(run_rounds(session, live, 1), "run the next round")


def next_round(session: ProjectSession) -> None:
    """Run one more round of the roundtable shown (the user's messages since are seen by every seat)."""
    live = live_or_say(session)
    if live is None:
        return
    if live.busy:
        session.app.notify("A round is running: wait for it, or stop it.", severity="warning")
        return
    try:
        live.table.ensure_between_rounds("run a round")
    except RoundtableError as error:
        session.app.notify(neutralize(str(error)), severity="warning")
        return
    session.workers.run_agent(run_rounds(session, live, 1), "run the next round")


def stop(session: ProjectSession) -> None:
    """Stop the roundtable shown: its running seats are cancelled, no further seat starts."""
    live = live_or_say(session)
    if live is None:
        return
    if not live.busy:
        session.app.notify("No round is running.")
        return
    stopped = live.table.stop()
    session.app.notify(f"Roundtable stopped ({stopped} seats cancelled)." if stopped else "Roundtable stopped.")


def rank(session: ProjectSession) -> None:
    """The anonymous peer-ranking round of the roundtable shown; its table joins the brief."""
    live = live_or_say(session)
    if live is None:
        return
    try:
        if live.busy:
            raise RoundtableError("a round is running; rank the answers between rounds")
        live.table.ensure_between_rounds("rank the answers")
    except RoundtableError as error:
        session.app.notify(f"{neutralize(str(error)).capitalize()}.", severity="warning")
        return

    async def ranking() -> None:
        live.running = True
        live.redraw()
        try:
            result = await live.table.rank()
        except RoundtableError as error:
            session.app.notify(f"Not ranked: {neutralize(str(error))}", severity="warning", timeout=8)
            return
        finally:
            live.flush_held()
            live.running = False
            live.redraw()
        left = f"; {len(result.left_out)} left out (see the brief)" if result.left_out else ""
        session.app.notify(f"Peer ranking done{left}.", severity="warning" if result.left_out else "information")

    session.workers.run_agent(ranking(), "rank the answers")


def requested(session: ProjectSession, conversation_id: str, action: str) -> None:
    """A key of the roundtable's thread: add_seat, remove_seat, next_round or stop."""
    from tunaflow_tui.controllers import roundtable_seats

    if session.panes.branch_conversation != conversation_id:
        return
    actions = {"add_seat": roundtable_seats.add_seat, "remove_seat": roundtable_seats.remove_seat,
               "next_round": next_round, "stop": stop}
    act = actions.get(action)
    if act is not None:
        act(session)
