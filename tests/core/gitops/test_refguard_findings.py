"""What the ref guard tells the user, to the word, for each kind of footprint an agent leaves: the
sentences land in the plan's history and on screen, and decide whether the plan stops at a decision."""

from __future__ import annotations

import subprocess
from pathlib import Path

from guarded_repo import PLAN, PLAN_REF, commit, git, rescued, setup, sha

from tunaflow_tui.core.gitops.refguard import Finding, TurnReport, check_turn, take_snapshot


def test_commits_made_on_a_detached_head_are_carried_onto_the_plan_branch(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    tip = sha(git_repo, PLAN)
    snap = take_snapshot(git_repo, wt)
    git(wt, "checkout", "-q", "--detach")
    commit(wt, "one.py", "one")
    two = commit(wt, "two.py", "two")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert report.findings == (Finding(
        "worktree_head", f"The Developer left {PLAN} for a detached HEAD at {two[:10]}: its worktree is back on "
        f"{PLAN}; its 2 commits were moved onto {PLAN}.", repaired=True, ref=None, before=tip, after=two),)
    assert git(wt, "symbolic-ref", "HEAD") == PLAN_REF and sha(git_repo, PLAN) == two
    assert not report.needs_decision and report.reason == "" and report.changed


def test_one_commit_is_carried_and_a_bare_detach_only_goes_back(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    git(wt, "checkout", "-q", "--detach")
    one = commit(wt, "one.py", "one")
    [carried] = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer").findings
    assert carried.text.endswith(f"is back on {PLAN}; its 1 commit was moved onto {PLAN}.")

    snap = take_snapshot(git_repo, wt)
    git(wt, "checkout", "-q", "--detach")
    [back] = check_turn(snap, plan_ref=PLAN_REF, actor="a reviewer").findings
    assert back.text == f"A reviewer left {PLAN} for a detached HEAD at {one[:10]}: its worktree is back on {PLAN}."
    assert git(wt, "symbolic-ref", "HEAD") == PLAN_REF


def test_a_deleted_plan_branch_is_restored(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    tip = sha(git_repo, PLAN)
    snap = take_snapshot(git_repo, wt)
    git(wt, "update-ref", "-d", PLAN_REF)

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert report.findings == (Finding("plan_branch", f"The Developer deleted {PLAN}; tunaflow restored it.",
                                       repaired=True, ref=PLAN_REF, before=tip),)
    assert sha(git_repo, PLAN) == tip


def test_a_rewritten_plan_branch_is_told_with_where_its_commits_are(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    reviewed = commit(wt, "work.py", "reviewed work")
    snap = take_snapshot(git_repo, wt)
    git(wt, "reset", "-q", "--hard", "HEAD~1")
    now = sha(wt, "HEAD")

    [finding] = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", rescue_label="guarded").findings

    [kept] = rescued(git_repo)
    assert kept.startswith("refs/tunaflow/rescue/guarded/") and kept.endswith("-1-tunaflow-guarded-before")
    assert finding == Finding("plan_branch", f"The Developer rewrote the history of {PLAN}; the commits it dropped "
                              f"are kept at {kept}.", repaired=True, ref=PLAN_REF, before=reviewed, after=now,
                              rescue_ref=kept)


def test_a_deleted_branch_comes_back_and_a_moved_one_keeps_its_new_commit(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    git(git_repo, "branch", "old")
    release = sha(git_repo, "release")
    snap = take_snapshot(git_repo, wt)
    git(wt, "update-ref", "-d", "refs/heads/old")
    stray = git(wt, "commit-tree", "HEAD~1^{tree}", "-p", "release", "-m", "stray")
    git(wt, "update-ref", "refs/heads/release", stray)

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", rescue_label="guarded")

    [kept] = rescued(git_repo)
    assert kept.endswith("-1-release")
    assert [f.text for f in report.findings] == [
        f"The Developer deleted old; tunaflow put it back at {release[:10]}.",
        f"The Developer moved release; tunaflow put it back at {release[:10]} (its commits are kept at {kept}).",
    ]
    assert [f.repaired for f in report.findings] == [True, True] and not report.needs_decision
    assert sha(git_repo, "old") == release and sha(git_repo, "release") == release


def test_without_repairs_changed_refs_and_stash_are_only_reported(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    git(wt, "branch", "-f", "release", "HEAD")
    moved = sha(git_repo, "release")
    (git_repo / "README.md").write_text("scratch\n", encoding="utf-8")
    git(git_repo, "stash", "push", "-q", "-m", "scratch")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the agent", repair_refs=False)

    assert [f.text for f in report.findings] == ["release changed during the agent's turn.",
                                                 "The stash changed during the agent's turn."]
    assert [f.repaired for f in report.findings] == [False, False]
    assert sha(git_repo, "release") == moved and git(git_repo, "stash", "list") != ""
    assert rescued(git_repo) == []


def test_ignored_refs_and_tunaflows_own_are_not_the_agents_footprint(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    git(wt, "branch", "tunaflow/other-plan")
    git(wt, "update-ref", "refs/tunaflow/note", "HEAD")
    assert check_turn(snap, plan_ref=PLAN_REF, ignore_refs=["refs/heads/tunaflow/other-plan"]).findings == ()


def test_the_user_switching_their_own_tree_is_told_and_left_alone(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    main = sha(git_repo, "main")
    snap = take_snapshot(git_repo, wt)
    git(git_repo, "checkout", "-q", "release")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert report.findings == (Finding(
        "main_head", "Your own working tree switched from main to release during the Developer's turn; "
        "tunaflow left it alone.", repaired=False, ref="refs/heads/release", before=main, after=main),)
    assert git(git_repo, "symbolic-ref", "HEAD") == "refs/heads/release"


def _remote(git_repo: Path, tmp_path: Path, name: str = "origin") -> Path:
    bare = tmp_path / f"{name}.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(git_repo, "remote", "add", name, str(bare))
    git(git_repo, "push", "-q", name, "main", "release")
    return bare


def test_a_push_is_reported_and_stops_at_a_decision_unless_allowed(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    bare = _remote(git_repo, tmp_path)
    release = sha(git_repo, "release")
    snap = take_snapshot(git_repo, wt)
    tip = sha(wt, "HEAD")
    git(wt, "push", "-q", "origin", f"{PLAN}:{PLAN}", "HEAD:release", ":main")  # through the tracking refs too

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    off = "although pushing is off ([workflow] allow_push = false). tunaflow never rewrites a remote: check it yourself."
    assert sorted(f.text for f in report.findings if f.kind == "push") == sorted([
        f"The Developer pushed to origin (deleted main) {off}",
        f"The Developer pushed to origin (moved release from {release[:10]} to {tip[:10]}) {off}",
        f"The Developer pushed to origin (created {PLAN} at {tip[:10]}) {off}",
    ])
    assert report.needs_decision and all(f.needs_decision for f in report.findings if f.kind == "push")
    assert git(bare, "rev-parse", "release") == tip, "a remote is never rewritten"

    snap = take_snapshot(git_repo, wt)
    commit(wt, "more.py", "more")
    git(wt, "push", "-q", "origin", f"{PLAN}:{PLAN}")
    allowed = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", allow_push=True)
    now = sha(wt, "HEAD")
    assert [f.text for f in allowed.findings] == [
        f"The Developer pushed to origin (moved {PLAN} from {tip[:10]} to {now[:10]}); "
        "[workflow] allow_push permits it."]
    assert not allowed.needs_decision


def test_a_push_by_path_past_every_tracking_ref_is_still_seen(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    bare = _remote(git_repo, tmp_path, "disk")
    git(git_repo, "remote", "add", "web", "https://example.invalid/project.git")
    git(git_repo, "remote", "add", "host", "git@example.invalid:project.git")
    other = tmp_path / "other.git"
    git(tmp_path, "init", "-q", "--bare", str(other))
    git(git_repo, "remote", "add", "url", f"file://{other}")
    snap = take_snapshot(git_repo, wt)
    assert set(snap.remotes) == {"disk", "url"}, "only remotes on disk are read"
    git(wt, "push", "-q", str(bare), "HEAD:refs/heads/side")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="a reviewer")

    tip = sha(wt, "HEAD")
    assert [(f.kind, f.ref, f.before, f.after) for f in report.findings] == [
        ("push", "refs/heads/side", None, tip)]
    assert report.findings[0].text.startswith(f"A reviewer pushed to disk (created side at {tip[:10]}) although")


def test_a_report_reads_its_reasons_and_a_finding_its_json(git_repo: Path, tmp_path: Path) -> None:
    stop = Finding("push", "Pushed.", repaired=False, needs_decision=True, ref="refs/heads/x", after="abc")
    told = Finding("ref", "Moved.", repaired=True)
    report = TurnReport((told, stop, Finding("stash", "Stashed.", repaired=False, needs_decision=True)))
    assert report.needs_decision and report.reason == "Pushed. Stashed." and report.changed
    assert not TurnReport((told,)).needs_decision and not TurnReport().changed
    assert stop.to_json() == {"kind": "push", "text": "Pushed.", "repaired": False, "needs_decision": True,
                              "ref": "refs/heads/x", "after": "abc"}


def test_a_push_to_a_remote_off_this_disk_is_seen_by_its_tracking_ref_and_a_fetch_is_not(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    git(git_repo, "remote", "add", "web", "https://example.invalid/project.git")
    main = sha(git_repo, "main")
    git(git_repo, "update-ref", "-m", "fetch: storing head", "refs/remotes/web/main", main)
    snap = take_snapshot(git_repo, wt)
    assert snap.remotes == {}, "a network remote is never contacted"
    tip = sha(wt, "HEAD")
    # what git itself writes to a tracking ref's log on a push, and on a fetch
    git(wt, "update-ref", "-m", "update by push", f"refs/remotes/web/{PLAN}", tip)
    git(wt, "update-ref", "-m", "fetch: fast-forward", "refs/remotes/web/main", tip)

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", allow_push=True)

    assert report.findings == (Finding(
        "push", f"The Developer pushed to web (created {PLAN} at {tip[:10]}); [workflow] allow_push permits it.",
        repaired=False, ref=f"refs/remotes/web/{PLAN}", before=None, after=tip),)


def test_the_users_checked_out_branch_moved_by_the_agent_is_put_back(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    main = sha(git_repo, "main")
    snap = take_snapshot(git_repo, wt)
    git(wt, "update-ref", "refs/heads/main", "HEAD")  # from the agent's worktree: no move in the user's HEAD log

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert [f.text for f in report.findings] == [f"The Developer moved main; tunaflow put it back at {main[:10]}."]
    assert sha(git_repo, "main") == main


def test_two_refs_on_one_stray_commit_share_one_rescue_and_each_rescue_is_numbered(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    git(git_repo, "branch", "old")
    snap = take_snapshot(git_repo, wt)
    stray = git(wt, "commit-tree", "HEAD~1^{tree}", "-p", "release", "-m", "stray")
    other = git(wt, "commit-tree", "HEAD~1^{tree}", "-p", "release", "-m", "other")
    git(wt, "update-ref", "refs/heads/release", stray)
    git(wt, "update-ref", "refs/heads/old", stray)
    git(wt, "update-ref", "refs/heads/+++", other)

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", rescue_label="guarded")

    kept = rescued(git_repo)
    assert len(kept) == 2 and {sha(git_repo, ref) for ref in kept} == {stray, other}
    by_ref = {f.ref: f.rescue_ref for f in report.findings}
    assert by_ref["refs/heads/old"] == by_ref["refs/heads/release"] and by_ref["refs/heads/old"] in kept
    assert by_ref["refs/heads/+++"] is not None and by_ref["refs/heads/+++"].endswith("-1-ref")
    assert by_ref["refs/heads/old"].endswith("-2-old")


def test_a_commit_kept_by_hand_gets_its_own_rescue_ref(git_repo: Path) -> None:
    from tunaflow_tui.core.gitops.refguard import keep_as_rescue

    head = sha(git_repo, "HEAD")
    name = keep_as_rescue(git_repo, "plan/7", head, "dropped work")
    assert name.startswith("refs/tunaflow/rescue/plan-7/") and name.endswith("-1-dropped-work")
    assert sha(git_repo, name) == head


def test_a_branch_whose_name_is_not_utf8_is_removed_like_any_other(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    subprocess.run([b"git", b"branch", b"agent-\xff"], cwd=wt, check=True)

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert [f.kind for f in report.findings] == ["ref"] and report.findings[0].repaired
    assert report.findings[0].text.startswith("The Developer created agent-")
    assert git(git_repo, "for-each-ref", "--format=%(refname)", "refs/heads/").split() == [
        "refs/heads/main", "refs/heads/release", PLAN_REF]


def test_work_left_on_unrelated_history_is_kept_as_a_commit_on_where_it_was(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    git(wt, "checkout", "-q", "release")
    (wt / "loose.txt").write_text("uncommitted\n", encoding="utf-8")

    [finding] = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer").findings

    assert finding.rescue_ref is not None and finding.needs_decision
    assert git(git_repo, "log", "-1", "--format=%P %s", finding.rescue_ref) == (
        f"{sha(git_repo, 'release')} tunaflow: the worktree as an agent left it")
    assert git(wt, "status", "--porcelain") == "", "the plan's worktree is clean again"
