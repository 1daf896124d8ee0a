"""Review: the project's tests, two blind read-only reviewers in parallel, the guarded worktree."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from tunaflow_tui.core import gitops
from tunaflow_tui.core.counting import counted
from tunaflow_tui.core.folderguard import FolderSnapshot, FolderTooLargeError, restore_folder, snapshot_folder
from tunaflow_tui.core.gitops.worktree_include import committed_private_paths
from tunaflow_tui.core.markers import ReviewVerdict
from tunaflow_tui.core.plandocs import write_review_doc
from tunaflow_tui.core.projectenv import TestEnvironment, detect_environment, node_modules_for_run
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.testrunner import TestCommand, TestResult, detect_test_command, run_tests
from tunaflow_tui.core.workflow import AggregateVerdict, ReviewFinished, ReviewStarted, SeatResult, aggregate
from tunaflow_tui.core.workflow.phases import Actor, PlanEventType
from tunaflow_tui.core.workflow.service import plain_json
from tunaflow_tui.runtime import git_guard, role_prompts
from tunaflow_tui.runtime.development import workdir
from tunaflow_tui.runtime.events import NoticeRaised, ProjectTestsRunning
from tunaflow_tui.runtime.plan_env import plan_environment
from tunaflow_tui.runtime.planning import record_rejections
from tunaflow_tui.runtime.test_runs import OnStart, run_tests_for_plan
from tunaflow_tui.runtime.turn_spec import TurnSpec

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import StepContext

SEATS: tuple[str, ...] = ("reviewer", "verifier")
DIFF_MAX_BYTES = 120_000


def without_review_documents(diff: str, slug: str) -> str:
    """The diff without the plan's own review documents: reviewers judge the code, not earlier verdicts."""
    prefix = f"docs/plans/{slug}-review-r"
    kept: list[str] = []
    skipping = False
    for line in diff.splitlines(keepends=True):
        if line.startswith("diff --git "):
            skipping = f" a/{prefix}" in line or f" b/{prefix}" in line
        if not skipping:
            kept.append(line)
    return "".join(kept)


def ensure_review_branch(rt: StepContext, plan: PlanRecord) -> PlanRecord:
    """The plan's review branch (a roundtable), created on the first review."""
    if plan.review_branch_id is not None:
        return plan
    parent = f"branch:{plan.impl_branch_id}" if plan.impl_branch_id else "main"
    branch = rt.store.create_branch(
        conversation_id=parent,
        checkpoint_id=None,
        parent_branch_id=plan.impl_branch_id,
        mode="roundtable",
        kind="review",
        label=f"Review: {plan.title}"[:120],
        git_branch=plan.git_branch,
        worktree_path=plan.worktree_path,
    )
    return rt.store.update_plan(plan.id, review_branch_id=branch.id)


def _run_in_environment(root: Path, command: TestCommand, environment: TestEnvironment, plan_env: Mapping[str, str],
                        timeout_s: float, on_start: OnStart | None = None) -> TestResult:
    with node_modules_for_run(environment, root):
        return run_tests(root, command, timeout_s=timeout_s, env={**environment.env, **plan_env}, on_start=on_start)


