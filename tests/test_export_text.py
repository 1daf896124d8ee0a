"""What an export says, whole and to the character (in process: the Markdown a person reads and shares)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from export_seeds import seed_conversation, seed_plan

from tunaflow_tui.core.exporting import ExportError, export_conversation, export_plan, find_plan
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.turns import Usage

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
