"""A proposal with more subtasks than a plan can hold is refused when it arrives, with a clear note."""

from __future__ import annotations

from runtime_harness import PROPOSAL, Harness

from tunaflow_tui.runtime.events import MessageAdded, NoticeRaised, RuntimeEvent
from tunaflow_tui.runtime.planning import MAX_PLAN_SUBTASKS
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _proposal(count: int) -> str:
    subtasks = "\n".join(f"{i}. Step {i} of the migration" for i in range(1, count + 1))
    return (f"Here is the plan.\n\n<!-- tunaflow:plan-proposal -->\n# Migrate everything\n\n## Subtasks\n{subtasks}\n\n"
            "## Description\nMove every module.\n<!-- /tunaflow:plan-proposal -->\n")


async def test_two_thousand_subtasks_create_no_plan_and_tell_user_and_architect(harness: Harness) -> None:
    harness.set_script(architect=[{"text": _proposal(2000)}, {"text": "Understood, a smaller plan then."}])
    events: list[RuntimeEvent] = []
    settings = harness.settings()
    # a 2,000-line reply streams for seconds; on a loaded machine longer than the harness's one-minute limit
    engines = {name: engine.model_copy(update={"timeout_total_s": 600, "timeout_idle_s": 300})
               for name, engine in settings.engines.items()}
    rt = WorkflowRuntime(harness.project, settings.model_copy(update={"engines": engines}),
                         observer=events.append)
    try:
        result = await rt.send_user_message("Migrate the whole code base")
        assert result is not None and result.ok
        assert rt.store.list_plans() == ()  # nothing to approve, nothing to get stuck
        warnings = [e.text for e in events if isinstance(e, NoticeRaised) and e.level == "warning"]
        assert any("2,000 subtasks" in w and f"at most {MAX_PLAN_SUBTASKS}" in w for w in warnings), warnings
        # the note is in the conversation: the user reads it, and the Architect's next turn gets it
        note = rt.store.list_messages("main", limit=5)[-1]
        assert note.role == "system" and "2,000 subtasks" in note.content and "smaller plan" in note.content
        assert MessageAdded("main", note.id, "system") in events
        pack = rt.context.build(role="architect", conversation_id="main", request="ok, try again")
        assert "2,000 subtasks" in pack.render()
    finally:
        rt.close()


async def test_an_oversized_revision_keeps_the_plan_being_revised(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}, {"text": _proposal(MAX_PLAN_SUBTASKS + 1)}])
    rt = WorkflowRuntime(harness.project, harness.settings())
    try:
        await rt.send_user_message("Please add multiplication")
        [plan] = rt.store.list_plans()
        plan = await rt.decide(plan.id, "revise", feedback="more detail please")
        assert plan.phase == "drafting"  # still waiting for a proposal it can track
        assert [s.title for s in plan.subtasks] == ["Add `mul(a, b)` to calc.py", "Test `mul` in tests/test_mul.py"]
        assert "proposal_refused" in [e.type for e in rt.store.list_plan_events(plan.id)]
        assert f"{MAX_PLAN_SUBTASKS + 1} subtasks" in rt.store.list_messages("main", limit=5)[-1].content
    finally:
        rt.close()


async def test_exactly_the_limit_is_a_plan(harness: Harness) -> None:
    harness.set_script(architect=[{"text": _proposal(MAX_PLAN_SUBTASKS)}])
    rt = WorkflowRuntime(harness.project, harness.settings())
    try:
        await rt.send_user_message("Migrate")
        [plan] = rt.store.list_plans()
        assert len(plan.subtasks) == MAX_PLAN_SUBTASKS and plan.pending_decision == "approval"
    finally:
        rt.close()
