"""Git integrity against hostile stand-in agents: moved HEADs, the user's branches, pushes, planted hooks.

The Developer and the reviewers are real subprocesses (scripted claude/codex stand-ins) that run git
in their worktree like an agent with a shell would. What is asserted is what the user would see in
their repository afterwards: branches and their commits, reachable history, the remote, hooks.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from runtime_harness import PROPOSAL, Harness, dev_turn, verdict

from tunaflow_tui.runtime.events import NoticeRaised, RuntimeEvent
from tunaflow_tui.runtime.runtime import WorkflowRuntime

PASS = {"reviewer": [{"text": verdict("pass")}], "verifier": [{"text": verdict("pass", "tests cover mul")}]}
ADD_ALL = ["git", "add", "-A"]


def _commit(message: str) -> list[str]:
    return ["git", "commit", "-q", "-m", message]


def _runtime(h: Harness, events: list[RuntimeEvent], **workflow: Any) -> WorkflowRuntime:
    return WorkflowRuntime(h.project, h.settings(**workflow), observer=events.append)


def _integrity(rt: WorkflowRuntime, plan_id: int) -> list[dict[str, Any]]:
    return [f for e in rt.store.list_plan_events(plan_id) if e.type == "git_integrity" for f in e.detail["findings"]]


def _notices(events: list[RuntimeEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, NoticeRaised)]


def _sha(h: Harness, rev: str) -> str:
    return h.git("rev-parse", "--verify", "-q", rev).strip()


def _subjects(h: Harness, rev: str) -> list[str]:
    return h.git("log", "--format=%s", rev).splitlines()


def _unreachable_commits(h: Harness) -> list[str]:
    out = subprocess.run(["git", "fsck", "--unreachable", "--no-reflogs"], cwd=h.project, capture_output=True,
                         text=True, check=True).stdout
    return [line for line in out.splitlines() if line.startswith("unreachable commit")]


def _rescued(h: Harness) -> dict[str, list[str]]:
    refs = h.git("for-each-ref", "--format=%(refname)", "refs/tunaflow/rescue/").split()
    return {ref: _subjects(h, ref) for ref in refs}


async def _approved(rt: WorkflowRuntime) -> Any:
    await rt.send_user_message("Please add multiplication")
    [plan] = rt.store.list_plans()
    return await rt.decide(plan.id, "approve")


async def test_developer_on_a_detached_head_keeps_its_work_on_the_plan_branch_through_the_merge(
        harness: Harness) -> None:
    harness.set_script(
        architect=[{"text": PROPOSAL}],
        developer=[dev_turn(run=[["git", "checkout", "-q", "--detach"], ADD_ALL,
                                 _commit("Developer: mul on a detached HEAD")])],
        **PASS,
    )
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan = await _approved(rt)
        assert plan.pending_decision == "review" and plan.pending_detail["verdict"] == "pass", plan.pending_detail
        worktree = Path(plan.worktree_path or "")
        assert harness.git("symbolic-ref", "--short", "HEAD", cwd=worktree).strip() == plan.git_branch
        on_branch = _subjects(harness, plan.git_branch)
        assert "Developer: mul on a detached HEAD" in on_branch
        assert any(s.startswith("Review round 1") for s in on_branch), "tunaflow's review commit is on the branch"
        [finding] = _integrity(rt, plan.id)
        assert finding["kind"] == "worktree_head" and finding["repaired"]
        assert any("detached HEAD" in n and plan.git_branch in n for n in _notices(events))

        plan = await rt.decide(plan.id, "accept")
        result = rt.merge(plan.id)
        assert str(result.kind) == "fast-forward"
        merged = _subjects(harness, "main")
        assert "Developer: mul on a detached HEAD" in merged
        assert any(s.startswith("Result:") for s in merged)
        assert "def mul" in (harness.project / "calc.py").read_text()
        assert not worktree.exists()
        assert _unreachable_commits(harness) == [], "the worktree's removal left reviewed commits behind"
    finally:
        rt.close()


async def test_developer_on_its_own_branch_lands_on_the_plan_branch_and_its_branch_goes(harness: Harness) -> None:
    harness.set_script(
        architect=[{"text": PROPOSAL}],
        developer=[dev_turn(run=[["git", "checkout", "-q", "-b", "my-own-work"], ADD_ALL,
                                 _commit("Developer: mul on my own branch")])],
        **PASS,
    )
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan = await _approved(rt)
        assert plan.pending_decision == "review"
        assert "Developer: mul on my own branch" in _subjects(harness, plan.git_branch)
        assert harness.git("branch", "--list", "my-own-work").strip() == ""
        kinds = {f["kind"] for f in _integrity(rt, plan.id)}
        assert kinds == {"worktree_head", "ref"}
        assert any("my-own-work" in n and "removed" in n for n in _notices(events))
        assert _rescued(harness) == {}, "nothing needed rescuing: the plan's branch holds the commit"
    finally:
        rt.close()


async def test_developer_committing_on_the_users_other_branch_is_undone_and_stops_at_a_decision(
        harness: Harness) -> None:
    # the user works on develop; main is another of their branches, checked out nowhere
    harness.git("checkout", "-q", "-b", "develop")
    (harness.project / "NOTES.md").write_text("develop only\n")
    harness.git("add", "-A")
    harness.git("commit", "-q", "-m", "develop work")
    main_before, develop_before = _sha(harness, "main"), _sha(harness, "develop")
    harness.set_script(
        architect=[{"text": PROPOSAL}],
        developer=[dev_turn(run=[["git", "checkout", "-q", "main"], ADD_ALL,
                                 _commit("Developer: straight onto main")])],
        **PASS,
    )
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan = await _approved(rt)
        assert _sha(harness, "main") == main_before, "the user's main moved"
        assert _sha(harness, "develop") == develop_before
        assert "Developer: straight onto main" not in _subjects(harness, "main")
        assert plan.pending_decision == "dev_stalled" and plan.phase == "dev"
        reason = plan.pending_detail["reason"]
        assert "main" in reason and "refs/tunaflow/rescue/" in reason
        rescued = _rescued(harness)
        assert [ref for ref, subjects in rescued.items() if "Developer: straight onto main" in subjects]
        worktree = Path(plan.worktree_path or "")
        assert harness.git("symbolic-ref", "--short", "HEAD", cwd=worktree).strip() == plan.git_branch
        assert harness.git("status", "--porcelain", cwd=worktree) == ""
        assert not [c for c in harness.calls() if c["role"] in ("reviewer", "verifier")], "no review of it"
        assert any("main" in n and "put it back" in n for n in _notices(events))
        assert _unreachable_commits(harness) == []
    finally:
        rt.close()


def _remote(h: Harness) -> Path:
    bare = h.root / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    h.git("remote", "add", "origin", str(bare))
    h.git("push", "-q", "-u", "origin", "main")
    return bare


def _remote_refs(bare: Path) -> dict[str, str]:
    out = subprocess.run(["git", "ls-remote", str(bare)], capture_output=True, text=True, check=True).stdout
    return {name: sha for sha, name in (line.split("\t") for line in out.splitlines())}


async def test_developer_push_is_refused_by_the_engine_and_the_remote_stays(harness: Harness) -> None:
    bare = _remote(harness)
    before = _remote_refs(bare)
    harness.set_script(architect=[{"text": PROPOSAL}],
                       developer=[dev_turn(run=[["git", "push", "-q", "origin", "HEAD:main"]])], **PASS)
    rt = _runtime(harness, [])
    try:
        plan = await _approved(rt)
        assert plan.pending_decision == "review", "a refused push is nothing to decide"
    finally:
        rt.close()
    assert _remote_refs(bare) == before
    [developer] = [c for c in harness.calls() if c["role"] == "developer"]
    argv = developer["argv"]
    assert argv[argv.index("--disallowedTools") + 1] == "Bash(git push:*)"
    assert harness.commands() == [{"command": ["git", "push", "-q", "origin", "HEAD:main"], "refused": True}]


async def test_a_push_past_the_engine_is_reported_and_stops_at_a_decision(harness: Harness) -> None:
    bare = _remote(harness)
    main_on_remote = _remote_refs(bare)["refs/heads/main"]
    # `git -C . push` slips past a prefix rule for `git push`
    sneaky = ["git", "-C", ".", "push", "-q", "origin", "HEAD:refs/heads/feature"]
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn(run=[sneaky])], **PASS)
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan = await _approved(rt)
        assert plan.pending_decision == "dev_stalled"
        reason = plan.pending_detail["reason"]
        assert "pushed to origin" in reason and "allow_push" in reason and "feature" in reason
        assert any(f["kind"] == "push" and f["needs_decision"] for f in _integrity(rt, plan.id))
        assert any("pushed to origin" in n for n in _notices(events))
        assert not [c for c in harness.calls() if c["role"] in ("reviewer", "verifier")]
    finally:
        rt.close()
    refs = _remote_refs(bare)
    assert refs["refs/heads/main"] == main_on_remote, "tunaflow never rewrites a remote, and main was not pushed"
    assert "refs/heads/feature" in refs


async def test_allow_push_lets_the_developer_push_and_says_so(harness: Harness) -> None:
    bare = _remote(harness)
    harness.set_script(architect=[{"text": PROPOSAL}],
                       developer=[dev_turn(run=[["git", "push", "-q", "origin", "HEAD:refs/heads/feature"]])], **PASS)
    rt = _runtime(harness, [], allow_push=True)
    try:
        plan = await _approved(rt)
        assert plan.pending_decision == "review"
        [push] = [f for f in _integrity(rt, plan.id) if f["kind"] == "push"]
        assert not push["needs_decision"] and "allow_push" in push["text"]
    finally:
        rt.close()
    assert "refs/heads/feature" in _remote_refs(bare)
    [developer] = [c for c in harness.calls() if c["role"] == "developer"]
    assert "--disallowedTools" not in developer["argv"]


def _planted_hook(h: Harness, name: str) -> tuple[Path, Path, dict[str, Any]]:
    hook = h.project / ".git" / "hooks" / name
    marker = h.root / f"{name}-ran"
    turn = {"write": {str(hook): f"#!/bin/sh\ntouch '{marker}'\n"}, "run": [["chmod", "+x", str(hook)]]}
    return hook, marker, turn


async def test_a_hook_planted_by_a_reviewer_never_runs_and_is_removed(harness: Harness) -> None:
    hook, marker, plant = _planted_hook(harness, "post-commit")
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass"), **plant}], verifier=PASS["verifier"])
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan = await _approved(rt)
        assert plan.pending_decision == "review" and plan.pending_detail["verdict"] == "pass"
        assert any(s.startswith("Review round 1") for s in _subjects(harness, plan.git_branch))
        assert not hook.exists()
        modified = [e.detail for e in rt.store.list_plan_events(plan.id) if e.type == "reviewer_modified_code"]
        assert modified and ".git/hooks/post-commit" in modified[0]["paths"]
        assert list(plan.pending_detail["reviewer_modified"]) == [".git/hooks/post-commit"]
        assert any("post-commit" in n and "reverted" in n for n in _notices(events))
        plan = await rt.decide(plan.id, "accept")
        rt.merge(plan.id)
    finally:
        rt.close()
    assert not marker.exists(), "the planted hook ran"


async def test_a_hook_planted_by_the_developer_is_removed_before_tunaflow_commits(harness: Harness) -> None:
    hook, marker, plant = _planted_hook(harness, "pre-commit")
    turn = dev_turn(run=plant["run"])
    turn["write"].update(plant["write"])
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[turn], **PASS)
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan = await _approved(rt)
        assert plan.pending_decision == "review"
        assert not hook.exists()
        assert any(f["kind"] == "shared_git" and f["repaired"] for f in _integrity(rt, plan.id))
        assert any(".git/hooks/pre-commit" in n and "restored" in n for n in _notices(events))
        assert "tunaflow: Add multiplication to calc (developer)" in _subjects(harness, plan.git_branch)
    finally:
        rt.close()
    assert not marker.exists(), "the planted hook ran"


async def test_a_reviewer_that_pushes_voids_the_round_instead_of_passing_it(harness: Harness) -> None:
    bare = _remote(harness)
    push = ["git", "push", "-q", "origin", "HEAD:refs/heads/reviewed"]
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass"), "run": [push]}], verifier=PASS["verifier"])
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan = await _approved(rt)
        assert plan.pending_decision == "review_error", "a passing verdict from a round that pushed is no pass"
        errors = [seat["error"] for seat in plan.pending_detail["aggregate"]["seats"]]
        assert errors and all("void" in e and "pushed to origin" in e for e in errors)
        assert any("a reviewer pushed" in n.lower() for n in _notices(events))
    finally:
        rt.close()
    assert "refs/heads/reviewed" in _remote_refs(bare)


async def test_a_hook_the_developer_changed_is_reported_once_for_all_of_tunaflows_commits(harness: Harness) -> None:
    ran = harness.root / "husky-ran"
    husky = harness.project / ".husky"
    husky.mkdir()
    (husky / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (husky / "pre-commit").chmod(0o755)
    harness.git("add", "-A")
    harness.git("commit", "-q", "-m", "husky")
    harness.git("config", "core.hooksPath", ".husky")
    turn = dev_turn()
    turn["write"][".husky/pre-commit"] = f"#!/bin/sh\ntouch '{ran}'\n"
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[turn], **PASS)
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan = await _approved(rt)
        assert plan.pending_decision == "review"
        plan = await rt.decide(plan.id, "accept")
        rt.merge(plan.id)
        skipped = [e for e in rt.store.list_plan_events(plan.id) if e.type == "hooks_skipped"]
    finally:
        rt.close()
    told = [n for n in _notices(events) if "did not run the hook" in n]
    assert len(told) == 1 and "pre-commit" in told[0], told
    assert len(skipped) == 1, "one change, one entry in the plan's history"
    assert not ran.exists(), "the changed hook never ran"


async def test_the_developer_changing_the_global_git_config_is_reported_undone_and_never_run(
        harness: Harness, monkeypatch: Any) -> None:
    home = harness.root / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    users_own = "[user]\n\tname = The User\n"
    (home / ".gitconfig").write_text(users_own)
    marker = harness.root / "fsmonitor-ran"
    monitor = harness.root / "monitor.sh"
    monitor.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    monitor.chmod(0o755)
    turn = dev_turn(run=[["git", "config", "--global", "core.fsmonitor", str(monitor)]])
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[turn], **PASS)
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan = await _approved(rt)
        assert plan.pending_decision == "review"
        assert (home / ".gitconfig").read_text() == users_own
        assert any(f["kind"] == "shared_git" and f["repaired"] and "~/.gitconfig" in f["text"]
                   for f in _integrity(rt, plan.id))
        assert any("~/.gitconfig" in n and "restored" in n for n in _notices(events))
        plan = await rt.decide(plan.id, "accept")
        rt.merge(plan.id)
    finally:
        rt.close()
    assert "tunaflow: Add multiplication to calc (developer)" in _subjects(harness, "main")
    assert not marker.exists(), "the planted fsmonitor ran"


async def test_a_reviewer_writing_in_the_users_own_tree_is_reported_reverted_and_the_merge_goes_through(
        harness: Harness) -> None:
    calc = harness.project / "calc.py"
    original = calc.read_text()
    stray = harness.project / "notes-from-review.txt"
    write = {str(calc): "# the reviewer was here\n", str(stray): "a stray file\n"}
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass"), "write": write}], verifier=PASS["verifier"])
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan = await _approved(rt)
        assert plan.pending_decision == "review" and plan.pending_detail["verdict"] == "pass"
        assert calc.read_text() == original and not stray.exists()
        [finding] = [f for f in _integrity(rt, plan.id) if f["kind"] == "main_tree"]
        assert "calc.py" in finding["text"] and "notes-from-review.txt" in finding["text"]
        assert any("your own working tree" in n and "put them back" in n for n in _notices(events))
        kept = finding["rescue_ref"]
        assert harness.git("show", f"{kept}:calc.py") == "# the reviewer was here\n"
        plan = await rt.decide(plan.id, "accept")
        result = rt.merge(plan.id)
    finally:
        rt.close()
    assert result.kind in ("fast-forward", "merge-commit"), result
    assert "def mul" in calc.read_text()


async def test_the_developer_writing_in_the_users_own_tree_is_put_back_and_its_work_still_committed(
        harness: Harness) -> None:
    calc = harness.project / "calc.py"
    original = calc.read_text()
    turn = dev_turn()
    turn["write"][str(calc)] = "# written in the wrong tree\n"
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[turn], **PASS)
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan = await _approved(rt)
        assert plan.pending_decision == "review"
        assert calc.read_text() == original
        assert any(f["kind"] == "main_tree" and "calc.py" in f["text"] for f in _integrity(rt, plan.id))
        assert "tunaflow: Add multiplication to calc (developer)" in _subjects(harness, plan.git_branch)
    finally:
        rt.close()


def _is_symref(h: Harness, ref: str) -> bool:
    return subprocess.run(["git", "symbolic-ref", "-q", ref], cwd=h.project, capture_output=True).returncode == 0


async def test_a_developer_aliasing_its_branch_to_main_leaves_main_and_its_work_lands_on_the_plan(
        harness: Harness) -> None:
    main_before = _sha(harness, "main")
    alias = ["sh", "-c", 'git symbolic-ref "$(git symbolic-ref HEAD)" refs/heads/main']
    harness.set_script(
        architect=[{"text": PROPOSAL}],
        developer=[dev_turn(run=[alias, ADD_ALL, _commit("Developer: mul, through the alias")])],
        **PASS,
    )
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan = await _approved(rt)
        assert _sha(harness, "main") == main_before, "the user's main moved"
        assert not _is_symref(harness, f"refs/heads/{plan.git_branch}")
        assert plan.pending_decision == "review", plan.pending_detail
        assert "tunaflow: Add multiplication to calc (developer)" in _subjects(harness, plan.git_branch)
        assert "def mul" in harness.git("show", f"{plan.git_branch}:calc.py")
        assert any(f"{plan.git_branch} an alias of main" in n for n in _notices(events))
        assert [f["kind"] for f in _integrity(rt, plan.id)][:1] == ["plan_branch"]
        assert any("Developer: mul, through the alias" in s for s in _rescued(harness).values())
        assert _unreachable_commits(harness) == []
    finally:
        rt.close()


async def test_a_developer_taking_its_branchs_name_stops_at_a_decision_naming_where_the_plan_is_kept(
        harness: Harness) -> None:
    take = ["sh", "-c", 'b=$(git symbolic-ref HEAD) && git update-ref -d "$b" && git update-ref "$b/sub" main']
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn(run=[take])], **PASS)
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan = await _approved(rt)
        assert plan.pending_decision == "dev_stalled" and plan.phase == "dev"
        [lost] = [f for f in _integrity(rt, plan.id) if f["kind"] == "plan_branch"]
        assert lost["rescue_ref"] in plan.pending_detail["reason"]
        assert _subjects(harness, lost["rescue_ref"])[0] == f"Plan: {plan.title}", "the plan's commits are kept"
        assert not [c for c in harness.calls() if c["role"] in ("reviewer", "verifier")], "no review of it"
        assert _unreachable_commits(harness) == []
    finally:
        rt.close()
