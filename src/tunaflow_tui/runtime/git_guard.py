"""Git integrity around the plan's agent turns, and tunaflow's own commits (spec §3 "Git integrity").

Before each Developer or review turn the repository is snapshotted (refs, both HEADs, stash,
remotes on disk, shared hooks and config, the user's global git config, and — when the plan works
in a worktree of its own — the files of the user's main working tree); afterwards it is checked and
repaired, and what was found becomes a ``git_integrity`` plan event and notices. tunaflow's own commits go only to the plan's
branch and run only the hooks the repository had when the plan was approved.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tunaflow_tui.core import gitops
from tunaflow_tui.core.counting import plural
from tunaflow_tui.core.gitops import refguard
from tunaflow_tui.core.gitops.hooks import HookBaseline, hook_fingerprint, hooks_dir, trusted_hooks
from tunaflow_tui.core.storage.gitexclude import EXCLUDE_PATTERN
from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.core.workflow.phases import Actor, PlanEventType
from tunaflow_tui.runtime.events import NoticeRaised

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import StepContext

BASELINE_EVENT = PlanEventType.GIT_BASELINE
INTEGRITY_EVENT = PlanEventType.GIT_INTEGRITY
HOOKS_SKIPPED_EVENT = PlanEventType.HOOKS_SKIPPED
DEVELOPER = "the Developer"
REVIEWER = "a reviewer"

EMPTY_REPOSITORY = (
    "this git repository has no commits yet, so a plan has nothing to branch from. Commit your files "
    "first (git add -A && git commit -m \"Initial commit\"), or let tunaflow create the initial commit."
)


class EmptyRepositoryError(ValueError):
    """The project is a git repository without a single commit: no plan branch can start from it."""


def needs_initial_commit(project_dir: Path) -> bool:
    """True for a git repository that has no commit yet (a non-git folder is not one)."""
    return gitops.is_git_repo(project_dir) and not gitops.has_commits(project_dir)


async def require_commit(rt: StepContext) -> None:
    """Refuse (``EmptyRepositoryError``) to start a plan in a git repository with no commits."""
    if not rt.settings.workflow.use_worktree:
        return
    if await asyncio.to_thread(needs_initial_commit, rt.project_dir):
        raise EmptyRepositoryError(f"Cannot start the plan: {EMPTY_REPOSITORY}")


def create_initial_commit(project_dir: Path, message: str = "Initial commit") -> str:
    """Commit the project's current files (tunaflow's own folder excluded) as its first commit."""
    root = gitops.repo_root(project_dir)
    gitops.add_local_exclude(root, EXCLUDE_PATTERN)
    return gitops.initial_commit(root, message)


# ----------------------------------------------------------------------------------- hooks
def record_baseline(rt: StepContext, plan: PlanRecord, worktree: Path) -> HookBaseline:
    """Fingerprint the hooks git runs in ``worktree`` and keep it with the plan (at approval)."""
    baseline = hook_fingerprint(worktree)
    names = ", ".join(sorted(baseline.files)) or "none"
    rt.service.record(plan.id, BASELINE_EVENT, Actor.SYSTEM,
                            {"hooks": baseline.to_json(), "summary": f"trusted hooks: {names}"})
    return baseline


def refresh_baseline(rt: StepContext, plan: PlanRecord, worktree: Path) -> None:
    """Take the baseline again after the user's own ``worktree_setup`` (it may install hooks), if they changed."""
    if hook_fingerprint(worktree) != hook_baseline(rt, plan):
        record_baseline(rt, plan, worktree)


def hook_baseline(rt: StepContext, plan: PlanRecord) -> HookBaseline:
    """The hooks the plan's repository had at approval (taken now for a plan from before the record)."""
    for event in reversed(rt.store.list_plan_events(plan.id)):
        raw = event.detail.get("hooks") if event.type == BASELINE_EVENT else None
        if isinstance(raw, Mapping):
            return HookBaseline.from_json(raw)
    root = Path(plan.worktree_path) if plan.worktree_path else rt.project_dir
    return record_baseline(rt, plan, root)


