"""Repairs that must do no harm and claim no more than they did: a symbolic ref an agent plants is
repaired itself, never the branch it points at (``update-ref`` follows a symbolic ref unless told not
to) — the plan's own branch made an alias of ``main`` included — a stash that cannot be cleared is told
as such, and a plan's branch that cannot be made again keeps its commits under a rescue ref."""

from __future__ import annotations

import subprocess
from pathlib import Path

from guarded_repo import PLAN, PLAN_REF, commit, git, rescued, setup, sha

from tunaflow_tui.core.gitops import create_worktree
from tunaflow_tui.core.gitops.refguard import Finding, check_turn, take_snapshot


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

    assert report.findings == (Finding(
        "stash", "The Developer made the stash an alias of release; tunaflow removed the alias and put the stash "
        "back, leaving release itself as it is.", repaired=True, ref="refs/stash", after="refs/heads/release"),)
    assert sha(git_repo, "release") == release, "clearing the stash deleted the user's branch"
    assert git(git_repo, "stash", "list") == ""
    assert rescued(git_repo) == [], "the branch's tip was never the stash's to keep"


def test_a_stash_made_an_alias_of_a_tag_without_a_log_is_found_all_the_same(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    git(git_repo, "tag", "v1")  # tags keep no log: the alias lists no stash entry
    v1 = sha(git_repo, "v1")
    snap = take_snapshot(git_repo, wt)
    git(wt, "symbolic-ref", "refs/stash", "refs/tags/v1")
    assert git(git_repo, "stash", "list") == ""

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert [f.text for f in report.findings] == ["The Developer made the stash an alias of v1; tunaflow removed the "
                                                 "alias and put the stash back, leaving v1 itself as it is."]
    assert not _is_symref(git_repo, "refs/stash") and sha(git_repo, "v1") == v1
    (git_repo / "README.md").write_text("the user's own stash\n", encoding="utf-8")
    git(git_repo, "stash", "push", "-q")
    assert sha(git_repo, "v1") == v1, "the user's next stash moved the tag"


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


# ------------------------------------------------------------------ the plan's branch made an alias
def test_the_plans_branch_made_an_alias_of_main_is_a_branch_again_and_main_stays(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    main, tip = sha(git_repo, "main"), sha(git_repo, PLAN)
    snap = take_snapshot(git_repo, wt)
    git(wt, "symbolic-ref", PLAN_REF, "refs/heads/main")  # the worktree's HEAD now reaches main through it
    git(wt, "checkout", "-q", "--detach")
    ahead = commit(wt, "ahead.py", "on top of main, detached")  # would be fast-forwarded "onto the plan's branch"

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert report.findings[0] == Finding(
        "plan_branch", f"The Developer made {PLAN} an alias of main, so commits on the plan's branch would have "
        f"moved main: tunaflow made it a branch again at {tip[:10]}, leaving main as it is.", repaired=True,
        ref=PLAN_REF, before=tip, after="refs/heads/main")
    assert sha(git_repo, "main") == main, "a repair of the plan's branch moved main"
    assert not _is_symref(git_repo, PLAN_REF) and sha(git_repo, PLAN) == tip
    assert git(git_repo, "reflog", "show", "-1", "--format=%gs", PLAN_REF, "--") == (
        "tunaflow: the plan's branch is no alias")
    assert git(wt, "symbolic-ref", "HEAD") == PLAN_REF
    assert [f.rescue_ref for f in report.findings if f.kind == "worktree_head"] == rescued(git_repo)
    assert sha(git_repo, rescued(git_repo)[0]) == ahead, "the agent's detached commit is kept"


def test_commits_through_an_alias_of_main_go_back_off_main_and_the_plans_own_are_kept(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    main, tip = sha(git_repo, "main"), sha(git_repo, PLAN)
    snap = take_snapshot(git_repo, wt)
    own = commit(wt, "own.py", "on the plan's branch, before the alias")
    git(wt, "symbolic-ref", PLAN_REF, "refs/heads/main")
    through = commit(wt, "through.py", "through the alias, onto main")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    [alias] = [f for f in report.findings if f.kind == "plan_branch"]
    [kept_own] = [r for r in rescued(git_repo) if sha(git_repo, r) == own]
    assert kept_own.endswith("-tunaflow-guarded-before")
    assert alias.text.endswith(f"leaving main as it is; the commits it held are kept at {kept_own}.")
    assert sha(git_repo, "main") == main and sha(git_repo, PLAN) == tip and not _is_symref(git_repo, PLAN_REF)
    [moved] = [f for f in report.findings if f.ref == "refs/heads/main"]
    assert (moved.repaired, moved.after) == (True, through) and moved.rescue_ref is not None
    assert sha(git_repo, moved.rescue_ref) == through, "the commit made on main through the alias is kept"
    assert git(wt, "symbolic-ref", "HEAD") == PLAN_REF


# ------------------------------------------------------------------ the plan's branch cannot be made again
def test_a_plans_branch_whose_name_an_agent_took_keeps_its_commits_under_a_named_rescue_ref(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    work = commit(wt, "work.py", "the plan's work")
    git(wt, "update-ref", "-d", PLAN_REF)  # its log goes with it
    git(wt, "update-ref", f"{PLAN_REF}/sub", "main")  # refs/heads/tunaflow/guarded is a folder now

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    assert report.needs_decision
    [lost] = [f for f in report.findings if f.kind == "plan_branch"]
    assert lost.rescue_ref is not None and sha(git_repo, lost.rescue_ref) == work, "the plan's commits are reachable"
    assert lost.text == (f"The Developer deleted {PLAN} and tunaflow could not make it again ({PLAN}/sub is in its "
                         f"way); its commits are kept at {lost.rescue_ref}.")
    assert (lost.repaired, lost.needs_decision) == (False, True)
    assert lost.text in report.reason


def test_a_plans_branch_an_agent_made_as_an_alias_during_the_turn_is_removed(git_repo: Path) -> None:
    snap = take_snapshot(git_repo)  # the plan has no branch yet
    git(git_repo, "symbolic-ref", PLAN_REF, "refs/heads/main")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", repair_refs=False)

    assert [f.text for f in report.findings] == [
        f"The Developer made {PLAN} an alias of main, so commits on the plan's branch would have moved main: "
        "tunaflow removed the alias, leaving main as it is."]
    assert git(git_repo, "for-each-ref", "--format=%(refname)", PLAN_REF) == "" and sha(git_repo, "main")


def test_a_plans_branch_locked_against_its_repair_is_kept_with_gits_reason(git_repo: Path, tmp_path: Path) -> None:
    wt = create_worktree(git_repo, PLAN, "main", tmp_path / "wt")  # no commit of its own: main holds its tip
    snap = take_snapshot(git_repo, wt)
    git(wt, "update-ref", "-d", PLAN_REF)
    (git_repo / ".git" / "refs" / "heads" / "tunaflow").mkdir(parents=True, exist_ok=True)
    (git_repo / ".git" / "refs" / "heads" / "tunaflow" / "guarded.lock").write_text("", encoding="utf-8")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    [lost] = [f for f in report.findings if f.kind == "plan_branch"]
    assert lost.rescue_ref is not None and sha(git_repo, lost.rescue_ref) == sha(git_repo, "main")
    assert lost.text.startswith(f"The Developer deleted {PLAN} and tunaflow could not make it again (")
    assert lost.text.startswith(f"The Developer deleted {PLAN} and tunaflow could not make it again (fatal: "
                                f"update_ref failed for ref '{PLAN_REF}': cannot lock ref ")
    assert "guarded.lock" in lost.text and lost.text.endswith(f"); its commits are kept at {lost.rescue_ref}.")
    assert (lost.ref, lost.before, lost.after) == (PLAN_REF, snap.refs[PLAN_REF], None)


def test_every_commit_an_aliased_plan_branch_held_is_kept_and_named(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    first = commit(wt, "one.py", "a first try")
    git(wt, "reset", "-q", "--hard", "HEAD~1")
    second = commit(wt, "two.py", "a second try")
    git(wt, "symbolic-ref", PLAN_REF, "refs/heads/main")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    newest, older = rescued(git_repo)[:2]  # named in the order they were kept: the branch's newest commit first
    assert (sha(git_repo, newest), sha(git_repo, older)) == (second, first)
    assert report.findings[0].text.endswith(f"; the commits it held are kept at {newest}, {older}.")


def _take_the_name(wt: Path, *subs: str) -> None:
    git(wt, "update-ref", "-d", PLAN_REF)
    for sub in subs:
        git(wt, "update-ref", f"{PLAN_REF}/{sub}", "main")


def test_every_commit_of_a_branch_whose_name_two_refs_took_is_kept_and_both_named(
        git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    snap = take_snapshot(git_repo, wt)
    first = commit(wt, "one.py", "a first try")
    git(wt, "reset", "-q", "--hard", "HEAD~1")
    second = commit(wt, "two.py", "a second try")
    _take_the_name(wt, "a", "b")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    [lost] = [f for f in report.findings if f.kind == "plan_branch"]
    newest, older = rescued(git_repo)[:2]
    assert (sha(git_repo, newest), sha(git_repo, older)) == (second, first)
    assert lost.text == (f"The Developer deleted {PLAN} and tunaflow could not make it again ({PLAN}/a, {PLAN}/b are "
                         f"in its way); its commits are kept at {newest}, {older}.")


def test_a_plans_branch_whose_tip_left_the_worktrees_log_is_kept_all_the_same(git_repo: Path, tmp_path: Path) -> None:
    wt = setup(git_repo, tmp_path)
    tip = sha(git_repo, PLAN)
    snap = take_snapshot(git_repo, wt)
    git(wt, "reset", "-q", "--hard", "HEAD~1")  # the plan's tip dropped …
    redo = commit(wt, "redo.py", "the agent's own start")
    for _ in range(25):  # … and out of the last 50 entries of the worktree's HEAD log
        git(wt, "checkout", "-q", "--detach")
        git(wt, "checkout", "-q", PLAN)
    _take_the_name(wt, "sub")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer")

    [lost] = [f for f in report.findings if f.kind == "plan_branch"]
    assert sorted(sha(git_repo, r) for r in rescued(git_repo)[:2]) == sorted([redo, tip]), "the plan's tip is kept"
    assert lost.rescue_ref is not None and sha(git_repo, lost.rescue_ref) == redo


def test_a_plans_branch_without_a_worktree_whose_name_was_taken_keeps_its_tip(git_repo: Path) -> None:
    git(git_repo, "branch", PLAN)
    tip = sha(git_repo, PLAN)
    snap = take_snapshot(git_repo)  # the agent works in the user's own tree
    _take_the_name(git_repo, "sub")

    report = check_turn(snap, plan_ref=PLAN_REF, actor="the Developer", repair_refs=False)

    [lost] = [f for f in report.findings if f.kind == "plan_branch"]
    assert lost.rescue_ref is not None and sha(git_repo, lost.rescue_ref) == tip and report.needs_decision