async def run_project_tests(
    rt: StepContext, plan: PlanRecord, root: Path, before: gitops.Snapshot | None
) -> TestResult | None:
    """Run the project's tests in the worktree, in the project's environment, and record the result.

    The environment (``core.projectenv``) is the project's own interpreter with the worktree's code
    first, or the main tree's ``node_modules``; which one ran is part of the ``tests_ran`` event. With
    ``before`` (a snapshot of the worktree) whatever the test run leaves behind — caches, reports,
    bytecode — is put back afterwards, so the reviewers judge the Developer's work and no by-product
    reaches the plan's branch.
    """
    environment = await asyncio.to_thread(detect_environment, rt.project_dir, root)
    configured = rt.settings.workflow.test_command
    command = detect_test_command(root, configured, python=environment.python)
    if command is None:
        rt.service.record(plan.id, PlanEventType.TESTS_RAN, Actor.SYSTEM, {"status": "not_detected"})
        rt.progress(f"Plan {plan.id}: no test command detected; the reviewers are told so.", plan.id)
        return None
    rt.progress(f"Plan {plan.id}: Running the project's tests: {command.label} — environment: {environment.label}",
                plan.id)
    rt.emit(ProjectTestsRunning(plan.id, command.label, running=True))
    try:
        with plan_environment(rt.project_dir, plan.id, root) as plan_env:  # its own TMPDIR, removed after
            result = await run_tests_for_plan(
                rt, plan.id, command.label,
                lambda on_start: _run_in_environment(root, command, environment, plan_env,
                                                     rt.settings.workflow.test_timeout_s, on_start))
    finally:
        rt.emit(ProjectTestsRunning(plan.id, command.label, running=False))
        if before is not None:
            leftovers = await asyncio.to_thread(gitops.restore, root, before)
            if leftovers:
                rt.service.record(plan.id, PlanEventType.TEST_BYPRODUCTS_REMOVED, Actor.SYSTEM, {"paths": leftovers[:50]})
    result = replace(result, environment=environment.label)
    rt.service.record(
        plan.id,
        PlanEventType.TESTS_RAN,
        Actor.SYSTEM,
        {
            "command": command.label,
            "status": result.status,
            "exit_code": result.exit_code,
            "duration_s": round(result.duration_s, 3),
            "summary": result.summary,
            "environment": environment.label,
            "output_tail": result.output[-8000:],
        },
    )
    if result.status == "error":
        rt.progress(f"Plan {plan.id}: Tests could not run (error, not a failure): {result.summary}", plan.id)
    else:
        rt.progress(f"Plan {plan.id}: Tests {result.status}: {result.summary}", plan.id)
    return result


def _check_private_files(rt: StepContext, plan: PlanRecord, root: Path) -> None:
    """Warn when a file copied by .worktreeinclude reached a commit of the plan's branch anyway."""
    if not plan.base_branch or not plan.worktree_path:
        return
    leaked = committed_private_paths(root, plan.base_branch)
    if leaked:
        rt.service.record(plan.id, PlanEventType.PRIVATE_FILES_COMMITTED, Actor.SYSTEM, {"paths": leaked[:50]})
        rt.emit(NoticeRaised(
            f"The Developer committed {counted(len(leaked), 'file')} copied by .worktreeinclude on {plan.git_branch}: "
            f"{', '.join(leaked[:5])}. tunaflow keeps them out of the branch's files, but they stay in its "
            "history: rewrite it before you push the branch.", "error"))


async def _run_seat(
    rt: StepContext, plan: PlanRecord, seat: str, round_no: int, diff: str, tests: TestResult | None
) -> SeatResult:
    engine, _config = rt.turns.engine_for(seat)
    conversation = f"branch:{plan.review_branch_id}"
    prompt = role_prompts.review_prompt(plan, seat=seat, round_no=round_no, diff=diff, tests=tests)
    try:
        # blind: a fresh session and no conversation history — only the plan, the diff and the tests
        result = await rt.turns.run(TurnSpec(seat, conversation, prompt, cwd=workdir(rt, plan), plan=plan, blind=True))
    except Exception as exc:  # a seat that cannot even start is a review error, not a failure
        return SeatResult(seat=seat, engine=engine.name, verdict=None, error=f"could not run: {exc}")
    record_rejections(rt, result.parse, seat, plan.id)
    if not result.ok:
        reason = result.message.error_message or result.message.status
        return SeatResult(seat=seat, engine=engine.name, verdict=None, error=reason)
    verdicts = [m for m in result.parse.markers if isinstance(m, ReviewVerdict) and m.accepted]
    if not verdicts:
        return SeatResult(seat=seat, engine=engine.name, verdict=None, error="the reviewer gave no verdict")
    v = verdicts[-1]
    return SeatResult(
        seat=seat,
        engine=engine.name,
        verdict=v.verdict,
        scores=dict(v.scores.items()) if hasattr(v.scores, "items") else dict(v.scores),
        failed_subtasks=tuple(v.failed_subtasks),
        findings=tuple(v.findings),
        recommendations=tuple(v.recommendations),
    )


def _review_markdown(plan: PlanRecord, round_no: int, agg: AggregateVerdict, tests: Mapping[str, object] | None,
                     modified: list[str]) -> str:
    lines = [f"# Review round {round_no}: {plan.title}", "", f"Verdict: {agg.verdict or 'review error'}", ""]
    if tests is not None:
        lines += [f"Tests: {tests.get('status')} — {tests.get('summary')}"]
        if tests.get("environment"):
            lines.append(f"Environment: {tests.get('environment')}")
        lines.append("")
    if modified:
        lines += ["Reviewer modified code (reverted):", *[f"- {p}" for p in modified], ""]
    for seat in agg.seats:
        lines.append(f"## {seat.seat} ({seat.engine}): {seat.verdict or 'error'}")
        if seat.error:
            lines.append(f"Review error: {seat.error}")
        lines += [f"- {name}: {score}" for name, score in seat.scores.items()]
        if seat.findings:
            lines += ["", "Findings:", *[f"- {f}" for f in seat.findings]]
        if seat.recommendations:
            lines += ["", "Recommendations:", *[f"- {r}" for r in seat.recommendations]]
        lines.append("")
    return "\n".join(lines)


