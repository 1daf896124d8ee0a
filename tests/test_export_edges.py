"""Exports at their edges, in process: lengths one past a limit, text that starts or ends oddly, a plan
read to its last line (usage with one figure, a subtask marked failed, a seat that errored after a
verdict, a decision right after its review)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tunaflow_tui.core.exporting import ExportError, export_conversation, export_plan
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.turns import Usage
from tunaflow_tui.core.workflow import (
    Abandon,
    Accept,
    Approve,
    ImplementationReported,
    RetryReview,
    ReviewFinished,
    ReviewStarted,
    SeatResult,
    aggregate,
)
from tunaflow_tui.core.workflow.service import WorkflowService

WHEN = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _project_at_length(tmp_path: Path, name: str, length: int) -> Path:
    """A project folder named ``name`` whose absolute path is exactly ``length`` characters."""
    pad = length - len(str(tmp_path)) - len(name) - 2
    assert pad > 0
    parts = [("p" * pad)[start:start + 200] for start in range(0, pad, 201)]
    folder = tmp_path.joinpath(*parts, name)
    while len(str(folder)) < length:  # each extra part also adds a slash
        parts[-1] += "p"
        folder = tmp_path.joinpath(*parts, name)
    assert len(str(folder)) == length
    folder.mkdir(parents=True)
    return folder


def test_a_name_and_path_one_past_their_limit_are_cut_and_text_keeps_its_edges(tmp_path: Path) -> None:
    name = "n" * 121
    project = _project_at_length(tmp_path, name, 401)
    with Store.open(project) as store:
        store.add_message("main", "user", "    indented code\nFix X")
        read = store.add_message("main", "assistant", "Read.", persona="developer", engine="claude")
        store.update_message(read.id, usage=Usage(output_tokens=5))
        wrote = store.add_message("main", "assistant", "Wrote.", persona="developer", engine="claude")
        store.update_message(wrote.id, usage=Usage(input_tokens=7))
        store.add_message("main", "user", "A hard break  ")
        text = WHEN.sub("WHEN", export_conversation(store))
    assert text == (
        f"# Main conversation\n\nProject: {_cut(name, 120)} (`{_cut(str(project), 400)}`)\nMessages: 4\n\n"
        "---\n\n## You\n\n*WHEN*\n\n    indented code\nFix X\n\n"
        "---\n\n## Developer · claude\n\n*WHEN*\n\nRead.\n\n*0 tokens in · 5 out*\n\n"
        "---\n\n## Developer · claude\n\n*WHEN*\n\nWrote.\n\n*7 tokens in · 0 out*\n\n"
        "---\n\n## You\n\n*WHEN*\n\nA hard break  \n"
    )


def test_a_branch_label_one_past_its_limit_is_cut_and_the_last_character_stays(tmp_path: Path) -> None:
    label = "b" * 121
    with Store.open(tmp_path) as store:
        branch = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                                     kind="implementation", label=label)
        store.add_message(branch.shadow_conversation_id, "user", "Fix X")
        text = export_conversation(store, str(branch.id))
    assert text.startswith(f"# Branch #{branch.id}: {_cut(label, 120)}\n")
    assert text.endswith("\n\nFix X\n")


def test_an_unknown_plan_is_named_with_every_plan_there_is(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        service = WorkflowService(store)
        service.create_plan_from_proposal(title="One", slug="one")
        service.create_plan_from_proposal(title="Two", slug="two")
        with pytest.raises(ExportError) as unknown:
            export_plan(store, "three")
    assert str(unknown.value) == "there is no plan 'three'; this project has plans: 1 (one), 2 (two)"


PLAN = """\
# Plan #1: Edges

- Phase: done
- Slug: `edges`
- Revision: 0 · review rounds: 2
- Outcome: accepted a complete, passing review
- Git branch: `tunaflow/edges`
- Created: WHEN · updated: WHEN

## Subtasks (1/2 done)

- [!] 1. Parse (failed)
- [x] 2. Count

## Description

Count.

### Expected outcome

It counts.

### Constraints

- No new dependency

### Non-goals

- Unicode

## Review rounds

### Round 1: pass

*WHEN*

Review errors (not counted as a fail): verifier

Seats:

- **reviewer** (claude): pass
- **verifier** (codex): review error: crashed after its verdict

Decision: review round 1: verifier asked again by user, WHEN

### Round 2: pass

*WHEN*

Seats:

- **reviewer** (claude): pass
- **verifier** (codex): pass

Decision: accepted a complete, passing review by user, WHEN

## Branches

- Implementation: none
- Review: none

## Timeline (12 events)

- WHEN · agent · proposal received (revision 1, 2 subtasks)
- WHEN · user · approved revision 1
- WHEN · system · development started on revision 1
- WHEN · agent · subtask 2 done
- WHEN · agent · the Developer reported the work complete
- WHEN · system · review round 1 started
- WHEN · system · review round 1: pass
- WHEN · system · review round 1: no verdict from verifier
- WHEN · user · review round 1: verifier asked again
- WHEN · system · review round 2 started
- WHEN · system · review round 2: pass
- WHEN · user · accepted a complete, passing review
"""


def test_a_plan_read_to_its_last_line(tmp_path: Path) -> None:
    errored = [SeatResult(seat="reviewer", engine="claude", verdict="pass"),
               SeatResult(seat="verifier", engine="codex", verdict="fail", error="crashed after its verdict")]
    passed = [SeatResult(seat="reviewer", engine="claude", verdict="pass"),
              SeatResult(seat="verifier", engine="codex", verdict="pass")]
    with Store.open(tmp_path) as store:
        service = WorkflowService(store)
        plan = service.create_plan_from_proposal(title="Edges", slug="edges", description="Count.",
                                                 expected_outcome="It counts.", constraints=["No new dependency"],
                                                 non_goals=["Unicode"], subtasks=[("Parse", ""), ("Count", "")])
        store.update_plan(plan.id, git_branch="tunaflow/edges")
        service.apply(plan.id, Approve(), actor="user")
        store.set_subtask_status(plan.id, 1, "failed")
        service.mark_subtask_done(plan.id, 2)
        service.apply(plan.id, ImplementationReported(), actor="agent")
        service.apply(plan.id, ReviewStarted(), actor="system")
        service.apply(plan.id, ReviewFinished(aggregate(errored)), actor="system")
        service.apply(plan.id, RetryReview(), actor="user")
        service.apply(plan.id, ReviewStarted(), actor="system")
        service.apply(plan.id, ReviewFinished(aggregate(passed)), actor="system")
        service.apply(plan.id, Accept(), actor="user")
        assert WHEN.sub("WHEN", export_plan(store, "edges")) == PLAN


def test_an_outcome_one_past_its_limit_is_cut_and_the_last_character_stays(tmp_path: Path) -> None:
    reason = "r" * 600
    with Store.open(tmp_path) as store:
        service = WorkflowService(store)
        long = service.create_plan_from_proposal(title="Long", slug="long")
        service.apply(long.id, Abandon(reason=reason), actor="user")
        short = service.create_plan_from_proposal(title="Short", slug="short")
        service.apply(short.id, Abandon(reason="superseded by plan X"), actor="user")
        long_text, short_text = export_plan(store, "long"), export_plan(store, "short")
    # "abandoned: " and the reason, itself at most 600 characters: one past the outcome's limit of 600
    assert f"- Outcome: {_cut('abandoned: ' + _cut(reason, 600), 600)}\n" in long_text
    assert short_text.endswith(" · user · abandoned: superseded by plan X\n")
