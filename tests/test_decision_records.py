"""The record says what was decided: `tunaflow status`, `tunaflow export` and the workflow timeline name an
accept over a failed review, an accept of an incomplete review, an abandon with its reason, and an edit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tunaflow_cli import tunaflow

from tunaflow_tui.controllers import plan_views
from tunaflow_tui.core.proposal_editing import EditedProposal, EditedSubtask
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import (
    Abandon,
    AcceptOverride,
    AcceptPartial,
    Approve,
    DevStalled,
    ImplementationReported,
    ReviewFinished,
    ReviewStarted,
    SeatResult,
    aggregate,
)
from tunaflow_tui.core.workflow.service import WorkflowService


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``tunaflow ARGS`` in this process (``tunaflow_cli``; test_status_cli and test_export run it as its own)."""
    return tunaflow(args)


def reviewed(service: WorkflowService, title: str, *verdicts: str | None) -> int:
    plan_id = service.create_plan_from_proposal(title=title, slug=title.lower().replace(" ", "-"),
                                                subtasks=[("Do it", "")]).id
    service.apply(plan_id, Approve(), actor="user")
    service.apply(plan_id, ImplementationReported(), actor="agent")
    service.apply(plan_id, ReviewStarted(), actor="system")
    seats = [SeatResult(seat=name, engine="demo", verdict=v, error=None if v else "401 Unauthorized")  # type: ignore[arg-type]
             for name, v in zip(("reviewer", "verifier"), verdicts, strict=False)]
    service.apply(plan_id, ReviewFinished(aggregate(seats)), actor="agent")
    return plan_id


def seed(project: Path) -> dict[str, int]:
    with Store.open(project) as store:
        service = WorkflowService(store)
        override = reviewed(service, "Override", "fail", "pass")
        service.apply(override, AcceptOverride(reason="the failing check is flaky"), actor="user")
        partial = reviewed(service, "Partial", "pass", None)
        service.apply(partial, AcceptPartial(), actor="user")
        dropped = service.create_plan_from_proposal(title="Dropped", slug="dropped", subtasks=[("x", "")]).id
        service.apply(dropped, Approve(), actor="user")
        service.apply(dropped, DevStalled("stopped"), actor="system")
        service.apply(dropped, Abandon("superseded by plan 1"), actor="user")
        edited = service.create_plan_from_proposal(title="Edited", slug="edited", subtasks=[("Old step", "")]).id
        service.edit_proposal(edited, EditedProposal("Edited", (EditedSubtask("New step"), EditedSubtask("More"))))
    return {"override": override, "partial": partial, "dropped": dropped, "edited": edited}


OVERRIDE = "accepted over a failed review: the failing check is flaky"
PARTIAL = "accepted with an incomplete review (1 of 2 seats)"
DROPPED = "abandoned: superseded by plan 1"


def test_status_says_how_each_plan_ended(tmp_path: Path) -> None:
    ids = seed(tmp_path)
    text = cli("status", str(tmp_path))
    assert text.returncode == 0, text.stderr
    for outcome in (OVERRIDE, PARTIAL, DROPPED):
        assert f"outcome: {outcome}" in text.stdout
    doc = json.loads(cli("status", str(tmp_path), "--json").stdout)
    outcomes = {p["id"]: p["outcome"] for p in doc["plans"]}
    assert outcomes[ids["override"]] == {"kind": "accepted_over_failed_review", "text": OVERRIDE,
                                         "reason": "the failing check is flaky"}
    assert outcomes[ids["partial"]]["kind"] == "accepted_partial_review"
    assert outcomes[ids["partial"]]["text"] == PARTIAL
    assert outcomes[ids["dropped"]]["text"] == DROPPED and outcomes[ids["edited"]] is None


def test_export_names_the_decision_in_the_review_round_and_the_timeline(tmp_path: Path) -> None:
    ids = seed(tmp_path)
    for key, outcome in (("override", OVERRIDE), ("partial", PARTIAL), ("dropped", DROPPED)):
        out = cli("export", str(tmp_path), "--plan", str(ids[key]))
        assert out.returncode == 0, out.stderr
        assert f"- Outcome: {outcome}" in out.stdout
        assert f"· user · {outcome}" in out.stdout
    review = cli("export", str(tmp_path), "--plan", str(ids["partial"])).stdout
    assert f"Decision: {PARTIAL} by user" in review
    edited = cli("export", str(tmp_path), "--plan", str(ids["edited"])).stdout
    assert "· user · edited by you: subtask 1 reworded: “Old step” → “New step”; subtask 2 added: “More”" in edited


def test_the_workflow_timeline_says_the_same(tmp_path: Path) -> None:
    ids = seed(tmp_path)
    with Store.open(tmp_path) as store:
        texts = {}
        for key, plan_id in ids.items():
            plan = store.get_plan(plan_id)
            assert plan is not None
            texts[key] = [event.text for event in plan_views.plan_summary(store, plan, tmp_path).events]
    assert OVERRIDE in texts["override"] and PARTIAL in texts["partial"] and DROPPED in texts["dropped"]
    assert any(text.startswith("edited by you: ") for text in texts["edited"])
