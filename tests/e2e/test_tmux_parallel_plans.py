"""Two plans at once in a real terminal (tmux, 120×40): plan 1 approved, the user asks the Architect for
another plan while plan 1's Developer is still writing, approves plan 2, whose Developer starts at once;
both verdicts wait in one queue, and f2 walks it — each key lands on the plan its card names.

The app runs with stand-in Developers that write steadily for a while before doing the demo's work
(``tests/support/steady_developers.py``); every other role is the demo engine.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from waiting import until_sync

from tunaflow_tui.core.storage import Store
from tunaflow_tui.widgets.decision.arming import ARMING_SECONDS

pytestmark = pytest.mark.e2e

LAUNCHER = Path(__file__).parents[1] / "support" / "steady_developers.py"
VERDICT_KEYS = r"a w d( t)?( h)? Decide"
DEVELOPER_SECONDS = 25.0
"""How long each stand-in Developer writes before its real work: long enough for the user to ask for a
second plan and approve it while the first one still writes."""


def _phases(project: Path) -> dict[int, str]:
    with Store.open(project) as store:
        return {plan.id: plan.phase for plan in store.list_plans()}


def _on_card(session: Any, plan_id: int, keys: str) -> None:
    """f2 until plan ``plan_id``'s card has the keys (the footer names it), then wait for them to arm.

    No f2 when the card has them already (it took the focus as it arrived): f2 would walk on to the next
    plan while the screen still showed this one, and the key meant for it would land there.
    """
    def named(screen: str) -> bool:
        return re.search(rf"Plan {plan_id} · {keys}", screen.splitlines()[-1]) is not None

    if not named(session.screen()):
        session.press_until("F2", named, tries=4)
    time.sleep(ARMING_SECONDS)


def test_two_plans_develop_at_once_and_f2_walks_their_verdicts(
        tmux: Callable[[int, int], Any], tmp_path: Path, quit_demo: Callable[[Any], None]) -> None:
    session = tmux(120, 40)
    session.start([sys.executable, str(LAUNCHER), str(tmp_path), "--seconds", str(DEVELOPER_SECONDS),
                   "--rate", "20"], tmp_path)
    session.wait_for(lambda s: "Message…" in s and "f1 Help" in s)
    project = tmp_path / "textstats"

    session.send_text("add a word frequency report")
    session.press("Enter")
    session.wait_for(lambda s: "Plan 1 proposal" in s and "a approve" in s)
    _on_card(session, 1, r"a r h e Decide")
    session.press("a")
    until_sync(lambda: _phases(project).get(1) == "dev", "plan 1's Developer at work")
    started = time.monotonic()

    # back to the composer (its keys in the footer before typing): the user goes on talking to the Architect
    session.press_until("i", lambda s: "⏎ Send" in s.splitlines()[-1])
    session.send_text("now plan a sentence count report")
    session.press("Enter")
    session.wait_for(lambda s: "Plan 2 proposal" in s and "a approve" in s)
    _on_card(session, 2, r"a r h e Decide")
    session.press("a")
    until_sync(lambda: _phases(project).get(2) == "dev", "plan 2's Developer at work")
    assert _phases(project)[1] == "dev", "plan 1 left dev before plan 2's Developer started"
    assert time.monotonic() - started < DEVELOPER_SECONDS, "plan 2 started after plan 1's Developer was done"

    screen = session.wait_for(lambda s: "2 decisions waiting" in s, timeout=240)
    assert "Traceback" not in screen
    for plan_id in (1, 2):  # oldest first: plan 1's verdict, then plan 2's
        _on_card(session, plan_id, VERDICT_KEYS)
        session.press("a")
        session.wait_for(lambda s, p=plan_id: f"Plan {p} done" in s)  # the screen, on failure
        until_sync(lambda p=plan_id: _phases(project)[p] == "done", f"plan {plan_id} accepted")
    assert _phases(project) == {1: "done", 2: "done"}
    quit_demo(session)
