"""The main chat stays usable while the Developer streams in its branch."""

from __future__ import annotations

import asyncio
import time

from app_harness import screen_text, send, settle

REQUEST = "Add a word frequency report"


async def test_main_chat_answers_while_the_developer_streams(open_app) -> None:
    app, _controller, runtime = open_app(delay=0.03)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, REQUEST)
        [plan] = runtime.store.list_plans()
        developing = app.run_worker(runtime.decide(plan.id, "approve"), exit_on_error=False)
        deadline = time.monotonic() + 20
        while "developer" not in {m.persona for m in _streaming(runtime)} and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert "developer" in {m.persona for m in _streaming(runtime)}, "the Developer is writing"

        app.composer.focus_input()
        app.composer.input.load_text("While that runs: what does textstats count today?")
        await pilot.press("enter")
        answered_at = None
        while time.monotonic() < deadline and answered_at is None:
            main = runtime.store.list_messages("main")
            if main[-1].role == "assistant" and main[-1].status == "done" and main[-2].content.startswith("While"):
                answered_at = time.monotonic()
            await asyncio.sleep(0.02)
        assert answered_at is not None, "the Architect answered in the main chat"
        assert not developing.is_finished, "…before the Developer was done"
        assert any(m.persona == "developer" for m in _streaming(runtime))
        await pilot.pause()
        assert "While that runs" in screen_text(app)
        await developing.wait()
        await settle(pilot, app)
        assert runtime.store.get_plan(plan.id).pending_decision == "review"


def _streaming(runtime):
    branches = [b.id for b in runtime.store.list_branches()]
    return [m for b in branches for m in runtime.store.list_messages(f"branch:{b}") if m.status == "streaming"]
