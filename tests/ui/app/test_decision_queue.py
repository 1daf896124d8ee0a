"""One decision queue across plans: f2 walks every waiting decision oldest first (held ones last), the
dock counts them, and a key on a card decides only that card's plan — also when another plan's card
arrives while the user is on one. Plans are seeded through the workflow service and the store (no
agent turn runs); a plan that moves is announced as the runtime announces it."""

from __future__ import annotations

import pytest
import waiting
from app_harness import armed, footers_current, posted, screen_rows, settle
from seeded_plans import reviewed, seat

from tunaflow_tui.core.workflow import Hold
from tunaflow_tui.core.workflow.service import WorkflowService
from tunaflow_tui.widgets.composer import ComposerInput
from tunaflow_tui.widgets.decision.decision_card import DecisionCard
from tunaflow_tui.widgets.decision.decision_dock import card_plan_id


def _proposal(runtime, title: str, slug: str) -> int:
    """A plan proposal waiting for approval."""
    return WorkflowService(runtime.store).create_plan_from_proposal(
        title=title, slug=slug, subtasks=[("Count words", ""), ("Format the report", "")]).id


def _verdict(runtime, title: str, slug: str) -> int:
    """A plan reviewed once (a pass): its verdict waits for the user."""
    return reviewed(runtime.store, [seat("reviewer", "pass"), seat("verifier", "pass")], title=title, slug=slug)


def _focused_plan(app) -> int | None:
    focused = app.focused
    return card_plan_id(focused) if isinstance(focused, DecisionCard) else None


def _dock_line(app) -> str:
    """The dock's line of keys, whole (as it reads before it is cut to the width it is drawn at)."""
    hint = app.decision_dock.query_one("#dock-hint")
    return hint.text if hint.display else ""


async def until(pilot, condition, what: str, limit: float = 30.0) -> None:
    """``waiting.until`` naming the dock's line and the footer when it gives up (a short limit: no agent runs)."""
    try:
        await waiting.until(pilot, condition, what, limit=limit)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; dock: {_dock_line(pilot.app)!r}; footer: {_footer(pilot.app)!r}") from None


def _footer(app) -> str:
    return screen_rows(app)[-1]


def _state(runtime, plan_id: int) -> tuple[str, str | None]:
    plan = runtime.store.get_plan(plan_id)
    assert plan is not None
    return plan.phase, plan.pending_decision


async def _f2_to(pilot, app, plan_id: int) -> None:
    await pilot.press("f2")
    await until(pilot, lambda: _focused_plan(app) == plan_id, f"plan {plan_id}'s card focused by f2")


async def test_f2_walks_every_decision_oldest_first_and_held_ones_last(open_app) -> None:
    app, _controller, runtime = open_app()
    oldest = _proposal(runtime, "Add a word frequency report", "word-frequency")
    reviewed_id = _verdict(runtime, "Add a sentence count", "sentence-count")
    held = _proposal(runtime, "Add a CSV export", "csv-export")
    runtime.service.apply(held, Hold(), actor="user")
    newest = _proposal(runtime, "Add a JSON export", "json-export")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.composer.focus_input()
        await until(pilot, lambda: isinstance(app.focused, ComposerInput), "the composer focused")
        await until(pilot, lambda: _dock_line(app).startswith(
            f"4 decisions waiting — f2 focuses Plan {oldest}, then walks on, oldest first: "
            f"Plan {oldest}, Plan {reviewed_id}, Plan {newest}, Plan {held} (held)"), "the dock counting the queue")

        walked = []
        for _press in range(5):
            before = _focused_plan(app)
            await pilot.press("f2")
            await until(pilot, lambda before=before: _focused_plan(app) not in (None, before), "f2 to move on")
            walked.append(_focused_plan(app))
        assert walked == [oldest, reviewed_id, newest, held, oldest]

        # on a card, the dock says how many wait and names the plan whose card has the keys
        await armed(pilot, app)
        await until(pilot, lambda: _dock_line(app).startswith(f"4 decisions waiting · Plan {oldest} waiting: a approve"),
                    "the dock naming the focused plan")
        assert _dock_line(app).endswith("f2 next"), _dock_line(app)

        app.composer.focus_input()  # away from the cards, f2 comes back to the one it walked to
        await until(pilot, lambda: isinstance(app.focused, ComposerInput), "the composer focused")
        await _f2_to(pilot, app, oldest)


