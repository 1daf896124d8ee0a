"""The chat keeps the record of decisions: the demo driven through revise, hold, rework, redesign,
merge and a restart tells the whole story in the chat, folded records that unfold, and in ``export``."""

from __future__ import annotations

from app_harness import armed, run_from_palette, screen_text, settle
from waiting import until

from tunaflow_tui.core.exporting import export_conversation
from tunaflow_tui.screens.feedback import FeedbackScreen
from tunaflow_tui.widgets.decision.done_card import DoneCard
from tunaflow_tui.widgets.decision.plan_card import PlanProposalCard
from tunaflow_tui.widgets.decision.verdict_card import ReviewVerdictCard
from tunaflow_tui.widgets.decision.way_card import WayCard

STORY = (
    "You asked for a revision of plan 1",
    "You put plan 1",
    "You took plan 1",
    "You approved plan 1",
    "After review round 1 (fail) you asked for a redesign",
    "You approved plan 1",
    "After review round 2 (fail) you asked for rework",
    "You accepted review round 3 (pass)",
    "You merged tunaflow/",
)
"""The records' headlines, in the order the decisions were taken."""


def _records(app) -> list[str]:
    return [block.record.headline() for block in app.chat_view.blocks() if block.record is not None]


async def _feedback(pilot, app, key: str, text: str) -> None:
    app.decision_dock.card_for(1).focus()
    await armed(pilot, app)
    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, FeedbackScreen), "the feedback box")
    app.screen.query_one("TextArea").load_text(text)
    await pilot.press("ctrl+s")
    await settle(pilot, app)


async def _press(pilot, app, key: str) -> None:
    app.decision_dock.card_for(1).focus()
    await armed(pilot, app)
    await pilot.press(key)
    await settle(pilot, app)


async def test_the_whole_story_stays_in_the_chat_and_in_export(open_app, at_approval) -> None:
    app, _controller, runtime = open_app(fail_reviews=1)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await _feedback(pilot, app, "r", "Keep the report to three words.")
        assert isinstance(app.focused, PlanProposalCard) and app.focused.view.revision == 2
        await _press(pilot, app, "h")  # hold the revised proposal …
        assert isinstance(app.decision_dock.card_for(1), PlanProposalCard | WayCard)
        await _press(pilot, app, "u")  # … and take it off hold
        await _press(pilot, app, "a")  # approve: the Developer works, round 1 fails
        assert isinstance(app.focused, ReviewVerdictCard) and app.focused.view.verdict == "fail"
        await _press(pilot, app, "d")  # redesign: the Architect proposes again (its turn may end after the pause)
        await until(pilot, lambda: isinstance(app.focused, PlanProposalCard), "the redesigned proposal focused")
        await _press(pilot, app, "a")  # approve the redesign: round 2 fails again
        await until(pilot, lambda: isinstance(app.focused, ReviewVerdictCard) and app.focused.view.round_no == 2,
                    "round 2's verdict focused")
        await _press(pilot, app, "w")  # rework: round 3 passes
        await until(pilot, lambda: isinstance(app.focused, ReviewVerdictCard) and app.focused.view.verdict == "pass",
                    "the passing verdict focused")
        await _press(pilot, app, "a")
        await until(pilot, lambda: isinstance(app.focused, DoneCard), "the done card focused")
        await _press(pilot, app, "m")
        await until(pilot, lambda: len(_records(app)) == len(STORY), "every decision's record in the chat")
        shown = _records(app)
        for headline, expected in zip(shown, STORY, strict=True):
            assert expected in headline, shown
        # the feedback is in the revision's record; unfolded, it says who decided and what was proposed
        revision = next(b for b in app.chat_view.blocks() if b.record is not None)
        assert "Keep the report to three words" in revision.record.headline()
        revision.focus()
        await settle(pilot, app)  # the chat has scrolled to the focused record before the key
        await pilot.press("enter")
        await until(pilot, lambda: "Decided by you" in screen_text(app), "the unfolded record")
        await until(pilot, lambda: "Proposal (revision 1): Add a word-frequency report" in screen_text(app), "Proposal (revision 1): Add a word-frequency report on screen")
    runtime.close()

    # a restart: a new runtime on the same project shows the same records, folded
    again, _controller, runtime = open_app(fail_reviews=1)
    async with again.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: len(_records(again)) == len(STORY), "the records after a restart")
        assert "Decided by you" not in screen_text(again)
        await run_from_palette(pilot, again, "Unfold records")
        await until(pilot, lambda: "Decided by you" in screen_text(again), "the records unfolded from the palette")
    exported = export_conversation(runtime.store, "main")
    for expected in STORY:
        assert expected in exported
    assert "Feedback: Keep the report to three words." in exported
    assert exported.count("Decided by you") == len(STORY)
