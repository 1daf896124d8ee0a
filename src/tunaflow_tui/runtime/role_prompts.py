"""The texts tunaflow sends to each role at each step of the cycle.

Lines that start with a fixed cue ("Revision requested:", "Review findings:", "Review round:")
let any agent — and the built-in demo engine — tell a first proposal from a revision and a first
implementation from a rework.
"""

from __future__ import annotations

from collections.abc import Sequence

from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.testrunner import TestResult
from tunaflow_tui.core.workflow.verdicts import AggregateVerdict

DEV_MARKER_RULES = (
    "When you finish subtask N, write `<!-- tunaflow:subtask-done:N -->` on its own line. "
    "When every subtask is finished, write `<!-- tunaflow:impl-complete -->` on its own line as the last line."
)


def plan_brief(plan: PlanRecord) -> str:
    """The plan as Markdown: title, subtasks, description, outcome, constraints, non-goals."""
    lines = [f"# {plan.title}", ""]
    if plan.subtasks:
        lines.append("Subtasks:")
        for sub in plan.subtasks:
            status = {"done": " (done)", "failed": " (failed review)"}.get(sub.status, "")
            lines.append(f"{sub.index}. {sub.title}{status}")
            if sub.details.strip():
                lines.extend(f"   {line}" for line in sub.details.strip().splitlines())
        lines.append("")
    if plan.description.strip():
        lines += ["Description:", plan.description.strip(), ""]
    if plan.expected_outcome:
        lines += ["Expected outcome:", plan.expected_outcome.strip(), ""]
    if plan.constraints:
        lines += ["Constraints:", *[f"- {c}" for c in plan.constraints], ""]
    if plan.non_goals:
        lines += ["Non-goals:", *[f"- {n}" for n in plan.non_goals], ""]
    return "\n".join(lines).strip()


def next_revision(plan: PlanRecord) -> int:
    """The revision number the Architect is asked for, as its card will show it (the first proposal is 1)."""
    return plan.revision + 1


def revision_prompt(plan: PlanRecord, feedback: str) -> str:
    """Ask the Architect to re-propose the plan after the user's feedback."""
    return (
        f"Revision requested: {feedback.strip() or '(no details given)'}\n\n"
        f"Revise the plan below and propose it again in full as revision {next_revision(plan)}, "
        "inside the plan-proposal markers.\n\n" + plan_brief(plan)
    )


_REDESIGN_REASONS = {
    "fail": "the implementation failed review",
    "conditional": "the review passed the implementation only with conditions",
    "pass": "the implementation passed review, and a different design is wanted all the same",
}


def redesign_prompt(plan: PlanRecord, findings: Sequence[str], feedback: str = "", verdict: str | None = None) -> str:
    """Send the review's verdict and findings back to the Architect for a redesign (a plan revision).

    ``verdict`` is the review's the redesign was chosen on: a redesign after a pass never tells the
    Architect the work failed.
    """
    why = _REDESIGN_REASONS.get(verdict or "", "a different design is wanted")
    lines = [f"Revision requested: {why}; redesign the plan.", ""]
    if feedback.strip():
        lines += [f"User note: {feedback.strip()}", ""]
    empty = "(none: the review passed)" if verdict == "pass" else "(no findings recorded)"
    lines += ["Review findings:", *[f"- {f}" for f in findings or [empty]], ""]
    lines += [f"Propose the redesigned plan in full as revision {next_revision(plan)}, inside the plan-proposal "
              "markers.", "", plan_brief(plan)]
    return "\n".join(lines)


def implementation_prompt(plan: PlanRecord, task_files: Sequence[str], plan_file: str) -> str:
    """The Developer's instructions to implement an approved plan in its worktree."""
    files = "\n".join(f"- {name}" for name in task_files) or "- (no task files: the plan has no subtasks)"
    return (
        "Implement the approved plan below in this working directory.\n\n"
        f"The plan is in `{plan_file}`; one file per subtask:\n{files}\n\n"
        f"{plan_brief(plan)}\n\n"
        f"Marker rules: {DEV_MARKER_RULES}\n"
        "Keep the project's tests passing and add tests for new behaviour."
    )


def rework_prompt(plan: PlanRecord, findings: Sequence[str], earlier: Sequence[str], feedback: str = "") -> str:
    """Send the review findings (and earlier failures of this plan) back to the Developer."""
    lines = ["Review findings:", *[f"- {f}" for f in findings or ["(no findings recorded)"]], ""]
    if earlier:
        lines += ["Earlier failed reviews of this plan:", *[f"- {e}" for e in earlier], ""]
    if feedback.strip():
        lines += [f"User note: {feedback.strip()}", ""]
    lines += [
        "Fix what the reviewers found in this working directory.",
        f"Marker rules: {DEV_MARKER_RULES}",
        "",
        plan_brief(plan),
    ]
    return "\n".join(lines)


