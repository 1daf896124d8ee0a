"""The ref guard tells an agent's footprint on the repository from the user's own work, and repairs it."""

from __future__ import annotations

from pathlib import Path

from guarded_repo import PLAN, PLAN_REF, commit, git, rescued, setup, sha

from tunaflow_tui.core.gitops.refguard import check_turn, take_snapshot


def test_nothing_done_finds_nothing(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    commit(wt, "work.py", "the Developer's own commit on its branch")
    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")
    assert report.findings == () and not report.needs_decision


def test_the_users_commit_in_their_own_tree_stays_while_the_agents_moves_are_undone(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    release_before = sha(git_repo, "release")
    snap = take_snapshot(git_repo, wt)
    # meanwhile the user commits on main in their own working tree …
    users = commit(git_repo, "mine.txt", "the user's own work")
    # … and the agent moves release onto a commit of its own and tags its branch
    stray = git(wt, "commit-tree", f"{sha(wt, 'HEAD')}^{{tree}}", "-m", "stray")
    git(wt, "update-ref", "refs/heads/release", stray)
    git(wt, "tag", "v9.9", "HEAD")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", rescue_label="guarded")

    assert sha(git_repo, "main") == users, "the user's commit was undone"
    assert sha(git_repo, "release") == release_before
    assert git(git_repo, "tag", "--list") == ""
    [kept] = rescued(git_repo)
    assert kept.startswith("refs/tunaflow/rescue/guarded/") and sha(git_repo, kept) == stray
    texts = [f.text for f in report.findings]
    assert any("main moved in your own working tree" in t and "left it alone" in t for t in texts)
    assert any("moved release" in t and kept in t for t in texts)
    assert any("created v9.9" in t and "removed" in t for t in texts), "the tag is on the plan's branch: no rescue"
    assert not report.needs_decision


def test_the_stash_comes_back_entry_for_entry(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    (git_repo / "README.md").write_text("# the user's unfinished edit\n", encoding="utf-8")
    git(git_repo, "stash", "push", "-q", "-m", "users wip")
    user_stash = git(git_repo, "stash", "list", "--format=%H %gs")
    snap = take_snapshot(git_repo, wt)
    git(wt, "stash", "clear")
    (wt / "plan.md").write_text("the agent's scratch\n", encoding="utf-8")
    git(wt, "stash", "push", "-q", "-m", "agent scratch")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert git(git_repo, "stash", "list", "--format=%H %gs") == user_stash
    [kept] = rescued(git_repo)
    assert "stash" in kept
    assert [f.kind for f in report.findings] == ["stash"]


def test_a_rewritten_plan_branch_keeps_what_it_dropped(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    reviewed = commit(wt, "work.py", "reviewed work")
    snap = take_snapshot(git_repo, wt)
    git(wt, "reset", "-q", "--hard", "HEAD~2")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    [finding] = report.findings
    assert finding.kind == "plan_branch" and finding.rescue_ref is not None
    assert sha(git_repo, finding.rescue_ref) == reviewed


def test_planted_hooks_and_config_are_restored_before_any_repair_runs_git(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    marker = tmp_path / "hook-ran"
    snap = take_snapshot(git_repo, wt)
    hook = git_repo / ".git" / "hooks" / "reference-transaction"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n", encoding="utf-8")
    hook.chmod(0o755)
    git(wt, "config", "core.hooksPath", str(tmp_path / "evil-hooks"))
    git(wt, "checkout", "-q", "--detach")  # something to repair with update-ref afterwards
    marker.unlink(missing_ok=True)  # git ran it for the checkout above, before the guard

    report = check_turn(snap, plan_ref=PLAN_REF, actor="a reviewer")

    assert not hook.exists()
    assert "hooksPath" not in (git_repo / ".git" / "config").read_text(encoding="utf-8")
    assert git(wt, "symbolic-ref", "--short", "HEAD") == PLAN
    assert not marker.exists(), "a hook ran during the repair"
    shared = [f for f in report.findings if f.kind == "shared_git"]
    assert shared and shared[0].repaired
    assert set(report.shared_paths) == {".git/hooks/reference-transaction", ".git/config"}


def test_a_worktree_switched_to_unrelated_history_is_put_back_and_needs_a_decision(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    plan_tip = sha(git_repo, PLAN)
    snap = take_snapshot(git_repo, wt)
    git(wt, "checkout", "-q", "release")
    (wt / "loose.txt").write_text("uncommitted work on the wrong branch\n", encoding="utf-8")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert report.needs_decision and "release" in report.reason
    assert git(wt, "symbolic-ref", "--short", "HEAD") == PLAN and sha(git_repo, PLAN) == plan_tip
    assert not (wt / "loose.txt").exists()
    [kept] = rescued(git_repo)
    assert git(git_repo, "show", f"{kept}:loose.txt") == "uncommitted work on the wrong branch"
