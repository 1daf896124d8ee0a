"""Repairs that must do no harm and claim no more than they did: a symbolic ref an agent plants is
repaired itself, never the branch it points at (``update-ref`` follows a symbolic ref unless told not
to), and a stash that cannot be cleared is told as such."""

from __future__ import annotations

import subprocess
from pathlib import Path

from guarded_repo import PLAN_REF, git, rescued, setup, sha

from tunaflow_tui.core.gitops.refguard import check_turn, take_snapshot


def _is_symref(repo: Path, ref: str) -> bool:
    return subprocess.run(["git", "symbolic-ref", "-q", ref], cwd=repo, capture_output=True).returncode == 0


def test_a_symbolic_ref_an_agent_creates_is_removed_without_the_branch_it_points_at(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    release = sha(git_repo, "release")
    snap = take_snapshot(git_repo, wt)
    git(wt, "symbolic-ref", "refs/heads/alias", "refs/heads/release")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert [f.text for f in report.findings] == ["The Developer created alias; tunaflow removed it."]
    assert sha(git_repo, "release") == release, "removing the agent's alias deleted the user's branch"
    assert git(git_repo, "for-each-ref", "--format=%(refname)", "refs/heads/alias") == ""
    assert not _is_symref(git_repo, "refs/heads/alias")


def test_a_branch_an_agent_turns_into_a_symbolic_ref_is_put_back_without_moving_its_target(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    main = sha(git_repo, "main")
    side = git(wt, "commit-tree", "HEAD~1^{tree}", "-p", "main", "-m", "the user's release work")
    git(git_repo, "update-ref", "refs/heads/release", side)
    snap = take_snapshot(git_repo, wt)
    git(wt, "symbolic-ref", "refs/heads/release", "refs/heads/main")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert [f.text for f in report.findings] == [f"The Developer moved release; tunaflow put it back at {side[:10]}."]
    assert sha(git_repo, "main") == main, "putting release back moved main"
    assert sha(git_repo, "release") == side and not _is_symref(git_repo, "refs/heads/release")


def test_a_stash_an_agent_points_at_a_branch_is_cleared_without_deleting_the_branch(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    release = sha(git_repo, "release")
    snap = take_snapshot(git_repo, wt)
    git(wt, "symbolic-ref", "refs/stash", "refs/heads/release")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert [(f.kind, f.repaired) for f in report.findings] == [("stash", True)]
    assert sha(git_repo, "release") == release, "clearing the stash deleted the user's branch"
    assert git(git_repo, "stash", "list") == ""


def test_a_stash_that_cannot_be_cleared_is_told_not_claimed_put_back(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    (wt / "plan.md").write_text("the agent's scratch\n", encoding="utf-8")
    git(wt, "stash", "push", "-q", "-m", "agent scratch")
    agents = sha(git_repo, "refs/stash")
    (git_repo / ".git" / "refs" / "stash.lock").write_text("", encoding="utf-8")  # left by a git killed mid-update

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    [finding] = report.findings
    assert (finding.kind, finding.repaired, finding.needs_decision) == ("error", False, True)
    assert finding.text.startswith("tunaflow could not check or repair the stash after the Developer's turn: ")
    assert "stash.lock" in finding.text
    [kept] = rescued(git_repo)
    assert sha(git_repo, kept) == agents and sha(git_repo, "refs/stash") == agents, "nothing is lost"
