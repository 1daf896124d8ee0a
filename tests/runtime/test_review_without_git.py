"""A project that is not a git repository: the reviewers' writes are undone, or the review refuses to start."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from runtime_harness import MUL, PROPOSAL, TEST_MUL, Harness, dev_turn, verdict

from tunaflow_tui.core import folderguard
from tunaflow_tui.runtime.events import NoticeRaised, RuntimeEvent
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _plain(h: Harness) -> Path:
    plain = h.root / "plain-calc"
    shutil.copytree(h.project, plain, ignore=shutil.ignore_patterns(".git"))
    return plain


async def _reviewed(h: Harness, project: Path, events: list[RuntimeEvent]) -> tuple[WorkflowRuntime, int]:
    rt = WorkflowRuntime(project, h.settings(), observer=events.append)
    assert not rt.is_git
    await rt.send_user_message("Please add multiplication")
    [plan] = rt.store.list_plans()
    await rt.decide(plan.id, "approve")
    return rt, plan.id


async def test_a_reviewers_writes_in_a_plain_folder_are_reverted_and_reported(harness: Harness) -> None:
    plain = _plain(harness)
    harness.set_script(
        architect=[{"text": PROPOSAL}],
        developer=[dev_turn()],
        reviewer=[{"text": verdict("pass"), "write": {"calc.py": "def mul(a, b):\n    return 0\n",
                                                       "REVIEW-NOTES.md": "I fixed it myself\n"},
                   "delete": ["tests/test_mul.py"]}],
        verifier=[{"text": verdict("pass", "tests cover mul")}],
    )
    events: list[RuntimeEvent] = []
    rt, plan_id = await _reviewed(harness, plain, events)
    try:
        plan = rt.get_plan(plan_id)
        assert plan.pending_decision == "review" and plan.pending_detail["verdict"] == "pass"
        assert (plain / "calc.py").read_text() == MUL, "the Developer's code is back"
        assert (plain / "tests" / "test_mul.py").read_text() == TEST_MUL
        assert not (plain / "REVIEW-NOTES.md").exists()
        [event] = [e.detail for e in rt.store.list_plan_events(plan_id) if e.type == "reviewer_modified_code"]
        assert list(event["paths"]) == ["REVIEW-NOTES.md", "calc.py", "tests/test_mul.py"]
        assert any("reverted" in e.text for e in events if isinstance(e, NoticeRaised))
    finally:
        rt.close()


async def test_a_plain_folder_too_big_to_copy_refuses_the_review_and_says_why(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _plain(harness)
    monkeypatch.setattr(folderguard, "DEFAULT_MAX_FILES", 3)
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass"), "write": {"calc.py": "broken\n"}}],
                       verifier=[{"text": verdict("pass")}])
    events: list[RuntimeEvent] = []
    rt, plan_id = await _reviewed(harness, plain, events)
    try:
        plan = rt.get_plan(plan_id)
        assert plan.pending_decision == "review_error"
        errors = [seat["error"] for seat in plan.pending_detail["aggregate"]["seats"]]
        assert errors and all("did not start" in e and "too big to snapshot" in e and "git" in e for e in errors)
        assert not [c for c in harness.calls() if c["role"] in ("reviewer", "verifier")], "no reviewer ran unguarded"
        assert (plain / "calc.py").read_text() == MUL
    finally:
        rt.close()
