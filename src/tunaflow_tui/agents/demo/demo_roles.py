"""What the demo engine says and does for each role. Deterministic: the same input gives the same reply.

Cues read from the prompt (the runtime writes them):
- ``Revision requested: <feedback>`` or ``Review findings:`` → the Architect re-proposes ("Revision N");
- ``Review findings:`` → the Developer reworks (adds the edge-case test the reviewer asked for);
- ``Review round: N`` → the Reviewer's round number (default 1), compared with ``demo_fail_reviews``;
- ``## Test result`` / ``Status: …`` → the reviewers read the test result like real ones: failing tests
  fail the work, tests that could not start make it conditional.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from tunaflow_tui.agents.agent_events import EngineEvent, TextDelta, ToolLine, ToolUse
from tunaflow_tui.agents.demo import generic, sample
from tunaflow_tui.core.counting import counted

Step = EngineEvent | str
"""A script step: an event, or reply text to stream."""

_ROUND_RE = re.compile(r"review round:\s*(\d+)", re.IGNORECASE)
_TEST_STATUS_RE = re.compile(r"^## Test result\s*\n+Status:\s*(\w+)", re.MULTILINE)
_TEST_SUMMARY_RE = re.compile(r"^Summary:\s*(.*)$", re.MULTILINE)
_REVISION_RE = re.compile(r"^\s*(?:revision requested|review findings)\s*:(.*)$", re.IGNORECASE | re.MULTILINE)
_ASKED_REVISION_RE = re.compile(r"\bas revision (\d+)\b", re.IGNORECASE)
_USER_NOTE_RE = re.compile(r"^User note:\s*(.*)$", re.MULTILINE)
_PLAN_WORDS = ("plan", "propose", "proposal", "implement", "add ", "build", "feature", "계획", "rencana")


def review_round(prompt: str) -> int:
    """The ``Review round: N`` cue in the prompt (the last one wins); 1 when absent."""
    found = _ROUND_RE.findall(prompt)
    return int(found[-1]) if found else 1


def test_result(prompt: str) -> tuple[str | None, str]:
    """The test status (passed / failed / timeout / error) and summary the review prompt reports."""
    found = _TEST_STATUS_RE.search(prompt)
    if found is None:
        return None, ""
    summary = _TEST_SUMMARY_RE.search(prompt, found.end())
    return found.group(1).lower(), (summary.group(1).strip() if summary else "")


def _test_findings(prompt: str) -> tuple[list[str], list[str], bool]:
    """What a reviewer makes of the test result: findings, recommendations, and whether it fails the work."""
    status, summary = test_result(prompt)
    detail = f": {summary}" if summary else ""
    if status in ("failed", "timeout"):
        what = "fail" if status == "failed" else "did not finish in time"
        return ([f"The project's tests {what}{detail}"], ["Make the test suite pass before submitting"], True)
    if status == "error":
        return ([f"The tests could not run (an environment error, not a test failure){detail}"],
                ["Fix the test environment so the suite runs, then review again"], False)
    return [], [], False


def architect(prompt: str, root: Path | None = None) -> Iterator[Step]:
    """A plan proposal, a revision of it, or a short chat answer.

    On the sample project (or without a folder) the plan is the word-frequency report; on any other
    project it is :mod:`~tunaflow_tui.agents.demo.generic`'s demo note, the one plan the demo engine
    can really carry out there.
    """
    revisions = _REVISION_RE.findall(prompt)
    tail = prompt[-600:].lower()
    foreign = _foreign(root)
    if not revisions and not any(word in tail for word in _PLAN_WORDS):
        if foreign:
            yield generic.CHAT_REPLY
            return
        yield (
            "I'm the demo Architect. This sample project, `textstats`, counts words and lines. "
            "I can propose a concrete change for you to approve: ask me for a plan, for example "
            "*\"plan a word-frequency report\"*."
        )
        return
    if foreign:
        assert root is not None
        yield from generic.architect(root, revisions)
        return
    yield ToolUse(ToolLine("Read", "textstats/core.py"), "completed")
    intro = "Here is a plan for the sample project."
    constraints = ["- No new dependencies; reuse `textstats.core.words`.",
                   "- Keep every existing test passing."]
    if revisions:
        asked = _ASKED_REVISION_RE.findall(prompt)  # the number the plan card will show
        number = int(asked[-1]) if asked else len(revisions) + 1
        notes = [note.strip() for note in _USER_NOTE_RE.findall(prompt) if note.strip()]
        feedback = notes[-1] if notes else next((text.strip() for text in reversed(revisions) if text.strip()), "")
        feedback = " ".join(feedback.split())[:200] or "the review findings"
        intro = f"Revision {number}: this version addresses the feedback — “{feedback}”."
        constraints.append(f"- Revision {number}: {feedback}")
    subtasks = "\n".join(f"{index}. {text}" for index, text in enumerate(sample.SUBTASKS, start=1))
    yield (
        f"{intro}\n\n"
        "<!-- tunaflow:plan-proposal -->\n"
        f"title: {sample.PLAN_TITLE}\n\n"
        f"subtasks:\n{subtasks}\n\n"
        "description: Users want to see which words dominate a text. A new `textstats.frequency` module "
        "counts words with the same tokenizer as the existing counters and formats the most frequent "
        "ones as a small aligned report.\n\n"
        "expected outcome: `frequency_report(text, top=N)` returns the N most frequent words with their "
        "counts, and the test suite covers it, including empty text.\n\n"
        "constraints:\n" + "\n".join(constraints) + "\n\n"
        "non-goals:\n- Stop-word lists or stemming.\n- A command-line interface.\n"
        "<!-- /tunaflow:plan-proposal -->\n\n"
        "Approve it, or ask for a revision, on the plan's card: its keys are named there."
    )


def _write(root: Path, relative: str, content: str, tool: str = "Write") -> Iterator[Step]:
    yield ToolUse(ToolLine(tool, relative), "started")
    target = sample.safe_path(root, relative)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    yield ToolUse(ToolLine(tool, relative), "completed")


def developer(prompt: str, root: Path, fail_reviews: int) -> Iterator[Step]:
    """Implement the plan in ``root`` (really editing files), or rework after review.

    On a project that is not the sample the plan is the demo note (:mod:`.generic`).
    """
    if not sample.is_sample_project(root):
        yield from generic.developer(prompt, root)
        return
    tests_path = "tests/test_frequency.py"
    if "review findings:" in prompt.lower():
        yield "Reworking after review. "
        current = sample.safe_path(root, tests_path)
        existing = current.read_text(encoding="utf-8") if current.is_file() else sample.FREQUENCY_TESTS
        if sample.EDGE_CASE_TEST not in existing:
            yield "Adding the missing empty-text edge-case test.\n\n"
            yield from _write(root, tests_path, existing + sample.EDGE_CASE_TESTS, "Edit")
        else:
            yield "The edge-case test is already in place; I re-ran the suite to confirm.\n\n"
        yield ToolUse(ToolLine("Bash", sample.TEST_COMMAND), "completed")
        yield "All tests pass.\n\n<!-- tunaflow:impl-complete -->\n"
        return
    yield "Starting with subtask 1: the frequency counter.\n\n"
    yield from _write(root, "textstats/frequency.py", sample.FREQUENCY_MODULE_PART1)
    yield from _write(root, "textstats/__init__.py", sample.INIT_WITH_FREQUENCY, "Edit")
    yield "`word_frequencies` reuses `words()`, so case and punctuation match the other counters.\n\n"
    yield "<!-- tunaflow:subtask-done:1 -->\n\n"
    yield "Subtask 2: the report, with stable alphabetical tie-breaking.\n\n"
    yield from _write(root, "textstats/frequency.py",
                      sample.FREQUENCY_MODULE_PART1 + sample.FREQUENCY_MODULE_PART2, "Edit")
    yield "<!-- tunaflow:subtask-done:2 -->\n\n"
    yield "Subtask 3: tests and documentation.\n\n"
    # Configured to fail reviews, the demo Developer "forgets" the edge case the first time round.
    tests = sample.FREQUENCY_TESTS + ("" if fail_reviews > 0 else sample.EDGE_CASE_TESTS)
    yield from _write(root, tests_path, tests)
    readme = sample.safe_path(root, "README.md")
    text = readme.read_text(encoding="utf-8") if readme.is_file() else "# textstats\n"
    if "Word-frequency report" not in text:
        yield from _write(root, "README.md", text + sample.README_SECTION, "Edit")
    yield ToolUse(ToolLine("Bash", sample.TEST_COMMAND), "completed")
    yield "<!-- tunaflow:subtask-done:3 -->\n\nAll three subtasks are done and the tests pass.\n\n"
    yield "<!-- tunaflow:impl-complete -->\n"


def inspect(root: Path) -> tuple[list[int], list[str], list[str]]:
    """Check the sample plan in ``root``: failed subtasks, findings and recommendations."""
    failed: list[int] = []
    findings: list[str] = []
    recommendations: list[str] = []
    module = root / "textstats" / "frequency.py"
    code = module.read_text(encoding="utf-8") if module.is_file() else ""
    if "def word_frequencies" not in code:
        failed.append(1)
        findings.append("textstats/frequency.py does not define word_frequencies")
    if "def frequency_report" not in code:
        failed.append(2)
        findings.append("textstats/frequency.py does not define frequency_report")
    tests_file = root / "tests" / "test_frequency.py"
    tests = tests_file.read_text(encoding="utf-8") if tests_file.is_file() else ""
    if not tests:
        failed.append(3)
        findings.append("tests/test_frequency.py is missing")
    elif sample.EDGE_CASE_TEST not in tests:
        failed.append(3)
        findings.append("tests/test_frequency.py has no test for empty text (the edge case of subtask 3)")
        recommendations.append(f"Add `{sample.EDGE_CASE_TEST}` asserting empty results for empty text")
    return failed, findings, recommendations


def reviewer(prompt: str, root: Path, fail_reviews: int, seat: str) -> Iterator[Step]:
    """A read-only review of ``root`` ending in a verdict block that reflects the files' real state."""
    is_sample = sample.is_sample_project(root)
    for relative in ("textstats/frequency.py", "tests/test_frequency.py") if is_sample else generic.READS:
        yield ToolUse(ToolLine("Read", relative), "completed")
    failed, findings, recommendations = inspect(root) if is_sample else generic.inspect(root)
    round_number = review_round(prompt)
    if seat == "reviewer" and round_number <= fail_reviews and not findings:
        findings.append(f"Review round {round_number}: the demo reviewer is set to fail the first "
                        f"{counted(fail_reviews, 'round')} (demo_fail_reviews)")
        recommendations.append("Rework and submit again")
    # like a real reviewer, it reads the test result: failing tests fail the work; tests that could
    # not run leave the verdict conditional at best
    test_findings, test_advice, tests_fail = _test_findings(prompt)
    if findings or tests_fail:
        verdict = "fail"
    elif test_findings:
        verdict = "conditional"
    else:
        verdict = "pass"
    findings += test_findings
    recommendations += test_advice
    test_score = 5 if verdict == "pass" else 2
    yield (f"I read the implementation ({seat}, round {round_number}). "
           + (("It covers the plan and the tests are thorough." if is_sample else "The note is what the plan asks for.")
              if verdict == "pass"
              else "It is not ready yet." if verdict == "fail"
              else "The code looks right, but I could not confirm it with the tests.") + "\n\n")
    bullets = "".join(f"- {item}\n" for item in findings)
    advice = "".join(f"- {item}\n" for item in recommendations)
    yield (
        "<!-- tunaflow:review-verdict -->\n"
        f"verdict: {verdict}\n"
        "scores:\n"
        f"- plan_coverage: {5 if not failed else 3}\n"
        "- code_quality: 4\n"
        f"- test_coverage: {test_score}\n"
        "- convention: 5\n"
        f"failed_subtasks: [{', '.join(str(n) for n in sorted(set(failed)))}]\n"
        + (f"findings:\n{bullets}" if bullets else "")
        + (f"recommendations:\n{advice}" if advice else "")
        + "<!-- /tunaflow:review-verdict -->\n"
    )