def commit_on_plan_branch(
    rt: StepContext, plan: PlanRecord, root: Path, message: str
) -> tuple[str | None, tuple[str, ...]]:
    """tunaflow's own commit in the plan's worktree: on its branch only, with trusted hooks only.

    Returns the commit (None: nothing to commit) and the hooks that were left out because they
    appeared or changed since approval. ``GitError`` when the worktree is not on the plan's branch.
    """
    if plan.git_branch:
        on = gitops.current_branch(root)
        if on != plan.git_branch:
            raise gitops.GitError(f"tunaflow commits only to {plan.git_branch}, and the worktree is on "
                                  f"{on or 'a detached HEAD'}")
    with trusted_hooks(root, hook_baseline(rt, plan)) as hooks:
        sha = gitops.commit_all(root, message, git_config=hooks.config_args)
    return sha, hooks.skipped


async def commit(rt: StepContext, plan: PlanRecord, root: Path, message: str) -> str | None:
    """:func:`commit_on_plan_branch` off the event loop; skipped hooks are recorded and shown."""
    sha, skipped = await asyncio.to_thread(commit_on_plan_branch, rt, plan, root, message)
    if skipped:
        report_skipped_hooks(rt, plan, skipped, message)
    return sha


def report_skipped_hooks(rt: StepContext, plan: PlanRecord, skipped: tuple[str, ...], what: str) -> None:
    """Record and show hooks tunaflow did not run because they are not the ones it was approved with.

    Once per plan and set of hooks: every later commit and the merge leave the same hooks out, and
    saying so again each time would read as new changes.
    """
    if any(_skipped_hooks(event.detail) == sorted(skipped)
           for event in rt.store.list_plan_events(plan.id) if event.type == HOOKS_SKIPPED_EVENT):
        return
    rt.service.record(plan.id, HOOKS_SKIPPED_EVENT, Actor.SYSTEM,
                      {"hooks": list(skipped), "for": what[:200], "summary": f"not run: {', '.join(skipped)}"})
    they = "it" if len(skipped) == 1 else "they"
    rt.emit(NoticeRaised(
        f"tunaflow did not run the {plural(len(skipped), 'hook')} {', '.join(skipped)}: {they} appeared or changed "
        "after the plan was approved.", "warning"))


def _skipped_hooks(detail: Mapping[str, object]) -> list[str]:
    recorded = detail.get("hooks")
    return sorted(str(name) for name in recorded) if isinstance(recorded, list | tuple) else []


def merge_plan_branch(rt: StepContext, plan: PlanRecord) -> gitops.MergeResult:
    """Merge the plan's branch into its base in the user's tree, running only trusted hooks.

    The hooks run from a private copy when they live inside the working tree: the merge itself
    rewrites that tree, and must not then run hooks it just brought in.
    """
    assert plan.git_branch and plan.base_branch
    project = rt.project_dir
    hooks = hooks_dir(project).resolve()
    in_tree = project in hooks.parents and hooks.relative_to(project).parts[0] != ".git"
    with trusted_hooks(project, hook_baseline(rt, plan), copy=in_tree) as trusted:
        result = gitops.merge_branch(project, plan.git_branch, plan.base_branch, git_config=trusted.config_args)
    if trusted.skipped:
        report_skipped_hooks(rt, plan, trusted.skipped, f"merge {plan.git_branch}")
    return result


# ----------------------------------------------------------------------------------- agent turns
def plan_ref(plan: PlanRecord) -> str | None:
    """The plan's branch as a full ref, when it has a worktree of its own."""
    return f"refs/heads/{plan.git_branch}" if plan.git_branch and plan.worktree_path else None


