"""The ref guard's findings compared whole, and the traces its repairs leave where a user looks: the
branches' logs, the rescue refs' names, the stash, a remote reached by path, the shared hooks."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from guarded_repo import PLAN, PLAN_REF, commit, git, rescued, setup, sha

from tunaflow_tui.core.gitops.refguard import Finding, check_turn, keep_as_rescue, take_snapshot
from tunaflow_tui.core.gitops.shared import MAX_KEPT_BYTES

STAMP = r"\d{8}T\d{6}"


def _log(repo: Path, ref: str) -> str:
    """The newest entry of a ref's log, as ``git reflog`` shows it."""
    return git(repo, "reflog", "show", "-1", "--format=%gs", ref, "--")


# ------------------------------------------------------------------ the plan's worktree
def test_commits_on_a_branch_of_the_agents_own_are_carried_from_the_plans_tip_of_now(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    on_plan = commit(wt, "one.py", "one, on the plan's branch")
    git(wt, "checkout", "-q", "-b", "side")
    side = commit(wt, "two.py", "two, on a branch of its own")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert report.findings == (
        Finding("worktree_head", f"The Developer left {PLAN} for side: its worktree is back on {PLAN}; its 1 commit "
                f"was moved onto {PLAN}.", repaired=True, ref="refs/heads/side", before=on_plan, after=side),
        Finding("ref", "The Developer created side; tunaflow removed it.", repaired=True, ref="refs/heads/side",
                after=side),
    )
    assert sha(git_repo, PLAN) == side and git(wt, "symbolic-ref", "HEAD") == PLAN_REF
    assert _log(git_repo, PLAN) == "tunaflow: the agent's commits back on the plan's branch"
    assert _log(wt, "HEAD") == "tunaflow: back on the plan's branch"


def test_commits_on_a_detached_head_come_back_when_the_plans_branch_was_deleted_too(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    tip = sha(git_repo, PLAN)
    snap = take_snapshot(git_repo, wt)
    git(wt, "checkout", "-q", "--detach")
    one = commit(wt, "one.py", "one")
    git(wt, "update-ref", "-d", PLAN_REF)

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert report.findings == (Finding(
        "worktree_head", f"The Developer left {PLAN} for a detached HEAD at {one[:10]}: its worktree is back on "
        f"{PLAN}; its 1 commit was moved onto {PLAN}.", repaired=True, ref=None, before=tip, after=one),)
    assert sha(git_repo, PLAN) == one and rescued(git_repo) == []


def test_a_switch_to_unrelated_history_is_told_whole_and_its_work_kept_under_worktree(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    tip = sha(git_repo, PLAN)
    (git_repo / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (git_repo / "build.log").write_text("tracked although ignored\n", encoding="utf-8")
    git(git_repo, "checkout", "-q", "release")
    git(git_repo, "add", "-f", ".gitignore", "build.log")
    git(git_repo, "commit", "-q", "-m", "release keeps a log")
    git(git_repo, "checkout", "-q", "main")
    release = sha(git_repo, "release")
    snap = take_snapshot(git_repo, wt)
    git(wt, "checkout", "-q", "release")
    (wt / "build.log").write_text("the agent's edit of a tracked, ignored file\n", encoding="utf-8")
    (wt / "loose.txt").write_text("uncommitted\n", encoding="utf-8")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    [kept] = rescued(git_repo)
    assert re.fullmatch(rf"refs/tunaflow/rescue/project/{STAMP}-1-worktree", kept)
    assert report.findings == (Finding(
        "worktree_head", f"The Developer switched its worktree from {PLAN} to release, which does not build on the "
        f"plan's branch; tunaflow put the worktree back on {PLAN}. Its work there is kept at {kept}.",
        repaired=False, needs_decision=True, ref="refs/heads/release", before=tip, after=release, rescue_ref=kept),)
    assert git(git_repo, "ls-tree", "-r", "--name-only", kept).split() == [
        ".gitignore", "README.md", "build.log", "loose.txt"]
    assert git(git_repo, "show", f"{kept}:build.log") == "the agent's edit of a tracked, ignored file"


def test_work_on_an_orphan_branch_is_kept_as_a_commit_of_its_own(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    git(wt, "checkout", "-q", "--orphan", "scratch")
    (wt / "loose.txt").write_text("on no history at all\n", encoding="utf-8")

    [finding] = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer").findings

    assert finding.needs_decision and finding.ref == "refs/heads/scratch" and finding.after is None
    assert finding.rescue_ref is not None
    assert git(git_repo, "log", "--format=%P|%s", finding.rescue_ref) == (
        "|tunaflow: the worktree as an agent left it")
    assert git(git_repo, "show", f"{finding.rescue_ref}:loose.txt") == "on no history at all"


def test_the_rescue_commit_is_the_users_own_identity_from_the_repository(
        git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wt = setup(git_repo, tmp_path)
    git(git_repo, "config", "user.name", "Repo Owner")
    git(git_repo, "config", "user.email", "owner@example.invalid")
    snap = take_snapshot(git_repo, wt)
    git(wt, "checkout", "-q", "release")
    (wt / "loose.txt").write_text("uncommitted\n", encoding="utf-8")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-global-config"))

    [finding] = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer").findings

    assert finding.rescue_ref is not None
    assert git(git_repo, "log", "-1", "--format=%an <%ae>", finding.rescue_ref) == "Repo Owner <owner@example.invalid>"


def test_a_turn_in_the_users_own_tree_before_the_plan_has_a_branch_finds_nothing(git_repo: Path) -> None:
    git(git_repo, "branch", "release")
    snap = take_snapshot(git_repo)
    assert snap.worktree is None and snap.worktree_head is None
    report = check_turn(snap, plan_ref="refs/heads/tunaflow/not-yet", actor="the Developer", repair_refs=False)
    assert report.findings == ()


def test_a_worktree_without_a_plan_branch_is_not_looked_at(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    git(wt, "checkout", "-q", "--detach")
    assert check_turn(snap, plan_ref=None, actor="the Developer").findings == ()


# ------------------------------------------------------------------ what a user reads in git
def test_a_restored_plan_branch_and_a_restored_ref_say_so_in_their_logs(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    git(wt, "branch", "-f", "release", "HEAD")
    git(wt, "update-ref", "-d", PLAN_REF)

    check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert _log(git_repo, PLAN) == "tunaflow: plan branch restored"
    assert _log(git_repo, "release") == "tunaflow: restored after an agent turn"


def test_a_ref_moved_under_the_default_actor_and_label_is_told_whole(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    release = sha(git_repo, "release")
    snap = take_snapshot(git_repo, wt)
    stray = git(wt, "commit-tree", "HEAD~1^{tree}", "-p", "release", "-m", "stray")
    git(wt, "update-ref", "refs/heads/release", stray)
    start = time.gmtime(time.time() - 1)

    report = check_turn(snap, plan_ref=PLAN_REF)

    [kept] = rescued(git_repo)
    assert re.fullmatch(rf"refs/tunaflow/rescue/project/{STAMP}-1-release", kept)
    stamp = kept.split("/")[-1][:15]
    assert time.strftime("%Y%m%dT%H%M%S", start) <= stamp <= time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    assert report.findings == (Finding(
        "ref", f"The agent moved release; tunaflow put it back at {release[:10]} (its commits are kept at {kept}).",
        repaired=True, ref="refs/heads/release", before=release, after=stray, rescue_ref=kept),)


def test_a_rescue_is_stamped_in_utc_whatever_the_local_zone(
        git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # UTC+14: never the same hour as UTC
    time.tzset()
    try:
        before = time.strftime("%Y%m%dT%H", time.gmtime())
        name = keep_as_rescue(git_repo, "plan", sha(git_repo, "HEAD"), "work")
        after = time.strftime("%Y%m%dT%H", time.gmtime())
    finally:
        monkeypatch.undo()
        time.tzset()
    assert name.split("/")[-1][:11] in {before, after}


def test_rescue_names_are_made_safe_for_git_and_kept_short(git_repo: Path) -> None:
    head = sha(git_repo, "HEAD")
    name = keep_as_rescue(git_repo, "Xmas..Plan", head, "work.lock")
    assert re.fullmatch(rf"refs/tunaflow/rescue/Xmas\.Plan/{STAMP}-1-work", name) and sha(git_repo, name) == head
    assert keep_as_rescue(git_repo, "///", head, "x").startswith("refs/tunaflow/rescue/project/")
    long = keep_as_rescue(git_repo, "a" * 70, head, "x")
    assert long.split("/")[3] == "a" * 60


def test_refs_the_user_moved_and_refs_only_reported_are_told_whole(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    main = sha(git_repo, "main")
    snap = take_snapshot(git_repo, wt)
    users = commit(git_repo, "mine.txt", "the user's own work")
    [told] = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer").findings
    assert told == Finding("ref", "main moved in your own working tree during the Developer's turn; tunaflow left "
                           "it alone.", repaired=False, ref="refs/heads/main", before=main, after=users)

    release = sha(git_repo, "release")
    snap = take_snapshot(git_repo, wt)
    git(wt, "branch", "-f", "release", "HEAD")
    git(wt, "branch", "zz-agent", "HEAD")
    tip = sha(wt, "HEAD")
    report = check_turn(snap, plan_ref=PLAN_REF, repair_refs=False)
    assert report.findings == (
        Finding("ref", "release changed during the agent's turn.", repaired=False, ref="refs/heads/release",
                before=release, after=tip),
        Finding("ref", "zz-agent changed during the agent's turn.", repaired=False, ref="refs/heads/zz-agent",
                after=tip),
    )


def test_another_plans_branch_changed_while_it_rested_is_told_and_left(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    git(git_repo, "branch", "tunaflow/other", "release")
    release = sha(git_repo, "release")
    snap = take_snapshot(git_repo, wt)
    tip = sha(wt, "HEAD")
    git(wt, "branch", "-f", "tunaflow/other", "HEAD")
    git(wt, "branch", "tunaflow/third", "HEAD")
    git(wt, "branch", "zz-agent", "HEAD")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer",
                        watch_refs=["refs/heads/tunaflow/other", "refs/heads/tunaflow/third"])

    look = "tunaflow left it as it is (it was {}): look at it before you merge that plan."
    while_ = "changed during the Developer's turn while that plan was not at work;"
    assert report.findings == (
        Finding("ref", f"tunaflow/other, another plan's branch, {while_} {look.format('at ' + release[:10])}",
                repaired=False, ref="refs/heads/tunaflow/other", before=release, after=tip),
        Finding("ref", f"tunaflow/third, another plan's branch, {while_} {look.format('not there')}",
                repaired=False, ref="refs/heads/tunaflow/third", after=tip),
        Finding("ref", "The Developer created zz-agent; tunaflow removed it.", repaired=True,
                ref="refs/heads/zz-agent", after=tip),
    )
    assert sha(git_repo, "tunaflow/other") == tip, "another plan's branch is left as the agent left it"


def test_tunaflows_own_refs_do_not_stop_the_look_at_later_ones(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    git(wt, "update-ref", "refs/tunaflow/note", "HEAD")
    git(wt, "update-ref", "refs/zz/agent", "HEAD")  # sorted after tunaflow's own
    [finding] = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer").findings
    assert finding.text == "The Developer created refs/zz/agent; tunaflow removed it."


def test_a_branch_checked_out_on_a_name_that_is_not_utf8_is_read(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    subprocess.run([b"git", b"checkout", b"-q", b"-b", b"user-\xff"], cwd=git_repo, check=True)
    snap = take_snapshot(git_repo, wt)
    assert snap.main_head.ref is not None and snap.main_head.ref.startswith("refs/heads/user-")
    git(wt, "checkout", "-q", "--detach")
    [finding] = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer").findings
    assert finding.kind == "worktree_head" and finding.repaired


def test_the_users_branch_moved_by_the_agent_is_put_back_when_the_git_folder_path_is_not_utf8(
        tmp_path: Path) -> None:
    repo = tmp_path / "project"
    git_dir = os.fsencode(tmp_path) + b"/git-\xff"
    subprocess.run([b"git", b"init", b"-q", b"-b", b"main", b"--separate-git-dir", git_dir, os.fsencode(repo)],
                   check=True)
    main = commit(repo, "README.md", "initial")
    wt = setup(repo, tmp_path)
    snap = take_snapshot(repo, wt)
    git(wt, "update-ref", "refs/heads/main", "HEAD")  # from the agent's worktree: not in the user's HEAD log

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert [f.text for f in report.findings] == [f"The Developer moved main; tunaflow put it back at {main[:10]}."]
    assert sha(repo, "main") == main


# ------------------------------------------------------------------ the stash
def test_the_stash_findings_whole_with_every_entry_kept(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    for n in (1, 2):
        (wt / "plan.md").write_text(f"scratch {n}\n", encoding="utf-8")
        git(wt, "stash", "push", "-q", "-m", f"agent {n}")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    kept = rescued(git_repo)
    assert len(kept) == 2 and all(re.fullmatch(rf"refs/tunaflow/rescue/project/{STAMP}-\d-stash", k) for k in kept)
    newest_first = [k for n in (1, 2) for k in kept if k.endswith(f"-{n}-stash")]
    assert report.findings == (Finding(
        "stash", f"The Developer changed the stash; tunaflow put it back (its entries are kept at "
        f"{', '.join(newest_first)}).", repaired=True, ref="refs/stash"),)
    assert git(git_repo, "stash", "list") == ""


def test_a_dropped_stash_entry_comes_back_with_nothing_to_keep_and_odd_messages_survive(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    (git_repo / "README.md").write_text("# the user's unfinished edit\n", encoding="utf-8")
    git(git_repo, "stash", "push", "-q", "-m", "users wip")
    (git_repo / "README.md").write_text("# a second edit\n", encoding="utf-8")
    subprocess.run([b"git", b"stash", b"push", b"-q", b"-m", b"caf\xe9 latin-1"], cwd=git_repo, check=True,
                   capture_output=True)
    listed = subprocess.run(["git", "stash", "list", "--format=%H %gs"], cwd=git_repo, check=True,
                            capture_output=True).stdout
    snap = take_snapshot(git_repo, wt)
    git(wt, "stash", "drop", "-q")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert report.findings == (Finding("stash", "The Developer changed the stash; tunaflow put it back.",
                                       repaired=True, ref="refs/stash"),)
    assert subprocess.run(["git", "stash", "list", "--format=%H %gs"], cwd=git_repo, check=True,
                          capture_output=True).stdout == listed
    assert rescued(git_repo) == []

    snap = take_snapshot(git_repo, wt)
    git(wt, "stash", "drop", "-q")
    assert check_turn(snap, plan_ref=PLAN_REF, repair_refs=False).findings == (
        Finding("stash", "The stash changed during the agent's turn.", repaired=False, ref="refs/stash"),)


def test_the_users_own_commit_with_a_message_that_is_not_utf8_is_still_theirs(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    main = sha(git_repo, "main")
    snap = take_snapshot(git_repo, wt)
    (git_repo / "mine.txt").write_text("mine\n", encoding="utf-8")
    git(git_repo, "add", "mine.txt")
    subprocess.run([b"git", b"-c", b"i18n.commitEncoding=latin-1", b"commit", b"-q", b"-m", b"r\xe9sum\xe9"],
                   cwd=git_repo, check=True)
    users = sha(git_repo, "main")

    [finding] = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer").findings

    assert finding == Finding("ref", "main moved in your own working tree during the Developer's turn; tunaflow "
                              "left it alone.", repaired=False, ref="refs/heads/main", before=main, after=users)
    assert sha(git_repo, "main") == users


# ------------------------------------------------------------------ pushes
def test_a_push_through_a_tracking_ref_is_told_whole_allowed_or_not(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    git(git_repo, "remote", "add", "web", "https://example.invalid/project.git")
    main = sha(git_repo, "main")
    git(git_repo, "update-ref", "-m", "fetch: storing head", "refs/remotes/web/main", main)
    tip = sha(wt, "HEAD")
    change = f"moved main from {main[:10]} to {tip[:10]}"

    for allow, text, decide in (
        (True, f"The Developer pushed to web ({change}); [workflow] allow_push permits it.", False),
        (False, f"The Developer pushed to web ({change}) although pushing is off ([workflow] allow_push = false). "
                "tunaflow never rewrites a remote: check it yourself.", True),
    ):
        git(git_repo, "update-ref", "-m", "fetch: storing head", "refs/remotes/web/main", main)
        snap = take_snapshot(git_repo, wt)
        git(wt, "update-ref", "-m", "update by push", "refs/remotes/web/main", tip)
        report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", allow_push=allow)
        assert report.findings == (Finding("push", text, repaired=False, needs_decision=decide,
                                           ref="refs/remotes/web/main", before=main, after=tip),)


def test_tracking_refs_moved_by_a_fetch_without_a_log_or_with_odd_words_are_nobodys_business(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    git(git_repo, "remote", "add", "web", "https://example.invalid/project.git")
    snap = take_snapshot(git_repo, wt)
    git(wt, "-c", "core.logAllRefUpdates=false", "update-ref", "refs/remotes/web/quiet", "HEAD")
    subprocess.run([b"git", b"update-ref", b"-m", b"fetch: caf\xe9", b"refs/remotes/web/odd", b"HEAD"],
                   cwd=wt, check=True)
    assert check_turn(snap, plan_ref=PLAN_REF, actor="the Developer").findings == ()


def _bare(tmp_path: Path, name: str | bytes) -> Path:
    path = tmp_path / (name if isinstance(name, str) else name.decode("utf-8", "surrogateescape"))
    path.parent.mkdir(parents=True, exist_ok=True)
    git(tmp_path, "init", "-q", "--bare", str(path))
    return path


def test_a_push_by_path_to_an_oddly_named_remote_is_told_whole(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    bare = _bare(tmp_path, "a:b/with space/team.git")
    git(git_repo, "remote", "add", "team.disk", str(bare))
    git(git_repo, "push", "-q", str(bare), "main", "release")
    git(bare, "symbolic-ref", "HEAD", "refs/heads/release")
    release = sha(git_repo, "release")
    snap = take_snapshot(git_repo, wt)
    assert set(snap.remotes) == {"team.disk"}
    tip = sha(wt, "HEAD")
    git(wt, "push", "-q", str(bare), "HEAD:release", "HEAD:refs/remotes/up/feature")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    off = "although pushing is off ([workflow] allow_push = false). tunaflow never rewrites a remote: check it yourself."
    assert report.findings == (
        Finding("push", f"The Developer pushed to team.disk (moved release from {release[:10]} to {tip[:10]}) {off}",
                repaired=False, needs_decision=True, ref="refs/heads/release", before=release, after=tip),
        Finding("push", f"The Developer pushed to team.disk (created up/feature at {tip[:10]}) {off}",
                repaired=False, needs_decision=True, ref="refs/remotes/up/feature", after=tip),
    )


def test_a_remote_at_a_path_that_is_not_utf8_with_a_branch_to_match_is_read(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    bare = _bare(tmp_path, b"remote-\xff.git")
    subprocess.run([b"git", b"remote", b"add", b"odd", bytes(bare)], cwd=git_repo, check=True)
    subprocess.run([b"git", b"push", b"-q", b"odd", b"main:refs/heads/caf\xe9"], cwd=git_repo, check=True)
    snap = take_snapshot(git_repo, wt)
    assert list(snap.remotes) == ["odd"] and snap.remotes["odd"] is not None
    subprocess.run([b"git", b"push", b"-q", bytes(bare), b"HEAD:refs/heads/caf\xe9"], cwd=wt, check=True)

    [finding] = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer").findings

    assert finding.kind == "push" and finding.after == sha(wt, "HEAD") and finding.before == sha(git_repo, "main")


def test_remotes_gone_or_unreadable_do_not_hide_a_push_to_the_next(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    later = tmp_path / "later.git"
    git(git_repo, "remote", "add", "a-later", str(later))
    b_bare = _bare(tmp_path, "b.git")
    git(git_repo, "remote", "add", "b-gone", str(b_bare))
    c_bare = _bare(tmp_path, "c.git")
    git(git_repo, "remote", "add", "c-disk", str(c_bare))
    snap = take_snapshot(git_repo, wt)
    assert list(snap.remotes) == ["a-later", "b-gone", "c-disk"] and snap.remotes["a-later"] is None
    git(tmp_path, "init", "-q", "--bare", str(later))
    git(wt, "push", "-q", str(later), "HEAD:refs/heads/new")
    subprocess.run(["rm", "-rf", str(b_bare)], check=True)
    git(wt, "push", "-q", str(c_bare), "HEAD:refs/heads/side")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert [(f.kind, f.ref) for f in report.findings] == [("push", "refs/heads/side")]


# ------------------------------------------------------------------ shared hooks and configuration
def test_six_planted_hooks_are_all_removed_and_five_named(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    hooks = git_repo / ".git" / "hooks"
    names = [f"h{n}" for n in range(1, 7)]
    for name in names:
        (hooks / name).write_text("#!/bin/sh\n", encoding="utf-8")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    shown = ", ".join(f".git/hooks/{n}" for n in names[:5])
    assert report.findings == (Finding("shared_git", f"The Developer changed shared git files ({shown}); tunaflow "
                                       "restored them.", repaired=True),)
    assert not any((hooks / n).exists() for n in names)
    assert list(report.shared_paths) == [f".git/hooks/{n}" for n in names]


def test_hooks_too_big_to_keep_are_named_and_stop_at_a_decision(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    hooks = git_repo / ".git" / "hooks"
    names = [f"big{n}" for n in range(1, 7)]
    for name in names:
        (hooks / name).write_bytes(b"#" * (MAX_KEPT_BYTES + 1))
    snap = take_snapshot(git_repo, wt)
    for name in names:
        (hooks / name).write_text("#!/bin/sh\necho planted\n", encoding="utf-8")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    shown = ", ".join(f".git/hooks/{n}" for n in names[:5])
    assert report.findings == (Finding(
        "shared_git", f"The Developer changed {shown} and tunaflow could not restore it: check it before you commit.",
        repaired=False, needs_decision=True),)
    assert report.needs_decision


def test_the_worktrees_own_configuration_is_watched_too(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    own = Path(git(wt, "rev-parse", "--absolute-git-dir"))
    snap = take_snapshot(git_repo, wt)
    (own / "config.worktree").write_text("[core]\n\thooksPath = /tmp/evil\n", encoding="utf-8")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert not (own / "config.worktree").exists()
    assert [f.kind for f in report.findings] == ["shared_git"] and report.findings[0].repaired


# ------------------------------------------------------------------ when a step fails
def test_a_step_that_fails_is_told_by_name_and_stops_at_a_decision(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    calls: list[str] = []

    def restore() -> None:
        calls.append("restored")
        raise OSError("the disk is full")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="a reviewer", restore_worktree=restore)

    assert calls == ["restored"]
    assert report.findings == (Finding(
        "error", "tunaflow could not check or repair the worktree's files after a reviewer's turn: the disk is full",
        repaired=False, needs_decision=True),)
    assert report.needs_decision and report.reason.startswith("tunaflow could not check or repair")


def test_a_worktree_removed_by_its_agent_is_told_as_the_step_that_failed(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    shutil.rmtree(wt)

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert report.findings == (Finding(
        "error", f"tunaflow could not check or repair the worktree's HEAD after the Developer's turn: not a directory: "
        f"{snap.worktree}", repaired=False, needs_decision=True),)


def test_refs_that_cannot_be_put_back_are_told_as_the_steps_that_failed(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    release = sha(git_repo, "release")
    snap = take_snapshot(git_repo, wt)
    # a ref below a deleted one's name keeps git from making the deleted one again
    git(wt, "update-ref", "-d", PLAN_REF)
    git(wt, "update-ref", f"{PLAN_REF}/sub", release)
    git(wt, "update-ref", "-d", "refs/heads/release")
    git(wt, "update-ref", "refs/heads/release/x", release)

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    lost, failed = report.findings
    assert lost.kind == "plan_branch" and lost.rescue_ref is not None and sha(git_repo, lost.rescue_ref) == snap.refs[
        PLAN_REF], "the plan's branch cannot be made again: its commits are kept"
    assert (failed.kind, failed.text.split(": ", 1)[0]) == (
        "error", "tunaflow could not check or repair the other refs after the Developer's turn")
    assert report.needs_decision and "cannot lock ref" in failed.text
