"""The worktree as a working environment: the project's interpreter and the worktree's code in the tests,
.worktreeinclude, worktree_setup, and test runs that cannot start."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from project_envs import WORKTREE_CHANGE, src_layout_project
from runtime_harness import DEV_DONE, PROPOSAL, Harness, dev_turn, make_harness, verdict

from tunaflow_tui.runtime.events import NoticeRaised, RuntimeEvent
from tunaflow_tui.runtime.headless import EXIT_PENDING, GatePolicy, drive
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _runtime(h: Harness, events: list[RuntimeEvent] | None = None, **workflow: Any) -> WorkflowRuntime:
    return WorkflowRuntime(h.project, h.settings(**workflow), observer=events.append if events is not None else None)


def _events(rt: WorkflowRuntime, plan_id: int, kind: str) -> list[dict[str, Any]]:
    return [dict(e.detail) for e in rt.store.list_plan_events(plan_id) if e.type == kind]


def _branch_notes(rt: WorkflowRuntime, plan_id: int) -> list[str]:
    plan = rt.get_plan(plan_id)
    return [m.content for m in rt.store.list_messages(f"branch:{plan.impl_branch_id}") if m.role == "system"]


def _passing_script(h: Harness, developer: list[dict[str, Any]] | None = None) -> None:
    h.set_script(architect=[{"text": PROPOSAL}], developer=developer or [dev_turn()],
                 reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass", "tests cover mul")}])


def _roles(h: Harness) -> list[str]:
    return [c["role"] for c in h.calls()]


async def _approved(rt: WorkflowRuntime) -> int:
    await rt.send_user_message("Please add multiplication")
    [plan] = rt.store.list_plans()
    await rt.decide(plan.id, "approve")
    return plan.id


async def test_src_layout_project_tests_run_in_its_venv_against_the_worktrees_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = make_harness(tmp_path, monkeypatch)
    project = src_layout_project(tmp_path / "src-project")
    h = Harness(base.root, project, base.bin_dir, base.data_dir)
    _passing_script(h, [{"text": DEV_DONE, "write": WORKTREE_CHANGE}])
    rt = _runtime(h)
    try:
        plan_id = await _approved(rt)
        plan = rt.get_plan(plan_id)
        [ran] = _events(rt, plan_id, "tests_ran")
        assert ran["status"] == "passed", ran["output_tail"]
        assert ran["summary"].startswith("2 passed")
        assert "the project's .venv" in ran["environment"] and "editable install" in ran["environment"]
        assert plan.pending_detail["tests"]["environment"] == ran["environment"]
        assert plan.pending_detail["verdict"] == "pass"
    finally:
        rt.close()
    reviews = [c for c in h.calls() if c["role"] in ("reviewer", "verifier")]
    assert all("Environment: the project's .venv" in c["prompt"] for c in reviews)


async def test_worktreeinclude_copies_env_and_it_never_reaches_a_commit(harness: Harness) -> None:
    project = harness.project
    (project / ".gitignore").write_text(".env\n.pytest_cache/\n__pycache__/\n")
    (project / ".worktreeinclude").write_text(".env\n")
    (project / "tests" / "test_env.py").write_text(
        "from pathlib import Path\n\n\ndef test_env_file_is_there():\n"
        "    assert Path('.env').read_text().startswith('API_TOKEN=')\n")
    harness.git("add", "-A")
    harness.git("commit", "-q", "-m", "include .env in worktrees")
    (project / ".env").write_text("API_TOKEN=s3cret\n")
    # the Developer stages and commits everything it sees, as agents do
    stage_all = [["git", "add", "-A"], ["git", "-c", "user.name=dev", "-c", "user.email=dev@x", "commit", "-qm", "wip"]]
    _passing_script(harness, [dev_turn(run=stage_all)])
    rt = _runtime(harness)
    try:
        plan_id = await _approved(rt)
        plan = rt.get_plan(plan_id)
        worktree = Path(plan.worktree_path or "")
        assert (worktree / ".env").read_text() == "API_TOKEN=s3cret\n"
        [ran] = _events(rt, plan_id, "tests_ran")
        assert ran["status"] == "passed", ran["output_tail"]
        assert list(_events(rt, plan_id, "worktree_included")[0]["copied"]) == [".env"]
        assert any("`.env`" in note and ".worktreeinclude" in note for note in _branch_notes(rt, plan_id))
        await rt.decide(plan_id, "accept")
        history = harness.git("log", "--format=", "--name-only", f"tunaflow/{plan.slug}")
        assert "calc.py" in history.split() and ".env" not in history.split()
        rt.merge(plan_id)
        assert ".env" not in harness.git("ls-files").split()
        assert (project / ".env").read_text() == "API_TOKEN=s3cret\n", "the user's own file is untouched"
    finally:
        rt.close()


SETUP_ECHO = 'echo "setup in $(pwd)"; echo "worktree=$TUNAFLOW_WORKTREE"; echo "project=$TUNAFLOW_PROJECT"; ' \
             'echo "branch=$TUNAFLOW_BRANCH"'


async def test_worktree_setup_runs_in_the_new_worktree_before_the_developer(harness: Harness) -> None:
    _passing_script(harness)
    rt = _runtime(harness, worktree_setup=SETUP_ECHO)
    try:
        plan_id = await _approved(rt)
        plan = rt.get_plan(plan_id)
        assert plan.pending_decision == "review"
        [finished] = _events(rt, plan_id, "setup_finished")
        assert finished["ok"] is True
        worktree = plan.worktree_path or ""
        output = finished["output_tail"]
        assert f"setup in {worktree}" in output and f"worktree={worktree}" in output
        assert f"project={harness.project.resolve()}" in output and f"branch=tunaflow/{plan.slug}" in output
        [note] = _branch_notes(rt, plan_id)
        assert "Worktree setup" in note and f"branch=tunaflow/{plan.slug}" in note
        types = [e.type for e in rt.store.list_plan_events(plan_id)]
        assert types.index("setup_finished") < types.index("worktree_ready") < types.index("impl_complete")
        # a rework in the same worktree does not set it up again
        await rt.decide(plan_id, "rework")
        assert len(_events(rt, plan_id, "setup_started")) == 1
    finally:
        rt.close()


FLAKY_SETUP = 'echo "installing…"; test -f "$TUNAFLOW_PROJECT/../setup-ok" || { echo "npm ERR! missing token" >&2; exit 3; }'


async def test_failed_setup_stops_before_the_developer_and_retry_continues(harness: Harness) -> None:
    _passing_script(harness)
    rt = _runtime(harness, worktree_setup=FLAKY_SETUP)
    try:
        await rt.send_user_message("Please add multiplication")
        [plan] = rt.store.list_plans()
        plan = await rt.decide(plan.id, "approve")
        assert plan.phase == "dev" and plan.pending_decision == "setup_failed"
        assert "exited with code 3" in plan.pending_detail["reason"]
        assert "npm ERR! missing token" in plan.pending_detail["reason"]
        assert "developer" not in _roles(harness), "the Developer never started"
        [note] = _branch_notes(rt, plan.id)
        assert "**failed**" in note and "npm ERR! missing token" in note
        assert {"retry setup", "skip setup", "hold", "abandon"} <= set(rt.service.allowed(plan.id))
        assert [p.kind for p in rt.service.pending_decisions()] == ["setup_failed"]

        (harness.project.parent / "setup-ok").write_text("")  # the user fixed it
        plan = await rt.decide(plan.id, "retry_setup")
        assert plan.pending_decision == "review"
        assert [e["ok"] for e in _events(rt, plan.id, "setup_finished")] == [False, True]
        assert _roles(harness).count("developer") == 1
    finally:
        rt.close()


async def test_failed_setup_can_be_skipped(harness: Harness) -> None:
    _passing_script(harness)
    rt = _runtime(harness, worktree_setup="exit 9")
    try:
        await rt.send_user_message("Please add multiplication")
        [plan] = rt.store.list_plans()
        plan = await rt.decide(plan.id, "approve")
        assert plan.pending_decision == "setup_failed"
        plan = await rt.decide(plan.id, "skip_setup")
        assert plan.pending_decision == "review"
        assert _events(rt, plan.id, "worktree_ready")[-1]["setup"] == "skipped"
        assert len(_events(rt, plan.id, "setup_started")) == 1, "skipping does not run it again"
        assert "developer" in _roles(harness)
    finally:
        rt.close()


async def test_tunaflow_run_leaves_a_failed_setup_pending_with_a_clear_line(
        harness: Harness, capsys: pytest.CaptureFixture[str]) -> None:
    _passing_script(harness)
    rt = _runtime(harness, worktree_setup=FLAKY_SETUP)
    out = io.StringIO()
    try:
        code = await drive(rt, GatePolicy(approve=True, accept=True), request="add mul", resume=False, out=out)
        assert code == EXIT_PENDING
        [plan] = rt.store.list_plans()
        text = out.getvalue()
        assert f"plan {plan.id}" in text and "setup_failed" in text and "--on-setup-fail retry" in text
        assert f"worktree: {plan.worktree_path}" in text
        assert "npm ERR! missing token" in capsys.readouterr().err
        # a retry that fails again is asked once per run, not looped
        again = await drive(rt, GatePolicy(on_setup_fail="retry"), request=None, resume=True, out=out)
        assert again == EXIT_PENDING
        assert len(_events(rt, plan.id, "setup_finished")) == 2
        (harness.project.parent / "setup-ok").write_text("")
        done = await drive(rt, GatePolicy(accept=True, on_setup_fail="retry"), request=None, resume=True, out=out)
        assert done == 0, out.getvalue()
    finally:
        rt.close()


async def test_a_test_command_that_cannot_start_is_an_error_and_reviewers_are_told(harness: Harness) -> None:
    _passing_script(harness)
    rt = _runtime(harness, test_command=["definitely-not-installed-runner-xyz"])
    try:
        plan_id = await _approved(rt)
        [ran] = _events(rt, plan_id, "tests_ran")
        assert ran["status"] == "error"
        assert ran["summary"].startswith("command not found: definitely-not-installed-runner-xyz")
        plan = rt.get_plan(plan_id)
        assert plan.pending_detail["tests"]["status"] == "error"
    finally:
        rt.close()
    reviews = [c for c in harness.calls() if c["role"] in ("reviewer", "verifier")]
    assert reviews and all("Status: error" in c["prompt"] and "could NOT START" in c["prompt"] for c in reviews)


async def test_failing_tests_are_a_failure_and_reviewers_are_told(harness: Harness) -> None:
    broken = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
    _passing_script(harness, [dev_turn(content=broken)])
    rt = _runtime(harness)
    try:
        plan_id = await _approved(rt)
        [ran] = _events(rt, plan_id, "tests_ran")
        assert ran["status"] == "failed"
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        assert ran["environment"].startswith(f"tunaflow's own Python {version} (no project environment found)")
        assert "worktree code first (./)" in ran["environment"]
    finally:
        rt.close()
    reviews = [c for c in harness.calls() if c["role"] in ("reviewer", "verifier")]
    assert reviews and all("Status: failed" in c["prompt"] and "some FAILED" in c["prompt"] for c in reviews)


async def test_a_developer_that_force_commits_a_copied_file_is_reported_at_review(harness: Harness) -> None:
    (harness.project / ".gitignore").write_text(".env\n.pytest_cache/\n__pycache__/\n")
    (harness.project / ".worktreeinclude").write_text(".env\n")
    harness.git("add", "-A")
    harness.git("commit", "-q", "-m", "include .env in worktrees")
    (harness.project / ".env").write_text("API_TOKEN=s3cret\n")
    force = [["git", "add", "-f", ".env"], ["git", "-c", "user.name=dev", "-c", "user.email=dev@x", "commit", "-qm", "env"]]
    _passing_script(harness, [dev_turn(run=force)])
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        plan_id = await _approved(rt)
        [leak] = _events(rt, plan_id, "private_files_committed")
        assert list(leak["paths"]) == [".env"]
        assert any(getattr(e, "level", "") == "error" and ".worktreeinclude" in getattr(e, "text", "")
                   for e in events)
        plan = rt.get_plan(plan_id)
        tree = harness.git("ls-tree", "-r", "--name-only", f"tunaflow/{plan.slug}").split()
        assert ".env" not in tree, "tunaflow's own commit took it back out of the branch's tree"
    finally:
        rt.close()


async def test_a_project_deleted_and_created_again_starts_the_same_plan_and_keeps_the_old_worktree(
        harness: Harness) -> None:
    _passing_script(harness)
    rt = _runtime(harness)
    try:
        await rt.send_user_message("Please add multiplication")
        [old] = rt.store.list_plans()
        old = await rt.decide(old.id, "approve")
        assert old.pending_decision == "review"
        old_tree = Path(old.worktree_path)
    finally:
        rt.close()
    (old_tree / "notes-from-the-old-project.txt").write_text("unfinished idea")
    shutil.rmtree(harness.project)
    (harness.project / "tests").mkdir(parents=True)
    (harness.project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (harness.project / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    (harness.project / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    for command in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "again"]):
        subprocess.run(command, cwd=harness.project, check=True)

    _passing_script(harness)
    events: list[RuntimeEvent] = []
    rt = _runtime(harness, events)
    try:
        await rt.send_user_message("Please add multiplication")
        [plan] = rt.store.list_plans()
        plan = await rt.decide(plan.id, "approve")
        assert plan.pending_decision == "review", plan.pending_detail
        assert plan.worktree_path == str(old_tree), "the same title: the same place"
        [created] = _events(rt, plan.id, "worktree_created")
    finally:
        rt.close()
    kept = Path(created["set_aside"])
    assert kept.parent == old_tree.parent / ".rescued"
    assert (kept / "notes-from-the-old-project.txt").read_text() == "unfinished idea"
    notices = [e.text for e in events if isinstance(e, NoticeRaised)]
    assert any(str(kept) in text and "moved, untouched" in text for text in notices), notices
