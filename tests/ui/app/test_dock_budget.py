"""The dock at 80×24: the one line that lists a decision's keys says what is true now."""

from __future__ import annotations

from app_harness import armed, screen_text, send, settle
from waiting import until

from tunaflow_tui.core.workflow.phases import Phase


async def test_after_approving_the_dock_no_longer_says_the_plan_waits(open_app, at_approval) -> None:
    app, _controller, runtime = open_app(delay=0.05)  # the Developer takes a while, as a real one does
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.decision_dock.card_for(1).focus()
        await armed(pilot, app)
        hint = app.decision_dock.query_one("#dock-hint")
        await until(pilot, lambda: str(hint.render()).startswith("Plan 1 waiting: a approve"), "the card's keys",
                    limit=10)
        await pilot.press("a")
        await pilot.pause()
        await pilot.pause()
        plan = runtime.store.get_plan(1)
        assert plan is not None and plan.phase != Phase.DONE  # still in the moment the hint went stale
        assert not hint.display or "waiting" not in str(hint.render()), str(hint.render())
        await settle(pilot, app)


async def test_the_demo_s_suggestion_goes_after_the_first_send(open_app) -> None:
    from tunaflow_tui.subcommands.demo_command import DEMO_NOTE

    app, _controller, _runtime = open_app(notes=(DEMO_NOTE,))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        assert "try: add a word frequency report" in screen_text(app)
        await send(pilot, app, "add a word frequency report")
        await until(pilot, lambda: "try: add a word" not in screen_text(app), "the suggestion gone")
        status = app.query_one("#status-line")
        assert not status.display or "try:" not in str(status.render())


async def test_a_done_card_the_user_left_is_one_line_above_its_keys(open_app, at_review) -> None:
    app, _controller, _runtime = open_app(project=at_review)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.decision_dock.card_for(1).focus()
        await armed(pilot, app)
        await pilot.press("a")
        await settle(pilot, app)
        card = app.decision_dock.card_for(1)
        assert card.has_focus and card.outer_size.height > 3  # the user is on it: whole
        await pilot.press("i")
        await until(pilot, lambda: card.outer_size.height == 1, "the card folded to one line", limit=10)
        rows = screen_text(app).splitlines()
        [at] = [n for n, row in enumerate(rows) if "✔ Plan 1 done" in row]
        assert rows[at + 1].strip().startswith("Plan 1 done — f2 focuses it, then m merge"), "\n".join(rows)
        print("\n".join(rows))


def test_a_long_hint_is_cut_after_a_whole_item() -> None:
    from tunaflow_tui.widgets.decision.decision_dock import fit_hint

    text = "Plan 2 review waiting — f2 focuses it, then a accept · w rework · d redesign · h hold · x abandon…"
    assert fit_hint(text, 200) == text
    assert fit_hint(text, 77) == "Plan 2 review waiting — f2 focuses it, then a accept · w rework · …"
    assert fit_hint("Plan 1 done: m merge into the base branch · x remove the worktree", 60) \
        == "Plan 1 done: m merge into the base branch · …"


async def test_at_80_columns_the_dock_hint_ends_with_whole_keys(open_app, at_review) -> None:
    app, _controller, _runtime = open_app(project=at_review)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("i")  # the user is elsewhere: the hint leads with the key that reaches the card
        await until(pilot, lambda: "f2 focuses it" in screen_text(app), "the hint")
        [row] = [r.strip() for r in screen_text(app).splitlines() if "Plan 1 review waiting" in r]
        assert row.endswith("· …"), row
        assert "a accept" in row and all(not item.endswith(" re") for item in row.split(" · ")), row


def test_a_hint_cut_inside_its_first_item_never_ends_on_a_bare_key() -> None:
    from tunaflow_tui.widgets.decision.decision_dock import fit_hint

    text = "Plan 1 review waiting — f2 focuses it, then a accept · w rework · d redesign"
    assert fit_hint(text, 49) == "Plan 1 review waiting — f2 focuses it, …"


async def test_the_dock_line_is_cut_at_a_whole_key_when_a_pinned_pane_gives_the_chat_back(open_app, at_review) -> None:
    """80×24: pinned, the branch pane takes the whole width and hides the chat; f8 brings the chat back.

    The dock line is cut to the width it is drawn at then (the dock less its padding and scrollbar),
    not to a width measured while the chat was hidden: Textual cut it mid-word (``d redesi…``).
    """
    app, controller, runtime = open_app(project=at_review)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.decision_dock.card_for(1).focus()  # the verdict has the keys; the pane will take them
        await armed(pilot, app)
        [branch] = [b for b in runtime.store.list_branches() if b.kind == "implementation"]
        await controller.panes.open_branch(branch.id)
        await pilot.press("f7")
        await until(pilot, lambda: "Plan 1 review waiting" not in screen_text(app), "the pane in place of the chat")
        await pilot.press("f8")
        await until(pilot, lambda: "Plan 1 review waiting" in screen_text(app), "the chat back, with its dock")
        await pilot.pause()
        [row] = [r.strip() for r in screen_text(app).splitlines() if "Plan 1 review waiting" in r]
        whole = app.decision_dock.hint_text()[0].split(" · ")
        assert row.endswith(" · …"), row
        shown = row.removesuffix(" · …").split(" · ")
        assert shown == whole[: len(shown)], row  # each item shown whole, in order
        assert "a accept" in row, row
