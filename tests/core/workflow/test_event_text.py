"""Every plan event reads as a sentence — the timeline, `tunaflow status` and `tunaflow export` share them."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.workflow.event_text import event_text
from tunaflow_tui.core.workflow.phases import PlanEventType


@pytest.mark.parametrize("kind", list(PlanEventType))
def test_every_event_type_has_its_own_sentence(kind: PlanEventType) -> None:
    for detail in ({}, {"round": 2, "revision": 1, "role": "developer", "status": "done", "paths": ["a.py"]}):
        text = event_text(kind, detail)
        assert text and "_" not in text, text  # a sentence, never the id


@pytest.mark.parametrize(("kind", "detail", "sentence"), [
    ("proposal_received", {"revision": 0, "subtask_count": 3}, "proposal received (revision 1, 3 subtasks)"),
    ("approved", {"revision": 1}, "approved revision 2"),
    ("revision_requested", {"revision": 1, "feedback": "split the\nparser"}, "asked for revision 2: split the parser"),
    ("redesign_requested", {"revision": 2, "feedback": ""}, "redesign requested (revision 3)"),
    ("review_finished", {"round": 1, "verdict": "pass"}, "review round 1: pass"),
    ("review_failed", {"round": 2, "failures_since_reset": 1}, "review round 2 failed (1 failed review in a row)"),
    ("seat_finished", {"round": 1, "seat": {"seat": "verifier", "engine": "codex", "verdict": None,
                                            "error": "timed out"}}, "verifier (codex) gave no verdict: timed out"),
    ("tests_ran", {"status": "passed", "summary": "3 passed in 0.01s"}, "tests passed: 3 passed in 0.01s"),
    ("tests_ran", {"status": "not_detected"}, "no test command found: the reviewers are told so"),
    ("agent_started", {"role": "review", "round": 1, "seats": ["reviewer", "verifier"]},
     "reviewer, verifier reading the work (review round 1)"),
    ("agent_started", {"role": "review", "round": 2, "seats": []}, "review round 2: every reviewer had answered"),
    ("agent_finished", {"role": "developer", "status": "cancelled"}, "the Developer: cancelled by you"),
    ("merged", {"kind": "fast-forward"}, "merged (fast-forward)"),
    ("merge_conflict", {"conflicted_files": ["a.py"]}, "not merged: conflicts in 1 file"),
    ("merge_conflict", {"files": ["a.py", "b.py"]}, "not merged: conflicts in 2 files"),
    ("doom_loop_escalated", {"answer": "redesign", "failures": 3}, "after 3 failed reviews in a row: redesign"),
])
def test_sentences_read_as_the_user_sees_the_plan(kind: str, detail: dict[str, object], sentence: str) -> None:
    assert event_text(kind, detail) == sentence


def test_a_review_round_reads_as_started_once() -> None:
    started = event_text("review_started", {"round": 1})
    reading = event_text("agent_started", {"role": "review", "round": 1, "seats": ["reviewer", "verifier"]})
    assert started == "review round 1 started"
    assert "started" not in reading and reading.startswith("reviewer, verifier"), "one start, then who reads"


def test_an_event_of_a_newer_version_still_reads() -> None:
    assert event_text("branch_renamed", {"x": 1}) == "branch renamed"
    assert event_text("subtask_done", {"index": "1"}) == "subtask 1 done"