def _foreign(root: Path | None) -> bool:
    return root is not None and not sample.is_sample_project(root)


def synthesizer(prompt: str, root: Path | None = None) -> Iterator[Step]:
    """A consensus block for a roundtable."""
    if _foreign(root):
        yield (
            "The participants agree on what the demo engine can do here.\n\n"
            "<!-- tunaflow:consensus -->\n"
            f"consensus:\n- The demo engine can only add {generic.NOTE_PATH}; a real engine is needed for real work.\n"
            "contested:\n- Whether to keep the note after trying tunaflow.\n"
            "<!-- /tunaflow:consensus -->\n"
        )
        return
    yield (
        "The participants largely agree; one point stays open.\n\n"
        "<!-- tunaflow:consensus -->\n"
        "consensus:\n- Ship the word-frequency report as planned, with tests for empty text.\n"
        "contested:\n- Whether the report should also offer a percentage column.\n"
        "<!-- /tunaflow:consensus -->\n"
    )


def summarizer(prompt: str, root: Path | None = None) -> Iterator[Step]:
    """A short, deterministic summary."""
    if _foreign(root):
        yield ("Summary: the conversation tried tunaflow with the demo engine, which read no code; "
               f"its only change is the note {generic.NOTE_PATH}.")
        return
    yield (f"Summary: the conversation worked on “{sample.PLAN_TITLE}” in the sample project; "
           "the frequency functions and their tests are the main outcome.")


def other(prompt: str, role: str, root: Path | None = None) -> Iterator[Step]:
    """A free roundtable role: a short position, conclusion first."""
    if _foreign(root):
        yield (f"As {role} (demo engine): I read no code here, so I have no position on it; "
               "configure a real engine for a real discussion.")
        return
    yield (f"As {role}: the word-frequency report is a small, well-contained change. "
           "Tie-breaking must be deterministic and empty text must be tested.")


def ballot(letters: list[str]) -> Iterator[Step]:
    """A peer-ranking ballot: every letter once, in the order shown (the order is shuffled per voter)."""
    yield "\n".join(f"{place}. {letter} — (demo engine) ranked in the order the answers were shown"
                     for place, letter in enumerate(letters, 1))


def text_steps(steps: Iterator[Step]) -> Iterator[EngineEvent]:
    """Turn text steps into ``TextDelta`` events (the engine chunks them further)."""
    for step in steps:
        yield TextDelta(step) if isinstance(step, str) else step
