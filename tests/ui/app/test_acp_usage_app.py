"""An ACP agent's usage in the app: the context meter on its status line while it works (codex-acp's shape)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_rig import capture, expect, result, session_id, until_prompt, with_acp_engine
from app_harness import demo_settings, screen_text
from waiting import until


async def test_the_agents_usage_update_shows_on_its_status_line_as_it_works(open_app: Any, demo_project: Path) -> None:
    entries = until_prompt(capture("codex-fake-ok"))
    sid = session_id(entries)
    [update] = [e for e in capture("codex-fake-ok") if '"usage_update"' in str(e["msg"]).replace("'", '"')]
    assert update["msg"]["params"]["sessionId"] == sid
    # the real usage_update, then the agent keeps working until it is cancelled
    entries += [update, expect("session/cancel"), result(3, {"stopReason": "cancelled"})]
    settings, _log = with_acp_engine(demo_settings(demo_project), demo_project.parent / "acp", entries,
                                     name="codex-acp")
    app, _session, runtime = open_app(settings=settings)
    async with app.run_test(size=(120, 40)) as pilot:
        app.composer.focus_input()
        app.composer.input.load_text("say hello")
        await pilot.press("enter")
        await until(pilot, lambda: "context 126/258,400 (0%)" in screen_text(app), "the context meter")
        line = next(row for row in screen_text(app).splitlines() if "context 126/258,400" in row)
        assert "architect (codex-acp) is working…" in line
        await pilot.press("f4")  # cancel: the agent gets session/cancel and the line goes
        await until(pilot, lambda: "context 126/258,400" not in screen_text(app), "the line leaving with the agent")
        assert runtime.store.list_messages("main")[-1].status != "streaming"
