"""What an export says, whole and to the character (in process: the Markdown a person reads and shares)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from export_seeds import seed_conversation, seed_plan

from tunaflow_tui.core.exporting import ExportError, export_conversation, export_plan, find_plan
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.turns import Usage
from tunaflow_tui.core.workflow import (
    Abandon,
    Approve,
    Hold,
    ImplementationReported,
    RetryReview,
    ReviewFinished,
    ReviewStarted,
    Rework,
    SeatResult,
    aggregate,
)
from tunaflow_tui.core.workflow.service import WorkflowService

WHEN = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
LONG_ERROR = "x " * 300

CONVERSATION = """\
# Main conversation

Project: <name> (`<project>`)
Messages: 8

---

## You

*WHEN*

Please count words in 한국어 text

---

## Architect · claude · sonnet

*WHEN*

Here is my plan.

## Title
Count words

---

## Architect · codex

*WHEN*

Half an answer

> **Interrupted: this answer stopped before it finished; the text above is what arrived.**

---

## Developer · gemini

*WHEN*

*(no text)*

> **Error (timeout)**: no output for 600 s

---

## Reviewer · claude

*WHEN*

beforeafter

---

## Assistant · eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee…

*WHEN*

Counted.

*12,345 tokens in · 678 out · 9,000 cached · $0.0123*

---

## System

*WHEN*

Adopted branch 1.

---

## Reviewer · claude

*WHEN*

*(no text)*

> **Error (error)**: <long error>
"""

BRANCH = """\
# Branch #1: tunaflow/count-words

Project: <name> (`<project>`)
Kind: implementation · mode: chat · status: active
Messages: 1

---

## Developer · demo

*WHEN*

Implemented the parser.
"""

PLAN = """\
# Plan #1: Count words

- Phase: rework
- Slug: `count-words`
- Revision: 0 · review rounds: 1
- Git branch: `tunaflow/count-words` (base `main`)
- Created: WHEN · updated: WHEN

## Subtasks (1/2 done)

- [x] 1. Parser
      split on spaces
- [ ] 2. CLI flag

## Description

Add a `words` command.

## Review rounds

### Round 1: fail

*WHEN*

Scores: code_quality 2.0

Findings:

- No test for empty input

Recommendations:

- Add a test

Review errors (not counted as a fail): verifier

Seats:

- **reviewer** (claude): fail
  - scores: code_quality 2
  - finding: No test for empty input
  - recommendation: Add a test
- **verifier** (codex): review error: timed out

Decision: rework requested after review round 1: Please add the test by user, WHEN

## Branches

- Implementation: #1 tunaflow/count-words (active, git `tunaflow/count-words`; conversation `branch:1`)
- Review: none

## Timeline (10 events)

- WHEN · agent · proposal received (revision 1, 2 subtasks)
- WHEN · user · approved revision 1
- WHEN · system · development started on revision 1
- WHEN · agent · subtask 1 done
- WHEN · agent · the Developer reported the work complete
- WHEN · system · review round 1 started
- WHEN · system · review round 1: fail
- WHEN · system · review round 1: no verdict from verifier
- WHEN · system · review round 1 failed (1 failed review in a row)
- WHEN · user · rework requested after review round 1: Please add the test
"""


def _shown(text: str, project: Path) -> str:
    """The export with each moment written as WHEN, and the project's path and name as placeholders."""
    return WHEN.sub("WHEN", text).replace(str(project), "<project>").replace(project.name, "<name>")


def _seeded(project: Path) -> None:
    seed_conversation(project)
    seed_plan(project)
    with Store.open(project) as store:
        counted = store.add_message("main", "assistant", "Counted.", persona=None, engine="e" * 70)
        store.update_message(counted.id, usage=Usage(input_tokens=12345, output_tokens=678, cached_tokens=9000,
                                                     cost_usd=0.012345))
        store.add_message("main", "system", "Adopted branch 1.")
        failed = store.add_message("main", "assistant", "", persona="reviewer", engine="claude")
        store.update_message(failed.id, status="error", error_message=LONG_ERROR)