def other_plans_refs(rt: StepContext, plan: PlanRecord,
                     at_work: frozenset[int] | None = None) -> tuple[frozenset[str], frozenset[str]]:
    """Branches of the project's other plans: (those of plans at work, which tunaflow may move meanwhile;
    those of the others, whose change is reported). Without ``at_work`` every other plan counts as at work."""
    moving: set[str] = set()
    idle: set[str] = set()
    for other in rt.store.list_plans():
        if other.id == plan.id:
            continue
        refs = moving if at_work is None or other.id in at_work else idle
        refs.add(f"refs/heads/tunaflow/{other.slug}")
        if other.git_branch:
            refs.add(f"refs/heads/{other.git_branch}")
    return frozenset(moving), frozenset(idle - moving)


@dataclass(frozen=True)
class TurnGuard:
    """The repository before an agent turn: its refs and shared files, the user's own tree, and who else worked.

    ``company`` (other plans working when the turn started) and ``mark`` (to ask the slots who started
    since) tell :func:`after_turn` whose agents shared the repository with this turn.
    """

    refs: refguard.RefSnapshot
    main_tree: gitops.Snapshot | None  # None when the agent works in the main tree itself
    company: frozenset[int] = frozenset()
    mark: int = 0


SHARED_KINDS = frozenset({"ref", "stash", "push", "shared_git", "main_head", "main_tree"})
"""What an agent of any plan could have changed (the plan's own worktree HEAD and branch are its own)."""


def _company_note(others: frozenset[int]) -> str:
    names = ", ".join(str(n) for n in sorted(others))
    if len(others) == 1:
        return f" (Plan {names} was at work at the same time: it may have been its doing.)"
    return f" (Plans {names} were at work at the same time: it may have been their doing.)"


def with_company(report: refguard.TurnReport, others: frozenset[int]) -> refguard.TurnReport:
    """The report with each finding about shared git state saying which other plans' agents worked meanwhile."""
    if not others:
        return report
    note = _company_note(others)
    return dataclasses.replace(report, findings=tuple(
        dataclasses.replace(f, text=f.text + note) if f.kind in SHARED_KINDS else f for f in report.findings))


def _outside_tunaflow(rel: str) -> bool:
    return not (rel == ".tunaflow" or rel.startswith(".tunaflow/"))


async def before_turn(rt: StepContext, plan: PlanRecord) -> TurnGuard | None:
    """Snapshot the repository before an agent turn of ``plan`` (None when it is not a git repository)."""
    worktree = Path(plan.worktree_path) if plan.worktree_path else None

    unguarded: list[str] = []

    def snapshot() -> TurnGuard | None:
        if not rt.is_git or not gitops.has_commits(rt.project_dir):
            return None
        refs = refguard.take_snapshot(rt.project_dir, worktree)
        main = None
        if worktree is not None:  # an agent in its own worktree has no business in the user's tree
            try:
                main = gitops.snapshot(rt.project_dir)
            except (gitops.GitError, OSError) as exc:  # e.g. an unreadable file: the turn still runs
                unguarded.append(str(exc)[:300])
        return TurnGuard(refs, main)

    guard = await asyncio.to_thread(snapshot)
    if guard is not None:
        company = rt.slots.at_work() | await asyncio.to_thread(rt.slots.working_elsewhere)
        guard = dataclasses.replace(guard, company=company - {plan.id}, mark=rt.slots.mark())
    if unguarded:
        rt.emit(NoticeRaised(f"tunaflow could not record your own working tree before this turn, so writes "
                             f"there will not be caught: {unguarded[0]}", "warning"))
    return guard


