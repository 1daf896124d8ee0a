"""Which plan a turn is about when several are in flight: the Architect is told them all, a proposal
says which plan it revises (or is a new plan), and the user can point a message at a plan with ``#N``.

The stand-in Architect speaks claude's stream-json; each prompt it receives is logged, so the pack
tests read exactly what the agent got. Plans are seeded in their phase through the workflow service.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from proposals import proposal
from runtime_harness import PROPOSAL, Harness
from seeded_plans import reviewed, seat
from waiting import until

from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.workflow import Abandon, Approve, RequestRevision
from tunaflow_tui.runtime.events import NoticeRaised, RuntimeEvent
from tunaflow_tui.runtime.plans_in_flight import plan_pointer, pointed_at
from tunaflow_tui.runtime.runtime import RuntimeError_, WorkflowRuntime

IN_FLIGHT = "## Plans in flight"
MUL = "Add multiplication to calc"  # PROPOSAL's title


@pytest.fixture
def rt(harness: Harness, tmp_path: Path) -> Iterator[WorkflowRuntime]:
    missing = Embedder(env={"TUNAFLOW_EMBEDDING_MODEL": str(tmp_path / "none.onnx")})  # full text: deterministic
    runtime = WorkflowRuntime(harness.project, harness.settings(), embedder=missing)
    yield runtime
    runtime.close()


def _architect_turns(h: Harness) -> list[dict[str, Any]]:
    return [call for call in h.calls() if call["role"] == "architect"]


def _seed(rt: WorkflowRuntime, title: str, *, approve: bool = False) -> int:
    """A plan at the approval gate (approved: its Developer's phase), without any agent turn."""
    slug = title.lower().replace(" ", "-")
    plan_id = rt.service.create_plan_from_proposal(title=title, slug=slug, subtasks=[("First step", "")]).id
    if approve:
        rt.service.apply(plan_id, Approve(), actor="user")
    return plan_id


def _notices(rt: WorkflowRuntime) -> list[str]:
    seen: list[str] = []

    def keep(event: RuntimeEvent) -> None:
        if isinstance(event, NoticeRaised):
            seen.append(event.text)

    rt.subscribe(keep)
    return seen


# -- the pack names every plan in flight ------------------------------------------------------------


async def test_the_architect_is_told_every_plan_in_flight_on_a_fresh_and_a_resumed_session(
        harness: Harness, rt: WorkflowRuntime) -> None:
    harness.set_script(architect=[{"text": "Noted."}])
    waiting = _seed(rt, "Add a CSV export")
    working = _seed(rt, "Speed up the search", approve=True)
    finished = _seed(rt, "Fix the typo", approve=True)
    rt.service.apply(finished, Abandon(reason="not needed"), actor="user")

    await rt.send_user_message("What is left to do?")
    fresh = _architect_turns(harness)[-1]
    assert "--resume" not in fresh["argv"]
    listed = fresh["prompt"].split(IN_FLIGHT, 1)[1].split("\n## ", 1)[0]
    assert f"#{waiting} “Add a CSV export” — phase approval, waits on you: approve" in listed
    assert f"#{working} “Speed up the search” — phase dev, waits on the Developer at work" in listed
    assert "Fix the typo" not in listed, "an abandoned plan is not in flight"
    assert "revises: #N" in listed, "how to name the plan a proposal revises"

    rt.service.apply(waiting, Approve(), actor="user")  # phases move between two turns
    await rt.send_user_message("And now?")
    resumed = _architect_turns(harness)[-1]
    assert "--resume" in resumed["argv"], "the second turn resumes the Architect's session"
    listed = resumed["prompt"].split(IN_FLIGHT, 1)[1].split("\n## ", 1)[0]
    assert f"#{waiting} “Add a CSV export” — phase dev, waits on the Developer at work" in listed, \
        "a resumed session is told where each plan is now"
    assert resumed["prompt"].rstrip().endswith("And now?")


async def test_without_a_plan_in_flight_the_pack_has_no_such_section(harness: Harness,
                                                                     rt: WorkflowRuntime) -> None:
    harness.set_script(architect=[{"text": "Noted."}])
    await rt.send_user_message("Hello")
    assert IN_FLIGHT not in _architect_turns(harness)[-1]["prompt"]


# -- which plan a proposal revises -------------------------------------------------------------------


async def test_a_proposal_naming_a_plan_revises_that_plan_not_the_newest(harness: Harness,
                                                                          rt: WorkflowRuntime) -> None:
    first = _seed(rt, "Add a CSV export")
    second = _seed(rt, "Speed up the search")
    harness.set_script(architect=[{"text": proposal("Add a CSV and JSON export", "CSV", "JSON", revises=first)}])
    await rt.send_user_message("Please export JSON too.")
    plans = {p.id: p for p in rt.store.list_plans()}
    assert set(plans) == {first, second}, "no new plan"
    assert plans[first].title == "Add a CSV and JSON export"
    assert [s.title for s in plans[first].subtasks] == ["CSV", "JSON"]
    assert plans[first].pending_decision == "approval" and plans[first].revision == 1
    assert plans[second].title == "Speed up the search" and plans[second].revision == 0


async def test_a_plain_messages_proposal_titled_as_a_plan_at_the_approval_gate_is_a_new_plan(
        harness: Harness, rt: WorkflowRuntime) -> None:
    """Only the user sends a plan back from its gate (``r``, or a ``#N`` message): a plain message did not."""
    mul = _seed(rt, MUL)
    other = _seed(rt, "Speed up the search")
    harness.set_script(architect=[{"text": PROPOSAL}])
    await rt.send_user_message("Mul needs a test file of its own.")
    plans = {p.id: p for p in rt.store.list_plans()}
    [new] = set(plans) - {mul, other}
    assert plans[new].title == MUL and plans[new].pending_decision == "approval" and plans[new].revision == 0
    assert [s.title for s in plans[mul].subtasks] == ["First step"], "the waiting plan keeps its version"
    assert (plans[mul].pending_decision, plans[mul].revision) == ("approval", 0)
    assert "revision_requested" not in [e.type for e in rt.store.list_plan_events(mul)], "nothing sent it back"
    assert plans[new].slug != plans[mul].slug


async def test_a_proposal_titled_as_a_plan_sent_back_for_a_revision_revises_that_one(
        harness: Harness, rt: WorkflowRuntime) -> None:
    """Two plans wait for the Architect's new version (both sent back with ``r``): the title says which."""
    mul = _seed(rt, MUL)
    other = _seed(rt, "Speed up the search")
    for plan_id in (mul, other):
        rt.service.apply(plan_id, RequestRevision(feedback="smaller steps"), actor="user")
    harness.set_script(architect=[{"text": PROPOSAL}])
    await rt.send_user_message("Mul needs a test file of its own.")
    plans = {p.id: p for p in rt.store.list_plans()}
    assert set(plans) == {mul, other}, "no new plan"
    assert [s.title for s in plans[mul].subtasks] == ["Add `mul(a, b)` to calc.py", "Test `mul` in tests/test_mul.py"]
    assert (plans[mul].pending_decision, plans[mul].revision) == ("approval", 1)
    assert plans[other].phase == "drafting", "the other still waits for its own new version"


async def test_a_proposal_with_a_new_title_is_a_new_plan_beside_the_others(harness: Harness,
                                                                            rt: WorkflowRuntime) -> None:
    first = _seed(rt, "Add a CSV export")
    working = _seed(rt, "Speed up the search", approve=True)
    harness.set_script(architect=[{"text": proposal("Add dark mode")}])
    await rt.send_user_message("Dark mode, please.")
    plans = rt.store.list_plans()
    assert [p.title for p in plans] == ["Add a CSV export", "Speed up the search", "Add dark mode"]
    assert [p.phase for p in plans if p.id in (first, working)] == ["approval", "dev"]


async def test_a_revision_of_a_plan_in_development_is_refused_and_nothing_changes(
        harness: Harness, rt: WorkflowRuntime) -> None:
    working = _seed(rt, "Speed up the search", approve=True)
    notices = _notices(rt)
    harness.set_script(architect=[{"text": proposal("Speed up search and sort", revises=working)},
                                  {"text": "Understood."}])
    await rt.send_user_message("Sort the results too.")
    [plan] = rt.store.list_plans()
    assert (plan.id, plan.phase, plan.title) == (working, "dev", "Speed up the search"), "nothing changed"
    note = [m for m in rt.store.list_messages("main") if m.role == "system"][-1].content
    assert f"revises plan {working} “Speed up the search”, but its Developer is at work on it" in note
    assert "new plan" in note
    assert any("nothing was changed" in text for text in notices), "the user is told at once"
    reply = next(m for m in rt.store.list_messages("main") if m.role == "assistant")
    assert "Speed up search and sort" in reply.content, "the proposal stays in the Architect's message"
    await rt.send_user_message("Then make it a new plan.")
    assert "its Developer is at work on it" in _architect_turns(harness)[-1]["prompt"], \
        "the Architect reads the note on its next turn"


async def test_a_revision_of_a_plan_that_does_not_exist_creates_nothing(harness: Harness,
                                                                        rt: WorkflowRuntime) -> None:
    harness.set_script(architect=[{"text": proposal("Speed up the search", revises=99)}])
    await rt.send_user_message("Faster search, please.")
    assert rt.store.list_plans() == ()
    note = [m for m in rt.store.list_messages("main") if m.role == "system"][-1].content
    assert "there is no plan 99" in note and "Nothing was created." in note


# -- the user points a message at a plan --------------------------------------------------------------


async def test_a_message_pointed_at_a_plan_centres_the_pack_on_it_and_its_proposal_revises_it(
        harness: Harness, rt: WorkflowRuntime) -> None:
    first = _seed(rt, "Add a CSV export")
    newest = _seed(rt, "Speed up the search")
    harness.set_script(architect=[{"text": proposal("Add a CSV export with headers", "Headers")}])
    await rt.send_user_message(f"#{first} the CSV needs a header row")
    prompt = _architect_turns(harness)[-1]["prompt"]
    assert "## Active plan (approval)\n\n# Add a CSV export" in prompt, "the pack shows the plan pointed at"
    plans = {p.id: p for p in rt.store.list_plans()}
    assert set(plans) == {first, newest}
    assert plans[first].title == "Add a CSV export with headers", "a plain proposal revises the plan pointed at"
    assert plans[newest].title == "Speed up the search"


async def test_the_api_points_a_message_at_a_plan_and_the_stored_message_names_it(
        harness: Harness, rt: WorkflowRuntime) -> None:
    first = _seed(rt, "Add a CSV export")
    _seed(rt, "Speed up the search")
    harness.set_script(architect=[{"text": "Noted."}])
    await rt.send_user_message("what about quoting?", plan_id=first)
    [user] = [m for m in rt.store.list_messages("main") if m.role == "user"]
    assert user.content == f"#{first} what about quoting?"
    assert "## Active plan (approval)\n\n# Add a CSV export" in _architect_turns(harness)[-1]["prompt"]


async def test_a_message_pointed_at_a_missing_plan_stores_and_sends_nothing(harness: Harness,
                                                                           rt: WorkflowRuntime) -> None:
    harness.set_script(architect=[{"text": "Noted."}])
    with pytest.raises(RuntimeError_, match="there is no plan 99"):
        await rt.send_user_message("#99 make it faster")
    with pytest.raises(RuntimeError_, match="there is no plan 7"):
        await rt.send_user_message("make it faster", plan_id=7)
    assert tuple(rt.store.list_messages("main")) == () and _architect_turns(harness) == []


async def test_a_plan_approved_by_another_process_while_the_architect_writes_keeps_its_version(
        harness: Harness, rt: WorkflowRuntime, tmp_path: Path) -> None:
    """The user approves plan 1 in another tunaflow while the Architect drafts its new version."""
    first = _seed(rt, "Add a CSV export")
    started, release = tmp_path / "started", tmp_path / "release"
    text = proposal("Add a CSV export with headers", "Headers")
    harness.set_script(architect=[{"text": text, "gate": {"after": "Here is the plan.", "started": str(started),
                                                          "release": str(release)}}])
    turn = asyncio.ensure_future(rt.send_user_message(f"#{first} the CSV needs a header row"))
    await until(None, started.exists, "the Architect to start writing")
    approve = ("import sys\nfrom pathlib import Path\nfrom tunaflow_tui.core.storage import Store\n"
               "from tunaflow_tui.core.workflow import Approve\nfrom tunaflow_tui.core.workflow.service import "
               "WorkflowService\nwith Store.open(Path(sys.argv[1])) as store:\n"
               "    WorkflowService(store).apply(int(sys.argv[2]), Approve(), actor='user')\n")
    subprocess.run([sys.executable, "-c", approve, str(harness.project), str(first)], check=True, timeout=60)
    release.write_text("go")
    await turn
    [plan] = rt.store.list_plans()
    assert (plan.phase, plan.title) == ("dev", "Add a CSV export"), "the approved version is the one developed"
    note = [m for m in rt.store.list_messages("main") if m.role == "system"][-1].content
    assert "its Developer is at work on it" in note and "was not applied" in note


# -- from the shell ------------------------------------------------------------------------------------


def _ask(h: Harness, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tunaflow_tui", "ask", str(h.project), *args],
                          capture_output=True, text=True, timeout=120)


def test_ask_with_plan_points_the_message_at_that_plan(harness: Harness) -> None:
    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.core.workflow.service import WorkflowService

    harness.write_config()
    with Store.open(harness.project) as store:
        service = WorkflowService(store)
        first = service.create_plan_from_proposal(title="Add a CSV export", slug="csv", subtasks=[("CSV", "")]).id
        service.create_plan_from_proposal(title="Speed up the search", slug="search", subtasks=[("Index", "")])
    harness.set_script(architect=[{"text": proposal("Add a CSV export with headers", "Headers")}])

    missing = _ask(harness, "the CSV needs headers", "--plan", "99")
    assert missing.returncode == 1 and "there is no plan 99" in missing.stderr, missing.stderr
    answered = _ask(harness, "the CSV needs headers", "--plan", str(first), "--json")
    assert answered.returncode == 0, answered.stderr
    assert json.loads(answered.stdout)["plan_id"] == first
    with Store.open(harness.project) as store:
        plans = store.list_plans()
        users = [m.content for m in store.list_messages("main") if m.role == "user"]
    assert [p.title for p in plans] == ["Add a CSV export with headers", "Speed up the search"]
    assert users == [f"#{first} the CSV needs headers"], "the refused message was not stored"


async def test_a_revision_of_a_plan_whose_review_waits_points_to_redesign(harness: Harness,
                                                                         rt: WorkflowRuntime) -> None:
    plan_id = reviewed(rt.store, [seat("reviewer", "fail", "No test for zero")], title="Add division to calc")
    harness.set_script(architect=[{"text": proposal("Add division to calc", "Guard zero", revises=plan_id)}])
    await rt.send_user_message("Handle division by zero.")
    plan = rt.store.get_plan(plan_id)
    assert (plan.phase, plan.pending_decision, plan.revision) == ("review", "review", 0), "the verdict still waits"
    note = [m for m in rt.store.list_messages("main") if m.role == "system"][-1].content
    assert "it is in review (choose redesign on its card to send it back to the Architect)" in note


@pytest.mark.parametrize(("text", "plan"), [
    ("#3 make it faster", 3), ("#3", 3), ("  #12\tand more", 12), ("#3\nsecond line", 3),
    ("#3x", None), ("# 3 heading", None), ("##3", None), ("see #3", None), ("#1234567", None), ("#٣ x", None),
])
def test_only_hash_and_a_number_opening_the_message_points_at_a_plan(text: str, plan: int | None) -> None:
    assert plan_pointer(text) == plan


@pytest.mark.parametrize(("draft", "pointed"), [
    ("", "#7 "), ("keep it short", "#7 keep it short"), ("#9 keep it short", "#7 keep it short"),
    ("  #9\tkeep it", "#7 keep it"), ("#9x is a tag", "#7 #9x is a tag"), ("see #9", "#7 see #9"),
])
def test_pointing_a_draft_at_a_plan_replaces_only_a_pointer_it_opened_with(draft: str, pointed: str) -> None:
    assert pointed_at(draft, 7) == pointed
