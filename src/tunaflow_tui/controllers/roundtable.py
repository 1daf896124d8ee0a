"""Starting a roundtable from the app: the set-up form, then the rounds in a worker, shown in the branch pane.

"Start roundtable" (command palette) opens the form with the topic taken from the message that has
the focus, if any, and the last line-up used in this project (else one seat per vendor CLI found
on this machine). On confirm the roundtable branch is convened, opened in the branch pane, and its
rounds run as agent work: the seats' answers stream into the pane like any reply.
"""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

from tunaflow_tui.core.roundtable.brief import plain_text
from tunaflow_tui.core.roundtable.prompts import PromptParts, build_seat_prompt
from tunaflow_tui.core.roundtable.seats import CRITIC, JUDGE, PROPOSER, SYNTHESIZER, RoundtableSetup, Seat
from tunaflow_tui.runtime.roundtable import Roundtable
from tunaflow_tui.runtime.roundtable_context import runtime_minimal_context
from tunaflow_tui.runtime.roundtable_records import SETUP_MEMO_KIND
from tunaflow_tui.runtime.tokens import default_counter
from tunaflow_tui.screens.roundtable_setup import RoundtableRequest, RoundtableSetupScreen

if TYPE_CHECKING:
    from tunaflow_tui.controllers.session import ProjectSession
    from tunaflow_tui.core.settings import EngineConfig
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
    from tunaflow_tui.controllers.roundtable_board import RoundtableLive

    table = Roundtable.convene(session.runtime, request.setup)
    await session.panes.refresh_sidebar()
    await session.panes.open_branch(table.branch.id)
    live = RoundtableLive(session, table)
    await live.attach()
    live.running = True
    live.redraw()
    try:
        results = await table.run(request.rounds)
    finally:
        live.running = False
        live.redraw()
    await session.panes.refresh_sidebar()
    failed = sorted({answer.seat for result in results for answer in result.failed})
    note = f"; {', '.join(failed)} failed" if failed else ""
    session.app.notify(f"Roundtable {table.branch.id}: {len(results)} rounds done{note}. Its brief is ready to adopt.",
                       severity="warning" if failed else "information")
    return table
