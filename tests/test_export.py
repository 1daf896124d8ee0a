"""`tunaflow export` prints a conversation or a plan as Markdown a person can read and share."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from export_seeds import seed_conversation, seed_plan
from tunaflow_cli import tunaflow

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow.service import WorkflowService


def export(*args: str, cwd: Path | None = None, in_process: bool = True) -> subprocess.CompletedProcess[str]:
    """``tunaflow export ARGS``, in this process (``tunaflow_cli``) unless ``in_process`` is False."""
    return tunaflow(["export", *args], cwd=cwd, in_process=in_process)


def test_conversation_is_the_default_with_speakers_and_no_markers(tmp_path: Path) -> None:
    seed_conversation(tmp_path)
    out = export(str(tmp_path), in_process=False)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith("# Main conversation")
    assert "## You" in text and "Please count words in 한국어 text" in text
    assert "## Architect · claude · sonnet" in text
    assert "Count words" in text and "tunaflow:plan-proposal" not in text
    assert "Interrupted" in text and "Half an answer" in text
    assert "**Error (timeout)**: no output for 600 s" in text
    # The speakers appear in the order they spoke.
    assert text.index("## You") < text.index("## Architect · claude") < text.index("## Reviewer · claude")


def test_control_sequences_in_agent_output_are_inert(tmp_path: Path) -> None:
    seed_conversation(tmp_path)
    out = export(str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout
    assert "beforeafter" in out.stdout


def test_branch_conversation_by_number_and_to_a_file(tmp_path: Path) -> None:
    seed_plan(tmp_path)
    target = tmp_path / "out" / "branch.md"
    target.parent.mkdir()
    out = export(str(tmp_path), "--conversation", "1", "-o", str(target))
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# Branch #1: tunaflow/count-words")
    assert "## Developer · demo" in text and "Implemented the parser." in text


def test_plan_export_has_subtasks_reviews_branches_and_timeline(tmp_path: Path) -> None:
    plan_id = seed_plan(tmp_path)
    out = export(str(tmp_path), "--plan", str(plan_id))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith("# Plan #1: Count words")
    assert "- Phase: rework" in text
    assert "- [x] 1. Parser" in text and "- [ ] 2. CLI flag" in text
    assert "Add a `words` command." in text
    assert "### Round 1: fail" in text
    assert "No test for empty input" in text and "Add a test" in text
    assert "**verifier** (codex): review error: timed out" in text
    assert "Decision: rework requested" in text and "Please add the test" in text
    assert "- Implementation: #1 tunaflow/count-words (active, git `tunaflow/count-words`" in text
    assert "- Review: none" in text
    timeline = text[text.index("## Timeline"):]
    order = [timeline.index(word) for word in ("approved revision 1", "subtask 1 done",
                                                "the Developer reported the work complete", "review round 1: fail",
                                                "rework requested after review round 1: Please add the test")]
    assert order == sorted(order)
    # by slug as well
    by_slug = export(str(tmp_path), "--plan", "count-words")
    assert by_slug.returncode == 0 and by_slug.stdout == text


def test_plan_without_subtasks_says_so(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        WorkflowService(store).create_plan_from_proposal(title="Later", slug="later")
    out = export(str(tmp_path), "--plan", "1")
    assert out.returncode == 0, out.stderr
    assert "This plan has no subtasks." in out.stdout
    assert "No review has finished yet." in out.stdout


def test_project_without_tunaflow_data_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    out = export(str(tmp_path))
    assert out.returncode == 1
    assert "no tunaflow data" in out.stderr and out.stdout == ""
    assert not (tmp_path / ".tunaflow").exists()


def test_unknown_plan_and_conversation_name_what_exists(tmp_path: Path) -> None:
    seed_plan(tmp_path)
    plan = export(str(tmp_path), "--plan", "7")
    assert plan.returncode == 1 and plan.stdout == ""
    assert "no plan '7'" in plan.stderr and "1 (count-words)" in plan.stderr
    conversation = export(str(tmp_path), "--conversation", "branch:9")
    assert conversation.returncode == 1
    assert "no conversation 'branch:9'" in conversation.stderr and "main, branch:1" in conversation.stderr


def test_conversation_and_plan_together_are_refused(tmp_path: Path) -> None:
    seed_plan(tmp_path)
    out = export(str(tmp_path), "--plan", "1", "--conversation", "main")
    assert out.returncode == 2
    assert "not allowed with" in out.stderr


def test_a_conversation_longer_than_two_pages_is_exported_whole_and_in_order(tmp_path: Path) -> None:
    count = 1201  # the store is read 500 messages at a time: two full pages and one more message
    with Store.open(tmp_path) as store:
        for number in range(count):
            store.add_message("main", "user" if number % 2 == 0 else "assistant", f"Message number {number:04d}.",
                              persona=None if number % 2 == 0 else "architect", engine="claude")
    out = export(str(tmp_path))
    assert out.returncode == 0, out.stderr
    found = re.findall(r"Message number (\d{4})\.", out.stdout)
    assert found == [f"{number:04d}" for number in range(count)], "every message once, oldest first"