def test_the_conversation_export_reads_exactly_so(tmp_path: Path) -> None:
    _seeded(tmp_path)
    with Store.open(tmp_path) as store:
        text = export_conversation(store)
        assert export_conversation(store, "main") == text
    long_error = ("x " * 250)[:499] + "…"
    assert _shown(text, tmp_path) == CONVERSATION.replace("<long error>", long_error)


def test_a_branch_conversation_reads_exactly_so_by_number_or_name(tmp_path: Path) -> None:
    _seeded(tmp_path)
    with Store.open(tmp_path) as store:
        assert _shown(export_conversation(store, "1"), tmp_path) == BRANCH
        assert _shown(export_conversation(store, "branch:1"), tmp_path) == BRANCH


def test_the_plan_export_reads_exactly_so_by_number_or_slug(tmp_path: Path) -> None:
    _seeded(tmp_path)
    with Store.open(tmp_path) as store:
        assert _shown(export_plan(store, "1"), tmp_path) == PLAN
        assert _shown(export_plan(store, "count-words"), tmp_path) == PLAN
        assert find_plan(store, "count-words").id == 1


def test_what_does_not_exist_is_named_with_what_does(tmp_path: Path) -> None:
    _seeded(tmp_path)
    with Store.open(tmp_path) as store:
        with pytest.raises(ExportError) as plan:
            export_plan(store, "7")
        assert str(plan.value) == "there is no plan '7'; this project has plans: 1 (count-words)"
        with pytest.raises(ExportError) as conversation:
            export_conversation(store, "branch:9")
        assert str(conversation.value) == "there is no conversation 'branch:9'; this project has: main, branch:1"


def test_asking_for_a_plan_before_there_is_one_says_so(tmp_path: Path) -> None:
    seed_conversation(tmp_path)
    with Store.open(tmp_path) as store, pytest.raises(ExportError) as plan:
        export_plan(store, "1")
    assert str(plan.value) == "there is no plan '1'; this project has no plans yet"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _words(word: str, count: int) -> str:
    return " ".join([word] * count)


