"""While a plan streams, the chat says what is being written in words, not the proposal's raw fields;
the finished message shows as it always did."""

from __future__ import annotations

from app_harness import screen_text, settle
from holding_engine import holding_factory
from waiting import until

from tunaflow_tui.agents.demo import sample

REQUEST = "Add a word frequency report"
SECOND_SUBTASK = sample.SUBTASKS[1][:20]


async def test_a_plan_streaming_reads_as_prose(open_app) -> None:
    # the Architect is held once the second subtask line is written, mid-proposal
    factory, engine = holding_factory("architect", after=f"2. {SECOND_SUBTASK}")
    app, _controller, runtime = open_app(engine_factory=factory)
    async with app.run_test(size=(120, 40)) as pilot:
        app.composer.focus_input()
        app.composer.input.load_text(REQUEST)
        await pilot.press("enter")
        await until(pilot, lambda: engine().holding("architect")
                    and "drafting a plan… (2 subtasks so far)" in screen_text(app), "the prose line")
        shown = screen_text(app)
        assert "Here is a plan for the sample project." in shown
        assert "title:" not in shown and "subtasks:" not in shown and SECOND_SUBTASK not in shown
        engine().release()
        await settle(pilot, app)
        [reply] = [b for b in app.chat_view.blocks() if b.view.role == "assistant"]
        assert not reply.query(".message-activity")  # the line goes with the stream
        shown = screen_text(app)
        assert "drafting a plan" not in shown and "Approve it, or ask for a revision, on the plan's card" in shown
        assert runtime.store.list_plans()[0].pending_decision == "approval"
