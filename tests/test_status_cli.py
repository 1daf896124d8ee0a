"""`tunaflow status` shows plans, pending decisions and branches, and never creates `.tunaflow/`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tunaflow_cli import tunaflow

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import (
    Approve,
    Hold,
    ImplementationReported,
    ReviewFinished,
    ReviewStarted,
    SeatResult,
    SetupFailed,
    aggregate,
)
from tunaflow_tui.core.workflow.service import WorkflowService


def status(*args: str, cwd: Path | None = None, in_process: bool = True) -> subprocess.CompletedProcess[str]:
    """``tunaflow status ARGS``, in this process (``tunaflow_cli``) unless ``in_process`` is False."""
    return tunaflow(["status", *args], cwd=cwd, in_process=in_process)


def seed(project: Path) -> dict[str, int]:
    """Three plans: one at the approval gate, one in review with a failed verdict, one held."""
    with Store.open(project) as store:
        service = WorkflowService(store)
        waiting = service.create_plan_from_proposal(
            title="Add OAuth", slug="add-oauth", subtasks=[("Client", "a"), ("Callback", "b")]
        ).id
        reviewed = service.create_plan_from_proposal(
            title="로그인 수정", slug="plan-2", subtasks=[("Repro", "a"), ("Fix", "b")]
        ).id
        impl = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                   mode="chat", kind="implementation", label="tunaflow/plan-2")
        store.update_plan(reviewed, impl_branch_id=impl.id)
        service.apply(reviewed, Approve(), actor="user")
        service.mark_subtask_done(reviewed, 1)
        service.apply(reviewed, ImplementationReported(), actor="agent")
        service.apply(reviewed, ReviewStarted(), actor="system")
        failed = aggregate([SeatResult(seat="reviewer", engine="demo", verdict="fail", findings=("No test",))])
        service.apply(reviewed, ReviewFinished(failed), actor="system")
        held = service.create_plan_from_proposal(title="Later", slug="later").id
        service.apply(held, Hold(), actor="user")
    return {"waiting": waiting, "reviewed": reviewed, "held": held, "impl": impl.id}


def test_no_project_state_prints_empty_lists_and_creates_nothing(tmp_path: Path) -> None:
    out = status("--json", cwd=tmp_path, in_process=False)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"project": str(tmp_path.resolve()), "plans": [], "branches": [],
                                      "session_links": []}
    assert not (tmp_path / ".tunaflow").exists()
    short = status("--short", str(tmp_path))
    assert short.returncode == 0 and short.stdout.strip() == "tunaflow: 0 plans"
    assert status(str(tmp_path)).returncode == 0
    assert list(tmp_path.iterdir()) == []


def test_json_lists_plans_with_subtasks_failures_decisions_and_branches(git_repo: Path) -> None:
    ids = seed(git_repo)
    out = status(str(git_repo), "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["project"] == str(git_repo.resolve())
    plans = {p["id"]: p for p in doc["plans"]}
    waiting, reviewed, held = plans[ids["waiting"]], plans[ids["reviewed"]], plans[ids["held"]]
    assert (waiting["title"], waiting["slug"], waiting["phase"]) == ("Add OAuth", "add-oauth", "approval")
    assert waiting["pending_decision"]["kind"] == "approval"
    assert waiting["subtasks"] == [{"index": 1, "title": "Client", "status": "pending"},
                                   {"index": 2, "title": "Callback", "status": "pending"}]
    assert reviewed["title"] == "로그인 수정" and reviewed["phase"] == "review"
    assert reviewed["failures_since_reset"] == 1
    assert reviewed["pending_decision"]["kind"] == "review"
    assert reviewed["pending_decision"]["detail"]["verdict"] == "fail"
    assert [s["status"] for s in reviewed["subtasks"]] == ["done", "pending"]
    assert reviewed["implementation_branch_id"] == ids["impl"] and reviewed["review_branch_id"] is None
    assert held["phase"] == "held" and held["pending_decision"]["kind"] == "approval"
    assert held["pending_decision"]["held"] is True and waiting["pending_decision"]["held"] is False
    assert held["waiting"]["for_you"] and held["waiting"]["held"]
    assert held["waiting"]["decisions"][0] == "approve" and "resume" in held["waiting"]["decisions"]
    [branch] = doc["branches"]
    assert {k: branch[k] for k in ("id", "label", "kind", "mode", "status", "parent_branch_id", "context_source")} \
        == {"id": ids["impl"], "label": "tunaflow/plan-2", "kind": "implementation", "mode": "chat",
            "status": "active", "parent_branch_id": None, "context_source": None}


def test_short_line_for_tmux_names_the_decision_f2_reaches_first(git_repo: Path) -> None:
    seed(git_repo)
    out = status(str(git_repo), "--short")
    assert out.returncode == 0, out.stderr
    # the first plan's proposal has waited longest: the queue (and f2) starts there; the held plan comes last
    assert out.stdout.strip() == 'tunaflow: 3 plans · 3 waiting (approve "Add OAuth", +2)'


def test_readable_listing(git_repo: Path) -> None:
    seed(git_repo)
    out = status(cwd=git_repo)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Add OAuth" in text and "[add-oauth]" in text and "waiting for you: approve" in text
    assert "[x] 1. Repro" in text and "[ ] 2. Fix" in text
    assert "waiting for you: review (verdict: fail)" in text
    assert "failures since reset: 1" in text
    assert "held (from approval)" in text and "waiting for you: approve (on hold)" in text
    held_line = next(line for line in text.splitlines() if "waiting for you: approve (on hold)" in line)
    assert held_line.count("on hold") == 1, f"said twice: {held_line}"
    assert "tunaflow/plan-2" in text and "implementation" in text


def test_missing_directory_is_an_error(tmp_path: Path) -> None:
    out = status(str(tmp_path / "nope"))
    assert out.returncode == 2 and "not a directory" in out.stderr


def test_a_failed_worktree_setup_is_listed_as_waiting(git_repo: Path) -> None:
    with Store.open(git_repo) as store:
        service = WorkflowService(store)
        plan = service.create_plan_from_proposal(title="Add OAuth", slug="add-oauth").id
        service.apply(plan, Approve(), actor="user")
        service.apply(plan, SetupFailed("the worktree setup failed: exited with code 3", "npm ci"), actor="system")
    short = status(str(git_repo), "--short")
    assert short.returncode == 0, short.stderr
    assert short.stdout.strip() == 'tunaflow: 1 plan · 1 waiting (setup failed "Add OAuth")'
    listing = status(str(git_repo))
    assert listing.returncode == 0 and "waiting for you: setup failed" in listing.stdout


HOSTILE = "Fix\x9b2J\x1b]0;pwned\x07 login\u202eevil\x85"


def test_json_carries_no_control_or_bidi_characters_from_agent_text(git_repo: Path) -> None:
    """Titles, subtasks, findings and labels come from agents; a JSON consumer printing them stays safe."""
    with Store.open(git_repo) as store:
        service = WorkflowService(store)
        plan = service.create_plan_from_proposal(title=HOSTILE, slug="fix-login", subtasks=[(HOSTILE, "d")]).id
        service.apply(plan, Approve(), actor="user")
        service.apply(plan, ImplementationReported(), actor="agent")
        service.apply(plan, ReviewStarted(), actor="system")
        verdict = aggregate([SeatResult(seat="reviewer", engine="demo", verdict="fail", findings=(HOSTILE,))])
        service.apply(plan, ReviewFinished(verdict), actor="system")
        store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                           mode="chat", kind="general", label=HOSTILE)
    out = status(str(git_repo), "--json")
    assert out.returncode == 0, out.stderr
    raw = out.stdout
    for bad in ("\x1b", "\x07", "\x9b", "\x85", "\u202e", "\\u001b", "\\u0007"):
        assert bad not in raw, f"{bad!r} reached the output"
    doc = json.loads(raw)
    [entry] = doc["plans"]
    clean = "Fix loginevil"  # what every other output path shows for it
    assert entry["title"] == clean and entry["subtasks"][0]["title"] == clean
    assert entry["pending_decision"]["detail"]["aggregate"]["findings"] == [clean]
    assert doc["branches"][0]["label"] == clean


def test_status_says_how_much_of_the_project_is_embedded(tmp_path: Path) -> None:
    from tunaflow_tui.subcommands.status_command import collect, render_text

    with Store.open(tmp_path) as store:
        store.add_message("main", "user", "one")
        store.add_message("main", "user", "two")
    document, _pending = collect(tmp_path)
    assert document["memory"] == {"messages": 2, "embedded": 0}
    assert "Memory: 0 of 2 finished messages embedded for search by meaning" in render_text(document)


def test_every_plan_in_flight_is_marked_with_its_phase_decision_and_cost(git_repo: Path) -> None:
    from tunaflow_tui.core.turns import Usage
    from tunaflow_tui.core.workflow import Abandon

    ids = seed(git_repo)
    with Store.open(git_repo) as store:
        service = WorkflowService(store)
        gone = service.create_plan_from_proposal(title="Dropped idea", slug="dropped").id
        service.apply(gone, Abandon(reason="no"), actor="user")
        for cost in (0.0125, 0.0250):
            reply = store.add_message(f"branch:{ids['impl']}", "assistant", "Implemented.", persona="developer")
            store.update_message(reply.id, status="done", usage=Usage(1000, 200, 0, cost))
    doc = json.loads(status("--json", cwd=git_repo).stdout)
    plans = {p["id"]: p for p in doc["plans"]}
    assert [p["id"] for p in doc["plans"] if p["in_flight"]] == [ids["waiting"], ids["reviewed"], ids["held"]]
    assert plans[gone]["in_flight"] is False
    assert (plans[ids["reviewed"]]["phase"], plans[ids["reviewed"]]["pending_decision"]["kind"]) == ("review", "review")
    assert plans[ids["reviewed"]]["cost_usd"] == 0.0375
    assert plans[ids["waiting"]]["cost_usd"] is None, "no cost recorded: none shown"
    text = status(cwd=git_repo).stdout
    assert "Plans (4, 3 in flight)" in text and "cost: $0.0375" in text


def test_a_plan_waiting_for_a_place_says_queued_and_its_place_in_line(git_repo: Path) -> None:
    from tunaflow_tui.core.workflow import Approve
    from tunaflow_tui.core.workflow.phases import PlanEventType

    with Store.open(git_repo) as store:  # two plans approved over max_parallel_plans: both wait, in this order
        service = WorkflowService(store)
        first, second = (service.create_plan_from_proposal(title=title, slug=slug).id
                         for title, slug in (("Cache the counts", "cache"), ("Count sentences", "sentences")))
        for plan_id in (second, first):
            service.apply(plan_id, Approve(), actor="user")
            service.record(plan_id, PlanEventType.PLAN_QUEUED, "system", {"working": 3, "limit": 3})
        service.record(second, PlanEventType.QUEUE_LEFT, "system", {"why": "started"})  # its place came
    plans = {p["id"]: p for p in json.loads(status("--json", cwd=git_repo).stdout)["plans"]}
    assert (plans[first]["queued"], plans[second]["queued"]) == (1, None)
    assert "queued: number 1 in line — starts by itself when a place frees" in status(cwd=git_repo).stdout
