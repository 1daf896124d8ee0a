"""Merging a done plan from its card: a clean merge, and a conflict that changes nothing."""

from __future__ import annotations

import subprocess

from app_harness import posted, screen_text, settle
from waiting import until

from tunaflow_tui.widgets.decision.conflict_card import ConflictCard
from tunaflow_tui.widgets.decision.done_card import DoneCard

REQUEST = "Add a word frequency report"


def _git(project, *args: str) -> str:
    return subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True, check=True).stdout


async def _to_done(pilot, app) -> DoneCard:
    """Accept the waiting verdict (the app is open on ``at_review``): the plan is done."""
    await settle(pilot, app)
    await pilot.press("f2")
    await settle(pilot, app)
    await pilot.press("a")
    await settle(pilot, app)
    card = app.focused
    assert isinstance(card, DoneCard)
    return card


async def test_m_merges_the_plan_into_its_base(open_app, at_review) -> None:
    demo_project = at_review
    app, _controller, _runtime = open_app(project=at_review)
    async with app.run_test(size=(120, 40)) as pilot:
        card = await _to_done(pilot, app)
        await pilot.press("m")
        # until the user can see it: the card's view changes before the screen does
        await until(pilot, lambda: card.view.merged and "Merged into main" in screen_text(app), "the merge shown")
        assert card.view.merged == "fast-forward"
        await until(pilot, lambda: "Merged into main: fast-forward" in screen_text(app), "Merged into main: fast-forward on screen")
        # the card can follow the database (another look at it) before the merge's own worker reports back
        await until(pilot, lambda: any(n.message.startswith("Merged: fast-forwarded main") for n in posted(app)),
                    "the merge's notification")
    assert (demo_project / "textstats" / "frequency.py").exists()
    assert _git(demo_project, "status", "--porcelain") == ""


async def test_a_conflicting_merge_changes_nothing_and_says_so(open_app, at_review) -> None:
    demo_project = at_review
    app, _controller, runtime = open_app(project=at_review)
    async with app.run_test(size=(120, 40)) as pilot:
        await _to_done(pilot, app)
        [plan] = runtime.store.list_plans()
        changed = _git(demo_project, "diff", "--name-only", f"{plan.base_branch}...{plan.git_branch}").split()
        target = next(name for name in changed if not name.startswith("docs/"))
        # meanwhile, someone changes the same file on main
        (demo_project / target).write_text("written on main while the plan was developed\n", encoding="utf-8")
        _git(demo_project, "commit", "-qam", "a change on main")
        head = _git(demo_project, "rev-parse", "HEAD")
        await pilot.press("m")
        await until(pilot, lambda: any(n.message.startswith("Not merged") for n in posted(app)),
                    "the refusal to merge")
        [note] = [n.message for n in posted(app) if n.message.startswith("Not merged")]
        assert target in note and "Nothing was changed" in note and "r lets the Developer merge main" in note
        # the plan's card becomes its merge-conflict card: the files, and the two ways on
        await until(pilot, lambda: isinstance(app.decision_dock.card_for(plan.id), ConflictCard)
                    and "r resolve with the developer" in screen_text(app), "the merge-conflict card")
        text = screen_text(app)
        assert "merge conflict" in text and target in text and "l leave it unmerged" in text
        assert "m merge" not in text, "no second merge while the conflict waits"

        # the chat keeps what happened: a record naming the conflicted file
        def recorded() -> bool:
            return any(b.record is not None and "stopped on conflicts" in b.record.headline()
                       for b in app.chat_view.blocks())

        await until(pilot, recorded, "the conflict's record in the chat")
        [record] = [m for m in runtime.store.list_messages("main") if m.meta.get("event") == "merge_conflict"]
        assert target in record.content

        # leaving it: the plan stays done and unmerged, and its card offers the merge again
        conflict = app.decision_dock.card_for(plan.id)
        assert conflict is not None
        conflict.arm()
        conflict.focus()
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.decision_dock.card_for(plan.id), DoneCard)
                    and "m merge" in screen_text(app), "the done card back, offering the merge")
        assert runtime.store.get_plan(plan.id).pending_decision is None
    assert _git(demo_project, "rev-parse", "HEAD") == head
    assert _git(demo_project, "status", "--porcelain") == ""


async def test_a_merge_asked_while_another_lands_says_it_is_queued_behind_it(open_app, at_review) -> None:
    from other_process import idle_holder

    app, _controller, runtime = open_app(project=at_review)
    async with app.run_test(size=(120, 40)) as pilot:
        card = await _to_done(pilot, app)
        [plan] = runtime.store.list_plans()
        with idle_holder() as holder:  # another tunaflow is merging this plan's branch right now
            runtime.service.record(plan.id, "merge_queued", "user", {
                "host": holder.host, "boot_id": holder.boot_id, "pid": holder.pid, "pid_start": holder.pid_start})
            await pilot.press("m")
            await until(pilot, lambda: any(f"merge is queued behind plan {plan.id}" in n.message for n in posted(app)),
                        "the merge said to be queued")
            assert not card.view.merged
        # that process ended: this merge goes ahead
        await until(pilot, lambda: card.view.merged == "fast-forward", "the queued merge landing")