def test_long_texts_are_cut_where_the_export_says_and_nothing_is_left_out(tmp_path: Path) -> None:
    title, subtask, constraint, non_goal = (_words("title", 60), _words("subtask", 60), _words("constraint", 120),
                                           _words("nongoal", 150))
    finding, error, feedback = _words("finding", 130), _words("error", 70), _words("feedback", 80)
    path = "/work/" + "w" * 420
    seats = [
        SeatResult(seat="s" * 70, engine="e" * 70, verdict="fail", scores={"q" * 70: 2, "code_quality": 4},
                   findings=(finding,), recommendations=("Split the parser",)),
        SeatResult(seat="second", engine="claude", verdict="fail", scores={"code_quality": 2}, failed_subtasks=(1,)),
        SeatResult(seat="z" * 70, engine="claude", verdict=None, error=error),
        SeatResult(seat="", engine="", verdict="pass"),
    ]
    with Store.open(tmp_path) as store:
        service = WorkflowService(store)
        plan = service.create_plan_from_proposal(title=title, slug="long", description="Count.",
                                                 expected_outcome="It counts.", constraints=[constraint],
                                                 non_goals=[non_goal], subtasks=[(subtask, "")])
        store.update_plan(plan.id, git_branch="g" * 130, base_branch="b" * 130, worktree_path=path)
        service.apply(plan.id, Approve(), actor="user")
        service.apply(plan.id, ImplementationReported(), actor="agent")
        service.apply(plan.id, ReviewStarted(), actor="system")
        service.apply(plan.id, ReviewFinished(aggregate(seats)), actor="system")
        service.apply(plan.id, Rework(feedback=feedback), actor="user")
        service.apply(plan.id, ImplementationReported(), actor="agent")
        service.apply(plan.id, ReviewStarted(), actor="system")
        service.apply(plan.id, ReviewFinished(aggregate(seats[3:])), actor="system")
        service.apply(plan.id, Hold(), actor="user")
        text = _shown(export_plan(store, "long"), tmp_path)
    summary = aggregate(seats).scores
    shown_scores = [f"{name} {score.mean:.1f}" + (f" (±{score.spread})" if score.spread else "")
                    for name, score in sorted(summary.items())]  # stored with sorted keys
    for line in (
        f"# Plan #1: {_cut(title, 200)}",
        "- Waiting for a decision: review (on hold)",
        f"- Git branch: `{_cut('g' * 130, 120)}` (base `{_cut('b' * 130, 120)}`)",
        f"- Worktree: `{_cut(path, 400)}`",
        f"- [ ] 1. {_cut(subtask, 300)}",
        "### Expected outcome\n\nIt counts.",
        f"### Constraints\n\n- {_cut(constraint, 1000)}",
        f"### Non-goals\n\n- {_cut(non_goal, 1000)}",
        "### Round 1: fail",
        "Scores: " + ", ".join(_cut(shown, 60) for shown in shown_scores),
        "Failed subtasks: 1",
        f"Findings:\n\n- {_cut(finding, 1000)}\n\nRecommendations:\n\n- Split the parser",
        f"Review errors (not counted as a fail): {_cut('z' * 70, 60)}",
        f"- **{_cut('s' * 70, 60)}** ({_cut('e' * 70, 60)}): fail\n"
        f"  - scores: code_quality 4, {_cut('q' * 70 + ' 2', 60)}\n"
        f"  - finding: {_cut(finding, 1000)}\n"
        "  - recommendation: Split the parser\n"
        "- **second** (claude): fail\n"
        "  - scores: code_quality 2\n"
        f"- **{_cut('z' * 70, 60)}** (claude): {_cut('review error: ' + _cut(error, 300), 300)}\n"
        "- **seat** (?): pass",
        f"Decision: {_cut('rework requested after review round 1: ' + feedback, 600)} by user, WHEN",
        "### Round 2: pass",
    ):
        assert line in text, line
    assert "(±2" in text, "the spread of the seats' scores is shown"
    assert text.index("### Round 1") < text.index("Decision: rework") < text.index("### Round 2")


ABANDONED = """\
# Plan #1: Later

- Phase: abandoned
- Slug: `later`
- Revision: 0 · review rounds: 0
- Outcome: abandoned
- Created: WHEN · updated: WHEN

## Subtasks

This plan has no subtasks.

## Description

*No description.*

## Review rounds

No review has finished yet.

## Branches

- Implementation: none
- Review: none

## Timeline (2 events)

- WHEN · agent · proposal received (revision 1, 0 subtasks)
- WHEN · user · abandoned
"""


