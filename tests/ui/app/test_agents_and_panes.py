"""Streaming, cancel, error retry, the branch pane and start-up notes in the integrated app."""

from __future__ import annotations

from app_harness import demo_settings, posted, screen_text, send, settle
from holding_engine import holding_factory
from run_phases import group_alive, kill_groups, leave_agent_running
from runtime_harness import PROPOSAL, make_harness
from waiting import until

from tunaflow_tui.core.workflow import Approve
from tunaflow_tui.core.workflow.phases import Actor
from tunaflow_tui.runtime.runtime import WorkflowRuntime
from tunaflow_tui.screens.decision_screen import DecisionScreen
from tunaflow_tui.subcommands.open_command import NOT_GIT_NOTE, project_notes
from tunaflow_tui.widgets.branch_thread import BranchThread
from tunaflow_tui.widgets.chat_view import ChatView
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard

REQUEST = "Add a word frequency report"


async def test_cancel_agent_leaves_the_message_interrupted(open_app, demo_project) -> None:
    factory, engine = holding_factory("architect")  # the Architect stops mid-answer until cancelled
    app, _controller, runtime = open_app(engine_factory=factory)
    async with app.run_test(size=(120, 40)) as pilot:
        app.composer.input.load_text(REQUEST)
        await pilot.press("enter")
        await until(pilot, lambda: any(b.is_streaming and b.text for b in app.chat_view.blocks())
                    and "writing…" in screen_text(app), "the Architect's answer streaming on screen")
        assert engine().holding("architect")
        await until(pilot, lambda: "writing…" in screen_text(app), "writing… on screen")
        # the main chat stays usable while the agent streams
        app.composer.input.load_text("still typing")
        assert app.composer.text == "still typing"
        await pilot.press("f4")
        await settle(pilot, app)
        [answer] = [m for m in runtime.store.list_messages("main") if m.role == "assistant"]
        assert answer.status == "interrupted"
        await until(pilot, lambda: "interrupted" in screen_text(app), "interrupted on screen")
        assert runtime.store.list_plans() == ()


async def test_error_card_retry_runs_the_turn_again(tmp_path, monkeypatch) -> None:
    harness = make_harness(tmp_path, monkeypatch)
    harness.set_script(architect=[{"crash": True}, {"text": PROPOSAL}])
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.subcommands.open_command import build_app

    runtime = WorkflowRuntime(harness.project, harness.settings())
    app = build_app(runtime, notes=(), cursor_blink=False)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await send(pilot, app, "Please add multiplication")
            text = screen_text(app)
            assert "failed" in text and "press r to retry" in text
            assert "fatal: the agent crashed" in text  # the engine's stderr tail
            failed = app.chat_view.blocks()[-1]
            failed.focus()
            await pilot.press("r")
            await settle(pilot, app)
            assert isinstance(app.focused, PlanProposalCard)
            await until(pilot, lambda: "Add multiplication to calc" in screen_text(app), "Add multiplication to calc on screen")
            views = [block.view for block in app.chat_view.blocks()]
            # the crashed turn stays as it was; the retry answers in a fresh session (the crashed
            # one has nothing to resume), so no second error appears
            assert [(v.label, v.status) for v in views] == [
                ("You", "done"), ("Architect · fclaude", "error"), ("Architect · fclaude", "done")]
            assert "cannot be resumed" not in screen_text(app)
    finally:
        runtime.close()


async def test_branch_pane_shows_the_developer_and_toggles_and_pins(open_app, at_review) -> None:
    # the plan was approved and the Developer implemented it (seeded: its turns ran once, headless)
    app, controller, runtime = open_app(project=at_review)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot, app)
        workspace = app.workspace
        assert workspace.mode == "hidden"
        [impl] = [b for b in runtime.store.list_branches() if b.kind == "implementation"]
        await controller.panes.open_branch(impl.id)
        await pilot.pause()
        assert workspace.mode == "drawer"
        body = workspace.pane.body
        assert isinstance(body, BranchThread) and isinstance(body.chat, ChatView)
        assert any(b.view.label.startswith("Developer") for b in body.chat.blocks())
        assert body.composer is None and "The workflow drives this branch" in screen_text(app)
        await until(pilot, lambda: "↳ Implement: Add a word-frequency report" in screen_text(app), "↳ Implement: Add a word-frequency report on screen")
        app.composer.focus_input()
        await pilot.press("f7")
        await pilot.pause()
        assert workspace.mode == "pinned"
        pane = workspace.pane.region
        chat = app.chat_view.region
        assert abs(pane.width - chat.width) <= 4  # 50:50
        await pilot.press("f7")
        await pilot.pause()
        assert workspace.mode == "drawer"
        await pilot.press("f6")
        await pilot.pause()
        assert workspace.mode == "hidden"