async def _seat_and_record(
    rt: StepContext, plan: PlanRecord, seat: str, round_no: int, diff: str, tests: TestResult | None
) -> SeatResult:
    result = await _run_seat(rt, plan, seat, round_no, diff, tests)
    # each seat's answer is kept as it arrives, so a crash mid-review loses only the seats still running
    rt.service.record(plan.id, PlanEventType.SEAT_FINISHED, Actor.SYSTEM, {"round": round_no, "seat": result.to_json()})
    return result


def finished_seats(rt: StepContext, plan_id: int, round_no: int) -> dict[str, SeatResult]:
    """The seats of review round ``round_no`` that already answered (or errored)."""
    found: dict[str, SeatResult] = {}
    for event in rt.store.list_plan_events(plan_id):
        if event.type == PlanEventType.SEAT_FINISHED and event.detail.get("round") == round_no:
            raw = event.detail.get("seat")
            if isinstance(raw, Mapping):
                seat = SeatResult.from_json(raw)
                found[seat.seat] = seat
    return found


async def run_review(
    rt: StepContext,
    plan_id: int,
    *,
    seats: tuple[str, ...] | None = None,
    previous: dict[str, SeatResult] | None = None,
) -> PlanRecord:
    """Run a review round and open the decision.

    ``seats=None`` starts a new round with every seat; a tuple re-runs those seats in the current
    round (a retry, or a resume after a crash), keeping the ``previous`` answers of the others.
    The round's test run counts against ``max_parallel_plans`` like a Developer: without a slot the
    plan waits, queued (and returns unchanged if it leaves the queue without starting).
    """
    if not await rt.slots.take(plan_id):
        return rt.get_plan(plan_id)
    plan = rt.get_plan(plan_id)
    if seats is None:
        plan = rt.apply(plan.id, ReviewStarted(), Actor.SYSTEM)
        seats = SEATS
    previous = dict(previous or {})
    plan = ensure_review_branch(rt, plan)
    round_no = plan.review_round
    rt.service.record(plan.id, PlanEventType.AGENT_STARTED, Actor.SYSTEM,
                            {"role": "review", "step": "review", "seats": list(seats), "round": round_no})
    try:
        if seats:
            results, tests, modified = await _review_round(rt, plan, seats, round_no)
        else:  # every seat had answered before an interruption: only the verdict is left to open
            results, tests, modified = [], None, []
    except asyncio.CancelledError:
        raise
    except FolderTooLargeError as exc:  # refused up front: the reviewers would have run unguarded
        reason = f"the review did not start: {exc}"
        rt.emit(NoticeRaised(reason, "error"))
        results = [SeatResult(seat=s, engine=rt.turns.engine_for(s)[0].name, verdict=None, error=reason) for s in seats]
        tests, modified = None, []
    except Exception as exc:  # git, disk, test runner: the round becomes a review error the user can retry
        reason = f"the review could not run: {type(exc).__name__}: {exc}"
        rt.emit(NoticeRaised(reason, "error"))
        results = [SeatResult(seat=s, engine=rt.turns.engine_for(s)[0].name, verdict=None, error=reason) for s in seats]
        tests, modified = None, []
    rt.service.record(plan.id, PlanEventType.AGENT_FINISHED, Actor.SYSTEM, {"role": "review", "step": "review",
                                                                  "round": round_no})
    combined = dict(previous)
    combined.update({r.seat: r for r in results})
    agg = aggregate([combined[s] for s in SEATS if s in combined])
    plan = rt.apply(plan.id, ReviewFinished(aggregate=agg), Actor.AGENT)
    # keep the test result and any reverted reviewer edit with the decision, for the verdict card
    detail = plain_json(plan.pending_detail or {})
    detail["reviewer_modified"] = modified
    detail["tests"] = None if tests is None else {"status": tests.status, "summary": tests.summary,
                                                  "environment": tests.environment}
    plan = rt.store.update_plan(plan.id, pending_detail=detail)
    if not agg.errors:
        # with an errored seat the round may still be retried: its document waits, so the retried seat
        # cannot read the other seat's answer in the worktree
        await write_review_document(rt, plan)
    rt.plan_changed(plan)
    return plan


