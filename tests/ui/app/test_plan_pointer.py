"""``#N`` at the start of a message in the main composer points it at plan N; a plan that does not exist
is named at once, nothing is sent and the text stays in the composer."""

from __future__ import annotations

from app_harness import posted, settle
from waiting import until


async def test_a_message_pointed_at_a_missing_plan_stays_in_the_composer(open_app, at_approval) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        before = len(runtime.store.list_messages("main"))
        app.composer.focus_input()
        app.composer.input.load_text("#99 make the report faster")
        await pilot.press("enter")
        await until(pilot, lambda: any("there is no plan 99" in n.message for n in posted(app)),
                    "the refusal to be shown")
        await settle(pilot, app)
        assert app.composer.text == "#99 make the report faster", "the text is not lost"
        assert len(runtime.store.list_messages("main")) == before, "nothing was sent or stored"


async def test_a_message_pointed_at_a_plan_is_sent_about_it(open_app, at_approval) -> None:
    app, _controller, runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        [plan] = runtime.store.list_plans()
        app.composer.focus_input()
        app.composer.input.load_text(f"#{plan.id} count words case-insensitively")
        await pilot.press("enter")
        await until(pilot, lambda: any(m.role == "user" and m.content.startswith(f"#{plan.id} count")
                                       for m in runtime.store.list_messages("main")), "the message stored")
        await settle(pilot, app)
        assert app.composer.text == ""
        assert runtime.last_sent is not None
        plan_section = next(s for s in runtime.last_sent.pack.sections if s.name == "plan")
        assert plan.title in plan_section.text, "the Architect's pack centres on the plan pointed at"