async def test_sidebar_lists_plans_and_branches_and_opens_a_branch(open_app, at_review) -> None:
    # the plan was approved, implemented and reviewed (seeded: its turns ran once, headless)
    app, _controller, _runtime = open_app(project=at_review)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot, app)
        await until(pilot, lambda: "[review]" in screen_text(app), "[review] on screen")
        text = screen_text(app)
        assert "[review]" in text and "[implementation]" in text
        tree = app.query_one("#sidebar-tree")
        tree.focus()
        await pilot.pause()
        for _ in range(30):
            node = tree.cursor_node
            if node is not None and getattr(node.data, "kind", None) == "branch":
                break
            await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.workspace.mode == "drawer"
        assert app.workspace.pane.view is not None


async def test_workflow_view_lists_the_plan_with_ticked_subtasks(open_app, at_review) -> None:
    # the plan was approved, implemented and reviewed (seeded: its turns ran once, headless)
    app, _controller, _runtime = open_app(project=at_review)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("f3")
        await pilot.pause()
        text = screen_text(app)
        assert "review" in text and "✓  1." in text and "review round 1: pass" in text
        documents = app.screen.query_one("#documents")
        prompts = [documents.get_option_at_index(i).prompt for i in range(documents.option_count)]
        names = [getattr(prompt, "name", str(prompt)) for prompt in prompts]  # a FileName, cut to its width
        assert "add-a-word-frequency-report-to-textstats.md" in names
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.screen_stack[0]


def test_project_notes_say_demo_and_no_git(tmp_path, demo_project) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

    runtime = WorkflowRuntime(plain, demo_settings(demo_project))
    try:
        notes = project_notes(runtime)
    finally:
        runtime.close()
    assert NOT_GIT_NOTE in notes
    assert any("demo engine plays every role" in n for n in notes)


async def test_cancelling_the_developer_asks_whether_to_continue(open_app, demo_project) -> None:
    factory, engine = holding_factory("developer")  # the Developer stops mid-answer until cancelled
    app, _controller, runtime = open_app(engine_factory=factory)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, REQUEST)
        await pilot.press("a")
        await until(pilot, lambda: engine().holding("developer"), "the Developer writing")
        assert "branch:1" in runtime.runner.running_conversations
        await pilot.press("f4")
        await settle(pilot, app)
        assert isinstance(app.screen, DecisionScreen)
        await until(pilot, lambda: "The Developer stopped" in screen_text(app), "The Developer stopped on screen")
        await pilot.press("c")
        await settle(pilot, app)
        assert runtime.store.list_plans()[0].pending_decision == "review"


async def test_interrupted_step_after_a_crash_is_offered_and_resumed(open_app, at_approval) -> None:
    # what a crash during development leaves behind: the plan approved, the step started and never finished
    runtime = WorkflowRuntime(at_approval, demo_settings(at_approval))
    plan = runtime.store.list_plans()[0]
    runtime.apply(plan.id, Approve(), Actor.USER)
    runtime.store.add_plan_event(plan.id, "agent_started", "system", {"role": "developer", "step": "dev"})
    runtime.close()
    app2, controller2, runtime2 = open_app()
    async with app2.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert any("Resume interrupted step" in n.message for n in posted(app2))
        controller2.project.resume_interrupted("retry")
        await settle(pilot, app2)
        assert runtime2.store.list_plans()[0].pending_decision == "review"
        await until(pilot, lambda: "Plan 1 review waiting: a accept" in screen_text(app2), "Plan 1 review waiting: a accept on screen")


async def test_an_agent_a_crash_left_running_is_named_blocks_resume_and_can_be_stopped(
        open_app, demo_project, at_approval) -> None:
    # a crash during development: the step never finished, and its agent runs on in the branch
    runtime = WorkflowRuntime(at_approval, demo_settings(at_approval))
    plan = runtime.store.list_plans()[0]
    runtime.apply(plan.id, Approve(), Actor.USER)
    branch = runtime.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                         mode="chat", kind="implementation", label="Implement")
    runtime.store.update_plan(plan.id, impl_branch_id=branch.id)
    runtime.store.add_plan_event(plan.id, "agent_started", "system", {"role": "developer", "step": "dev"})
    runtime.close()
    pid = leave_agent_running(demo_project, f"branch:{branch.id}", "developer")
    try:
        app2, controller2, runtime2 = open_app()
        async with app2.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            messages = [n.message for n in posted(app2)]
            assert any("Still running: the developer agent" in m and "Stop leftover agents" in m for m in messages)

            controller2.project.resume_interrupted("retry")
            await settle(pilot, app2)
            messages = [n.message for n in posted(app2)]
            assert any(m.startswith("Could not retry the interrupted step: Still running") for m in messages)
            assert runtime2.interrupted_plans() and group_alive(pid)  # nothing started, nothing lost

            controller2.project.stop_leftover_agents()
            await settle(pilot, app2)
            assert any("Stopped the developer agent" in n.message for n in posted(app2))
            assert not group_alive(pid)  # it ignored SIGTERM: SIGKILL ended it

            controller2.project.resume_interrupted("retry")
            await settle(pilot, app2)
            assert runtime2.store.list_plans()[0].pending_decision == "review"
    finally:
        kill_groups([pid])