async def write_review_document(rt: StepContext, plan: PlanRecord) -> None:
    """Write and commit ``{slug}-review-rN.md`` for the round the pending decision is about."""
    detail = plan.pending_detail or {}
    raw = detail.get("aggregate")
    round_no = detail.get("round") or plan.review_round
    if not isinstance(raw, Mapping) or not isinstance(round_no, int) or round_no < 1:
        return
    agg = AggregateVerdict.from_json(raw)
    raw_tests = detail.get("tests")
    tests = raw_tests if isinstance(raw_tests, Mapping) else None
    raw_modified = detail.get("reviewer_modified")
    modified = [str(p) for p in raw_modified] if isinstance(raw_modified, list | tuple) else []
    root = workdir(rt, plan)
    content = _review_markdown(plan, round_no, agg, tests, modified)
    try:
        await asyncio.to_thread(write_review_doc, root, plan.slug, round_no, content)
        if plan.worktree_path:
            await git_guard.commit(rt, plan, root, f"Review round {round_no}: {plan.title}")
    except Exception as exc:  # the verdict still reaches the user; the document is a record
        rt.emit(NoticeRaised(f"Could not write or commit the review document: {exc}", "warning"))


def _put_back(root: Path, snap: gitops.Snapshot | None, folder: FolderSnapshot | None) -> list[str]:
    """Restore the reviewed worktree (or plain folder) from its snapshot; the paths that had changed."""
    if snap is not None:
        after = gitops.fingerprint(root)
        if after != snap.fingerprint:
            restored = gitops.restore(root, snap)
            return restored or gitops.changed_paths(snap.fingerprint, after) or ["(git index or history)"]
    if folder is not None:
        return restore_folder(folder)
    return []


async def _review_round(
    rt: StepContext, plan: PlanRecord, seats: tuple[str, ...], round_no: int
) -> tuple[list[SeatResult], TestResult | None, list[str]]:
    root = workdir(rt, plan)
    # one snapshot serves twice: the test run's leftovers are restored from it, which leaves the
    # worktree exactly as snapshotted, so it is also the state the read-only reviewers must not change
    snap = await asyncio.to_thread(gitops.snapshot, root) if rt.is_git else None
    tests = await run_project_tests(rt, plan, root, snap)
    if rt.is_git:
        await asyncio.to_thread(_check_private_files, rt, plan, root)
    diff = ""
    if plan.base_branch and plan.worktree_path:
        diff = await asyncio.to_thread(gitops.diff_against_base, root, plan.base_branch, max_bytes=DIFF_MAX_BYTES)
        diff = without_review_documents(diff, plan.slug)
    # without git the files are copied aside instead (after the tests: their by-products are not the
    # reviewers' doing); a folder too big to copy refuses the review rather than leave it unguarded
    folder = None if rt.is_git else await asyncio.to_thread(snapshot_folder, root)
    modified: list[str] = []
    try:
        refs = await git_guard.before_turn(rt, plan)
        rt.progress(f"Plan {plan.id}: review round {round_no}: {', '.join(seats)} reading the work (read-only)…",
                    plan.id)
        results = list(await asyncio.gather(*(_seat_and_record(rt, plan, s, round_no, diff, tests) for s in seats)))
        # the shared hooks and config first, then the files, then HEAD and the refs
        report = await git_guard.after_turn(rt, plan, refs, actor=git_guard.REVIEWER,
                                            restore_worktree=lambda: modified.extend(_put_back(root, snap, folder)))
    finally:
        if folder is not None:
            folder.discard()
    modified += [p for p in report.shared_paths if p not in modified]
    if modified:
        rt.service.record(plan.id, PlanEventType.REVIEWER_MODIFIED_CODE, Actor.SYSTEM,
                                {"paths": modified, "round": round_no, "reverted": True})
        rt.emit(NoticeRaised(
            f"A reviewer modified {counted(len(modified), 'file')}; the changes were reverted: "
            + ", ".join(modified[:5]), "warning"))
    if report.needs_decision:
        void = f"the review round is void: {report.reason}"
        results = [replace(r, verdict=None, error=void[:1000]) for r in results]
    return results, tests, modified
