"""What the screen shows follows the plan at once: archived branches, the done card's keys, the sidebar's width."""

from __future__ import annotations

import pytest
from app_harness import armed, screen_text, settle
from seeded_plans import reviewed, seat
from waiting import until

from tunaflow_tui.screens.branch_dialogs import ConfirmBranchScreen
from tunaflow_tui.widgets.sidebar import Sidebar

SIZES = [(80, 24), (120, 40)]


def _section_labels(app, attr: str) -> list[str]:
    sections = app.query_one(Sidebar).sections
    return [item.label for item in getattr(sections, attr)]


@pytest.mark.parametrize("size", SIZES)
async def test_accepting_a_review_moves_the_plans_branches_to_the_archive_at_once(open_app, size) -> None:
    app, _controller, runtime = open_app()
    plan_id = reviewed(runtime.store, [seat("reviewer", "pass"), seat("verifier", "pass")])
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        if size[0] < 100:
            await pilot.press("ctrl+b")  # the sidebar starts hidden on a narrow terminal
        await pilot.pause()
        assert sorted(_section_labels(app, "branches")) == ["Implement: word-frequency", "Review: word-frequency"]
        await pilot.press("f2")  # to the verdict card
        await armed(pilot, app)
        await pilot.press("a")
        await settle(pilot, app)
        assert runtime.store.get_plan(plan_id).phase == "done"
        assert _section_labels(app, "branches") == []
        assert sorted(_section_labels(app, "archive")) == ["Implement: word-frequency", "Review: word-frequency"]
        text = screen_text(app)
        assert "Archive 2" in text and "Branches" in text


def _done_with_worktree(runtime, project) -> int:
    import subprocess

    from tunaflow_tui.core.workflow import Accept

    plan_id = reviewed(runtime.store, [seat("reviewer", "pass"), seat("verifier", "pass")], branches=False)
    tree = project.parent / "worktrees" / "word-frequency"
    subprocess.run(["git", "-C", str(project), "worktree", "add", "-q", "-b", "tunaflow/word-frequency", str(tree)],
                   check=True, capture_output=True)
    runtime.store.update_plan(plan_id, worktree_path=str(tree), git_branch="tunaflow/word-frequency",
                              base_branch="main")
    runtime.service.apply(plan_id, Accept(), actor="user")
    return plan_id


@pytest.mark.parametrize("size", SIZES)
async def test_the_done_hint_stops_offering_to_remove_a_removed_worktree(open_app, demo_project, size) -> None:
    app, _controller, runtime = open_app()
    plan_id = _done_with_worktree(runtime, demo_project)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        assert f"Plan {plan_id} done — f2 focuses it, then m merge · x remove worktree" in text
        card = app.decision_dock.card_for(plan_id)
        card.focus()
        await armed(pilot, app)
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, ConfirmBranchScreen), "the confirmation", limit=10)
        await pilot.press("y")
        await until(pilot, lambda: runtime.store.get_plan(plan_id).worktree_path is None
                    and "x remove" not in screen_text(app), "the worktree removed and its key gone", limit=5.0)
        text = screen_text(app)
        assert "remove the worktree" not in text and "x remove" not in text
        assert f"Plan {plan_id} done: m merge into the base branch" in text


@pytest.mark.parametrize("size", SIZES)
async def test_a_worktree_removed_as_a_decision_leaves_the_done_hint_too(open_app, demo_project, size) -> None:
    from tunaflow_tui.core.workflow.decision_words import Decision

    app, controller, runtime = open_app()
    plan_id = _done_with_worktree(runtime, demo_project)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await until(pilot, lambda: "x remove worktree" in screen_text(app), "x remove worktree on screen", limit=20)
        controller.decisions.decide(plan_id, Decision.REMOVE_WORKTREE)  # as f2's list or the palette decide it
        await settle(pilot, app)
        assert runtime.store.get_plan(plan_id).worktree_path is None
        text = screen_text(app)
        assert "remove the worktree" not in text and "x remove" not in text
        assert f"Plan {plan_id} done: m merge into the base branch" in text  # the card took the focus