async def test_at_80x24_the_dock_line_with_the_count_stays_one_line_cut_at_a_word(open_app) -> None:
    app, _controller, runtime = open_app()
    ids = [_proposal(runtime, f"Add report number {n}", f"report-{n}") for n in range(1, 4)]
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.composer.focus_input()
        whole = (f"3 decisions waiting — f2 focuses Plan {ids[0]}, then walks on, oldest first: "
                 f"Plan {ids[0]}, Plan {ids[1]}, Plan {ids[2]}")
        await until(pilot, lambda: app.decision_dock.hint_text()[0] == whole, "the dock counting three")
        await until(pilot, lambda: any("3 decisions waiting" in row for row in screen_rows(app)), "the line drawn")
        rows = screen_rows(app)
        [at] = [n for n, row in enumerate(rows) if "3 decisions waiting" in row]
        shown = rows[at].strip()
        assert len(whole) > 78 and shown.endswith(" …"), shown
        assert whole.startswith(shown.removesuffix(" …")) and whole[len(shown) - 2] == " ", "cut at a word"
        assert "Plan" not in rows[at + 1] and "oldest" not in rows[at + 1], "the line did not wrap"

        await _f2_to(pilot, app, ids[0])
        await armed(pilot, app)
        await until(pilot, lambda: _dock_line(app).startswith(f"3 decisions waiting · Plan {ids[0]} waiting: a approve"),
                    "the count and the plan with the keys")
        rows = screen_rows(app)
        [row] = [r.strip() for r in rows if r.strip().startswith("3 decisions waiting ·")]
        assert len(row) <= 78, row


ON = [pytest.param("proposal", id="on-a-proposal"), pytest.param("verdict", id="on-a-verdict")]


SIZES = [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("on", ON)
async def test_a_card_that_arrives_leaves_the_keys_with_the_plan_the_user_is_on(open_app, on, size) -> None:
    """The user is on plan A's card; plan B's card arrives: the keys stay with A until the user moves (f2),
    and A stays in view (a card scrolled out of view gives its keys up)."""
    app, _controller, runtime = open_app()
    make_first, make_second = (_proposal, _verdict) if on == "proposal" else (_verdict, _proposal)
    first = make_first(runtime, "Add a word frequency report", "word-frequency")
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await _f2_to(pilot, app, first)
        await armed(pilot, app)
        second = make_second(runtime, "Add a sentence count", "sentence-count")
        second_plan = runtime.store.get_plan(second)
        runtime.plan_changed(second_plan)  # as the runtime announces a plan that moved
        await until(pilot, lambda: app.decision_dock.card_for(second) is not None, "plan B's card in the dock")
        await settle(pilot, app)
        assert _focused_plan(app) == first, "the arriving card took the keys"
        await until(pilot, lambda: footers_current(app) and f"Plan {first} ·" in _footer(app),
                    "the footer naming plan A")
        assert f"Plan {second} ·" not in _footer(app)
        assert _dock_line(app).startswith(f"2 decisions waiting · Plan {first} "), _dock_line(app)

        await pilot.press("h")  # the key the user meant for A (both cards bind it)
        await until(pilot, lambda: _state(runtime, first)[0] == "held", "plan A held")
        await settle(pilot, app)
        assert _state(runtime, second)[0] != "held" and _state(runtime, second)[1] is not None, "B was decided"

        await _f2_to(pilot, app, second)
        await until(pilot, lambda: footers_current(app) and f"Plan {second} ·" in _footer(app), "the footer naming B")
        await pilot.press("h")
        await until(pilot, lambda: _state(runtime, second)[0] == "held", "plan B held")
        await settle(pilot, app)
        assert [e.type for e in runtime.store.list_plan_events(first)].count("held") == 1, "A decided twice"


ORDERS = [pytest.param((0, 1), id="older-first"), pytest.param((1, 0), id="newer-first")]
KEYS = [pytest.param("h", id="hold"), pytest.param("a", id="approve-or-accept")]


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("order", ORDERS)
async def test_keys_in_every_order_land_on_the_plan_whose_card_was_focused(open_app, order, key) -> None:
    """Two plans wait at once (a proposal and a verdict, both binding a and h): whichever the user goes to
    first, the key decides that plan and only that plan (read back from the database)."""
    app, _controller, runtime = open_app(auto_review=False)  # an approved plan stops once implemented
    plans = [_proposal(runtime, "Add a word frequency report", "word-frequency"),
             _verdict(runtime, "Add a sentence count", "sentence-count")]
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        for index in order:
            target, other = plans[index], plans[1 - index]
            target_before, other_before = _state(runtime, target), _state(runtime, other)
            while _focused_plan(app) != target:  # f2 walks the queue until the card is the one wanted
                before = _focused_plan(app)
                await pilot.press("f2")
                await until(pilot, lambda before=before: _focused_plan(app) not in (None, before), "f2 to move")
            await armed(pilot, app)
            await pilot.press(key)
            await until(pilot, lambda target=target, was=target_before: _state(runtime, target) != was,
                        f"plan {target} decided")
            await settle(pilot, app)
            assert _state(runtime, other) == other_before, f"the key for plan {target} moved plan {other}"
        proposal_state, verdict_state = _state(runtime, plans[0]), _state(runtime, plans[1])
        if key == "h":
            assert proposal_state == ("held", "approval") and verdict_state == ("held", "review")
        else:
            assert proposal_state[0] == "review", proposal_state  # approved: implemented, its review to start
            assert verdict_state == ("done", None)


async def test_f2_goes_from_an_agents_question_to_the_plans_and_back(open_app, demo_project) -> None:
    """An ACP Architect's permission question has the keys; a plan's proposal waits too: the card does not
    take the keys, f2 walks on to the plan, and from the plan back to the question the agent waits on."""
    from acp_rig import capture, with_acp_engine
    from app_harness import demo_settings

    from tunaflow_tui.widgets.permission.permission_card import PermissionCard

    settings, _log = with_acp_engine(demo_settings(demo_project), demo_project.parent / "acp",
                                     capture("claude-fake-write-allow"),
                                     subst={"/opt/scratch": str(demo_project / "notes.md")})
    app, _controller, runtime = open_app(settings=settings)
    async with app.run_test(size=(120, 40)) as pilot:
        app.composer.focus_input()
        app.composer.input.load_text("write file")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.focused, PermissionCard), "the agent's question with the keys")
        plan = _proposal(runtime, "Add a word frequency report", "word-frequency")
        runtime.plan_changed(runtime.store.get_plan(plan))
        await until(pilot, lambda: app.decision_dock.card_for(plan) is not None, "the plan's card in the dock")
        await until(pilot, lambda: any(f"Plan {plan} waits for you too" in n.message for n in posted(app)),
                    "the toast naming the plan that arrived")
        assert isinstance(app.focused, PermissionCard), "the plan's card took the keys from the question"

        await _f2_to(pilot, app, plan)  # from the question, f2 walks on to the plan
        await pilot.press("f2")  # and back to the question the agent's turn waits on
        await until(pilot, lambda: isinstance(app.focused, PermissionCard), "the question again")


