"""Merging a done plan from its card: a clean merge, and a conflict that changes nothing."""

from __future__ import annotations

import subprocess

from app_harness import posted, screen_text, settle
from waiting import until

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
        card = await _to_done(pilot, app)
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
        assert target in note and "Nothing was changed" in note
        assert card.view.merged is None and "m merge" in screen_text(app)  # still offered
        # the chat keeps what happened: a record naming the conflicted file
        # the chat keeps what happened: a record naming the conflicted file
        def recorded() -> bool:
            return any(b.record is not None and "stopped on conflicts" in b.record.headline()
                       for b in app.chat_view.blocks())

        await until(pilot, recorded, "the conflict's record in the chat")
        [record] = [m for m in runtime.store.list_messages("main") if m.meta.get("event") == "merge_conflict"]
        assert target in record.content
    assert _git(demo_project, "rev-parse", "HEAD") == head
    assert _git(demo_project, "status", "--porcelain") == ""
