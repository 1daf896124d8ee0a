"""The main chat stays usable while the Developer streams in its branch."""

from __future__ import annotations

from app_harness import screen_text, settle
from holding_engine import holding_factory
from waiting import until

REQUEST = "Add a word frequency report"


async def test_main_chat_answers_while_the_developer_streams(open_app, at_approval) -> None:
    factory, engine = holding_factory("developer")  # the Developer is mid-answer until released
    app, _controller, runtime = open_app(engine_factory=factory)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)  # the Architect's proposal waits (``at_approval``: its turn ran once, headless)
        [plan] = runtime.store.list_plans()
        developing = app.run_worker(runtime.decide(plan.id, "approve"), exit_on_error=False)
        await until(pilot, lambda: "developer" in {m.persona for m in _streaming(runtime)}, "the Developer writing")

        app.composer.focus_input()
        app.composer.input.load_text("While that runs: what does textstats count today?")
        await pilot.press("enter")

        def answered() -> bool:
            main = runtime.store.list_messages("main")
            return (main[-1].role == "assistant" and main[-1].status == "done"
                    and main[-2].content.startswith("While"))

        await until(pilot, answered, "the Architect's answer in the main chat")
        assert not developing.is_finished, "…before the Developer was done"
        assert any(m.persona == "developer" for m in _streaming(runtime))
        await pilot.pause()
        assert "While that runs" in screen_text(app)
        engine().release()
        await developing.wait()
        await settle(pilot, app)
        assert runtime.store.get_plan(plan.id).pending_decision == "review"


def _streaming(runtime):
    branches = [b.id for b in runtime.store.list_branches()]
    return [m for b in branches for m in runtime.store.list_messages(f"branch:{b}") if m.status == "streaming"]