def resolve_conflict_prompt(plan: PlanRecord, base: str, files: Sequence[str], feedback: str = "") -> str:
    """Ask the Developer to finish merging the base into the plan's branch: the conflicts, by file."""
    listed = [f"- {f}" for f in files] or ["- (git reported none: check that the merged code still works)"]
    lines = [
        f"This plan was reviewed and accepted, but it no longer merges into `{base}`: another change landed "
        f"there first. tunaflow has started merging `{base}` into this branch in this working directory "
        "(a merge, not a rebase; it is not committed yet). These files conflict:",
        *listed,
        "",
        "Resolve every conflict: keep what this plan does and what landed on the base, edit the files so no "
        "conflict marker (<<<<<<<, =======, >>>>>>>) is left, and make the tests pass. Do not abort or redo "
        "the merge, do not switch branches, do not commit: tunaflow commits the merge when you are done, "
        "then the tests and the review run again on the result.",
    ]
    if feedback.strip():
        lines += ["", f"User note: {feedback.strip()}"]
    lines += ["", "When the conflicts are resolved, write `<!-- tunaflow:impl-complete -->` on its own line as "
              "the last line.", "", plan_brief(plan)]
    return "\n".join(lines)


def continue_prompt(plan: PlanRecord) -> str:
    """Ask a Developer who stopped early to carry on."""
    pending = [s for s in plan.subtasks if s.status != "done"]
    left = "\n".join(f"{s.index}. {s.title}" for s in pending) or "(all subtasks are marked done)"
    return (
        "Continue the implementation where you stopped. Subtasks not yet reported done:\n"
        f"{left}\n\nMarker rules: {DEV_MARKER_RULES}"
    )


TEST_MEANING = {
    "passed": "The tests ran and passed.",
    "failed": "The tests ran and some FAILED.",
    "timeout": "The tests did not finish in time (they were stopped).",
    "error": ("The tests could NOT START: this is an error of the test environment, not a test failure. "
              "Judge the code on its own, and say in your findings that the tests did not run."),
}


def test_result_text(tests: TestResult | None) -> str:
    """The ``## Test result`` section: status, what it means (ran and failed, or could not start), the
    environment that ran them, the summary and the output's tail."""
    if tests is None:
        return "No test command was detected for this project."
    lines = [f"Status: {tests.status}", TEST_MEANING.get(tests.status, "")]
    if tests.environment:
        lines.append(f"Environment: {tests.environment}")
    lines.append(f"Summary: {tests.summary}")
    return "\n".join(line for line in lines if line) + f"\n\n```\n{tests.output[-4000:]}\n```"


def review_prompt(
    plan: PlanRecord,
    *,
    seat: str,
    round_no: int,
    diff: str,
    tests: TestResult | None,
) -> str:
    """What each reviewer seat gets: the plan, the diff against the base, the test result."""
    test_text = test_result_text(tests)
    return (
        f"Review round: {round_no}\n"
        f"You are the {seat}. You are read-only: do not modify any file.\n\n"
        "Judge the implementation of the plan below. Answer with a review-verdict block:\n"
        "<!-- tunaflow:review-verdict -->\nverdict: pass | fail | conditional\n"
        "scores: plan_coverage, code_quality, test_coverage, convention (1-5)\n"
        "failed_subtasks: [numbers]\nfindings:\n- ...\nrecommendations:\n- ...\n"
        "<!-- /tunaflow:review-verdict -->\n\n"
        f"## Plan\n\n{plan_brief(plan)}\n\n## Test result\n\n{test_text}\n\n"
        f"## Diff against the base\n\n```diff\n{diff}\n```\n"
    )


def result_document(plan: PlanRecord, verdict: AggregateVerdict | None, rounds: int,
                    decision: str | None = None) -> str:
    """The Markdown of ``{slug}-result.md`` written when a plan is done (``decision``: how it was accepted)."""
    lines = [f"# Result: {plan.title}", "", f"Review rounds: {rounds}", ""]
    if decision:
        lines += [f"Decision: {decision}", ""]
    if verdict is not None:
        lines += [f"Final verdict: {verdict.verdict or 'none'}", ""]
        if verdict.findings:
            lines += ["Findings:", *[f"- {f}" for f in verdict.findings], ""]
    lines += ["Subtasks:", *[f"- [{'x' if s.status == 'done' else ' '}] {s.index}. {s.title}" for s in plan.subtasks]]
    return "\n".join(lines) + "\n"