OTHER_PROCESS = """
import sys
from pathlib import Path
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import Abandon
from tunaflow_tui.core.workflow.service import WorkflowService
with Store.open(Path(sys.argv[1]), claim_ownership=False) as store:
    WorkflowService(store).apply(int(sys.argv[2]), Abandon("done elsewhere"), actor="user")
"""


async def test_a_plan_decided_by_another_process_leaves_the_queue_and_the_keys_stay(open_app, demo_project) -> None:
    """Another tunaflow process abandons plan B while the user is on plan A's card: the dock stops counting B,
    A keeps the keys, and A's key decides A."""
    import subprocess
    import sys

    app, _controller, runtime = open_app()
    first = _proposal(runtime, "Add a word frequency report", "word-frequency")
    second = _proposal(runtime, "Add a sentence count", "sentence-count")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await _f2_to(pilot, app, first)
        await armed(pilot, app)
        await until(pilot, lambda: _dock_line(app).startswith(f"2 decisions waiting · Plan {first} waiting"),
                    "the dock counting two")
        subprocess.run([sys.executable, "-c", OTHER_PROCESS, str(demo_project), str(second)], check=True, timeout=60)
        await until(pilot, lambda: _dock_line(app).startswith(f"Plan {first} waiting: a approve"),
                    "the dock following the other process")
        assert _focused_plan(app) == first
        await pilot.press("h")
        await until(pilot, lambda: _state(runtime, first)[0] == "held", "plan A held")
        assert _state(runtime, second)[0] == "abandoned"


async def test_the_dock_line_says_a_held_plan_is_held(open_app) -> None:
    app, _controller, runtime = open_app()
    held_review = _verdict(runtime, "Add a sentence count", "sentence-count")
    runtime.service.apply(held_review, Hold(), actor="user")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await _f2_to(pilot, app, held_review)
        await armed(pilot, app)
        await until(pilot, lambda: _dock_line(app).startswith(f"Plan {held_review} review held: a accept"),
                    "the dock line saying the review is held")