def test_an_abandoned_plan_without_subtasks_reads_exactly_so(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        service = WorkflowService(store)
        plan = service.create_plan_from_proposal(title="Later", slug="later")
        service.apply(plan.id, Abandon(), actor="user")
        assert _shown(export_plan(store, "later"), tmp_path) == ABANDONED


def test_a_waiting_plan_says_so_and_a_held_one_says_from_where(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        service = WorkflowService(store)
        plan = service.create_plan_from_proposal(title="Held", slug="held", subtasks=[("One", ""), ("Two", "")])
        service.apply(plan.id, Approve(), actor="user")
        service.mark_subtask_done(plan.id, 1)
        service.apply(plan.id, ImplementationReported(), actor="agent")
        service.apply(plan.id, ReviewStarted(), actor="system")
        service.apply(plan.id, ReviewFinished(aggregate([SeatResult(seat="r", engine="claude", verdict="pass")])),
                      actor="system")
        waiting = export_plan(store, "held")
        service.apply(plan.id, Hold(), actor="user")
        held = export_plan(store, "held")
    assert "- Phase: review\n" in waiting and "- Waiting for a decision: review\n" in waiting
    assert "## Subtasks (1/2 done)\n\n- [x] 1. One\n- [ ] 2. Two\n" in waiting
    assert "- Phase: held (held from review)\n" in held and "- Waiting for a decision: review (on hold)\n" in held


def test_an_empty_conversation_says_so(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        text = export_conversation(store)
    assert _shown(text, tmp_path) == "# Main conversation\n\nProject: <name> (`<project>`)\nMessages: 0\n\n" \
                                      "*No messages yet.*\n"


def test_more_than_two_pages_of_messages_are_exported_whole_and_in_order(tmp_path: Path) -> None:
    count = 1001  # read 500 at a time: two full pages and one more
    with Store.open(tmp_path) as store:
        for number in range(count):
            store.add_message("main", "user", f"Message number {number:04d}.")
        text = export_conversation(store)
    assert re.findall(r"Message number (\d{4})\.", text) == [f"{number:04d}" for number in range(count)]
    assert f"Messages: {count}\n" in text


def test_text_exactly_at_a_limit_is_not_cut(tmp_path: Path) -> None:
    label = "b" * 120
    with Store.open(tmp_path) as store:
        branch = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                                     kind="implementation", label=label)
        store.add_message(branch.shadow_conversation_id, "user", "hi")
        failed = store.add_message("main", "assistant", "", persona="developer", engine="claude")
        store.update_message(failed.id, status="error", error_kind="k" * 70)
        assert export_conversation(store, str(branch.id)).startswith(f"# Branch #{branch.id}: {label}\n")
        assert f"> **Error ({_cut('k' * 70, 60)})**\n" in export_conversation(store)


def test_a_failed_subtask_a_review_branch_and_a_round_without_a_verdict_read_exactly_so(tmp_path: Path) -> None:
    errors = [SeatResult(seat="reviewer", engine="claude", verdict=None, error="timed out"),
              SeatResult(seat="verifier", engine="codex", verdict=None, error="crashed")]
    failing = [SeatResult(seat="reviewer", engine="claude", verdict="fail", failed_subtasks=(1, 3))]
    with Store.open(tmp_path) as store:
        service = WorkflowService(store)
        plan = service.create_plan_from_proposal(title="Three", slug="three", subtasks=[
            ("Parse", "split on spaces\n\nand on tabs"), ("Count", ""), ("Print", "")])
        review = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                     mode="roundtable", kind="review", label="r" * 130)
        store.update_branch(review.id, git_branch="t" * 130)
        store.update_plan(plan.id, review_branch_id=review.id)
        service.apply(plan.id, Approve(), actor="user")
        service.mark_subtask_done(plan.id, 2)
        service.apply(plan.id, ImplementationReported(), actor="agent")
        service.apply(plan.id, ReviewStarted(), actor="system")
        service.apply(plan.id, ReviewFinished(aggregate(errors)), actor="system")
        service.apply(plan.id, RetryReview(), actor="user")
        service.apply(plan.id, ReviewStarted(), actor="system")
        service.apply(plan.id, ReviewFinished(aggregate(failing)), actor="system")
        text = _shown(export_plan(store, "three"), tmp_path)
    assert "## Subtasks (1/3 done)\n\n- [ ] 1. Parse\n      split on spaces\n\n      and on tabs\n" \
           "- [x] 2. Count\n- [ ] 3. Print\n\n## Description" in text
    assert "### Round 1: no verdict (review error)\n\n*WHEN*\n\n" \
           "Review errors (not counted as a fail): reviewer, verifier\n\n" in text
    assert "### Round 2: fail\n\n*WHEN*\n\nFailed subtasks: 1, 3\n\n" in text
    assert (f"- Review: #{review.id} {_cut('r' * 130, 120)} (active, git `{_cut('t' * 130, 120)}`; "
            f"conversation `branch:{review.id}`)") in text