def _uncommitted(status: str) -> frozenset[str]:
    """The paths ``git status --porcelain=v1 -z`` lists (both sides of a rename)."""
    paths: set[str] = set()
    entries = iter(status.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        paths.add(entry[3:])
        if entry[0] in "RC":
            paths.add(next(entries, ""))
    return frozenset(paths)


def _came_with_head(before: gitops.Fingerprint, now: gitops.Fingerprint, changed: list[str]) -> frozenset[str]:
    """Of ``changed``, the files that are now exactly as a HEAD that moved during the turn has them."""
    if before.head == now.head:
        return frozenset()
    uncommitted = _uncommitted(now.status)
    return frozenset(p for p in changed if p not in uncommitted)


def check_main_tree(project: Path, main: gitops.Snapshot, *, actor: str, label: str) -> refguard.Finding | None:
    """Put back files an agent wrote in the user's main working tree; its versions are kept under a ref.

    tunaflow's own folder is not looked at. HEAD and the index are left alone (the user may commit).
    A file that changed because HEAD moved meanwhile and is now exactly as the new HEAD has it came
    with a commit or merge in that tree (another plan merged while this turn ran, or the user's own):
    it is left as it is.
    """
    now = gitops.fingerprint(project)
    changed = [p for p in gitops.changed_paths(main.fingerprint, now) if _outside_tunaflow(p)]
    with_head = _came_with_head(main.fingerprint, now, changed)
    changed = [p for p in changed if p not in with_head]
    if not changed:
        return None
    try:
        sha = gitops.keep_files(project, changed, f"{actor} wrote these in the main working tree")
        ref = refguard.keep_as_rescue(project, label, sha, "main-tree") if sha else None
    except gitops.GitError:
        ref = None
    restored = gitops.restore_files(project, main, skip=lambda rel: not _outside_tunaflow(rel) or rel in with_head)
    names = ", ".join(restored[:5]) + (" …" if len(restored) > 5 else "")
    # the user may have edited their own tree meanwhile: nothing is lost, and the way back is named
    keep_note = (f" The changed versions are kept: if a change was yours, get it back with "
                 f"git restore --source={ref} -- <file>." if ref else "")
    return refguard.Finding(
        "main_tree", f"{actor[:1].upper()}{actor[1:]} changed {plural(len(restored), 'file')} in your own working "
        f"tree ({names}); tunaflow put them back.{keep_note}", repaired=True, rescue_ref=ref)


def _level(finding: refguard.Finding) -> str:
    if finding.needs_decision:
        return "error"
    if finding.repaired or finding.kind in ("push", "shared_git"):
        return "warning"
    return "info"


async def after_turn(
    rt: StepContext,
    plan: PlanRecord,
    guard: TurnGuard | None,
    *,
    actor: str,
    restore_worktree: Callable[[], object] | None = None,
) -> refguard.TurnReport:
    """Check and repair the repository after ``actor``'s turn; record and show what was found.

    ``restore_worktree`` (reviewers) puts the worktree's files back once the hooks are safe again.
    """
    if guard is None:
        if restore_worktree is not None:
            await asyncio.to_thread(restore_worktree)
        return refguard.TurnReport()
    # the other plans tunaflow worked on during the turn (here or in another process): their branches may move
    elsewhere = await asyncio.to_thread(rt.slots.working_elsewhere)
    others = (guard.company | rt.slots.working_since(guard.mark) | elsewhere) - {plan.id}
    moving, idle = other_plans_refs(rt, plan, others)
    report = await asyncio.to_thread(
        refguard.check_turn, guard.refs, plan_ref=plan_ref(plan), actor=actor,
        allow_push=rt.settings.workflow.allow_push, repair_refs=plan.worktree_path is not None,
        ignore_refs=moving, watch_refs=idle, rescue_label=plan.slug, restore_worktree=restore_worktree,
    )
    if guard.main_tree is not None:  # after the shared hooks are safe again: restoring runs git
        main = await asyncio.to_thread(check_main_tree, rt.project_dir, guard.main_tree, actor=actor, label=plan.slug)
        if main is not None:
            report = dataclasses.replace(report, findings=(*report.findings, main))
    report = with_company(report, others)  # several plans' agents share one repository: it may be another's
    if report.changed:
        rt.service.record(plan.id, INTEGRITY_EVENT, Actor.SYSTEM, {
            "actor": actor, "decision": report.needs_decision,
            "summary": " ".join(f.text for f in report.findings)[:500],
            "findings": [f.to_json() for f in report.findings],
        })
        for finding in report.findings:
            rt.emit(NoticeRaised(finding.text, _level(finding)))
    return report
