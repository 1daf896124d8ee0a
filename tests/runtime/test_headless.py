"""`tunaflow run`: gates only from flags, exit 0 done / 3 pending / 1 error."""

from __future__ import annotations

import subprocess
import sys

import pytest
from runtime_harness import PROPOSAL, Harness, dev_turn, verdict
from tunaflow_cli import tunaflow

from tunaflow_tui.core.storage import Store
from tunaflow_tui.runtime import headless  # noqa: F401  loaded here, under another stdout than each run's

pytestmark = pytest.mark.e2e


def _run(h: Harness, *args: str, in_process: bool = True) -> subprocess.CompletedProcess[str]:
    """``tunaflow run PROJECT ARGS``, in this process (``tunaflow_cli``) unless ``in_process`` is False."""
    return tunaflow(["run", str(h.project), *args], in_process=in_process)


def _configure(h: Harness) -> None:
    h.write_config()


def test_without_approve_it_stops_at_the_gate_and_a_later_run_continues(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    _configure(harness)
    first = _run(harness, "--request", "add mul")
    assert first.returncode == 3, first.stdout + first.stderr
    assert "Waiting for you" in first.stdout and "approval" in first.stdout
    with Store.open(harness.project) as store:
        [plan] = store.list_plans()
        assert plan.pending_decision == "approval"
    second = _run(harness, "--resume", "--approve")
    assert second.returncode == 3, "a passing review still waits for --accept"
    with Store.open(harness.project) as store:
        [plan] = store.list_plans()
        assert plan.pending_decision == "review"
    third = _run(harness, "--resume", "--accept", "--merge")
    assert third.returncode == 0, third.stdout + third.stderr
    assert "Merge: fast-forward" in third.stdout
    assert "def mul" in (harness.project / "calc.py").read_text()


def test_failed_review_with_on_fail_stop_leaves_the_decision_pending(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("fail")}], verifier=[{"text": verdict("pass")}])
    _configure(harness)
    result = _run(harness, "--request", "add mul", "--approve", "--accept")
    assert result.returncode == 3
    assert "review" in result.stdout


def test_on_fail_rework_loops_until_max_rounds(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("fail")}], verifier=[{"text": verdict("pass")}])
    _configure(harness)
    result = _run(harness, "--request", "add mul", "--approve", "--accept", "--on-fail", "rework",
                  "--max-rounds", "2")
    assert result.returncode == 3, result.stdout + result.stderr
    with Store.open(harness.project) as store:
        [plan] = store.list_plans()
        assert plan.review_round == 2 and plan.pending_decision == "review"


def test_errors_exit_with_a_message(harness: Harness) -> None:
    result = _run(harness, "--request", "x", "--max-rounds", "0")
    assert result.returncode == 2 and "--max-rounds" in result.stderr, "a usage error"
    bad = subprocess.run([sys.executable, "-m", "tunaflow_tui", "run", str(harness.root / "missing"), "--resume"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "not a directory" in bad.stderr, "a usage error"
    (harness.project / ".tunaflow").mkdir(exist_ok=True)
    (harness.project / ".tunaflow" / "config.toml").write_text("[roles]\narchitect = \"nope\"\n")
    broken = _run(harness, "--request", "x")
    assert broken.returncode == 1 and "nope" in broken.stderr


def test_demo_engine_runs_the_whole_cycle(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tunaflow_tui.agents.demo.sample import copy_demo_project

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    project = copy_demo_project(tmp_path / "sample")
    result = subprocess.run(
        [sys.executable, "-m", "tunaflow_tui", "run", str(project), "--demo", "--request", "Add a word report",
         "--approve", "--accept", "--on-fail", "rework", "--merge"],
        capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Tests passed" in result.stdout
    assert (project / "textstats" / "frequency.py").exists(), "the merge brought the Developer's work home"


def test_merge_refused_when_the_user_tree_has_uncommitted_changes(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    _configure(harness)
    (harness.project / "calc.py").write_text("# my own unfinished edit\n")
    result = _run(harness, "--request", "add mul", "--approve", "--accept", "--merge")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Merge refused" in result.stdout
    assert (harness.project / "calc.py").read_text() == "# my own unfinished edit\n", "nothing of the user's is lost"
    with Store.open(harness.project) as store:
        [plan] = store.list_plans()
        assert plan.phase == "done" and plan.worktree_path, "the work stays on its branch and worktree"


def test_agent_text_reaches_the_terminal_inert(harness: Harness) -> None:
    hostile = PROPOSAL.replace("# Add multiplication to calc", "# Add \x1b]0;pwned\x07multiplication \x1b[2Jto calc")
    harness.set_script(architect=[{"text": hostile}])
    _configure(harness)
    run = _run(harness, "--request", "add mul", in_process=False)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "Waiting for you" in run.stdout and "multiplication" in run.stdout
    assert "\x1b" not in run.stdout + run.stderr and "\x07" not in run.stdout


def test_an_errored_review_seat_is_not_a_pass_and_accept_does_not_merge_it(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"auth_401": True}])
    _configure(harness)
    first = _run(harness, "--request", "add mul", "--approve", "--accept", "--merge")
    assert first.returncode == 3, first.stdout + first.stderr
    assert "review incomplete: retry the seat" in first.stdout
    assert "1 of 2 seats" in first.stdout and "--accept-partial" in first.stdout
    assert "def mul" not in (harness.project / "calc.py").read_text(), "nothing was merged"
    with Store.open(harness.project) as store:
        [plan] = store.list_plans()
        assert plan.phase == "review" and plan.pending_decision == "review"
        assert "accepted" not in [e.type for e in store.list_plan_events(plan.id)]

    second = _run(harness, "--resume", "--accept-partial", "--merge")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Merge: fast-forward" in second.stdout
    with Store.open(harness.project) as store:
        [plan] = store.list_plans()
        [accepted] = [e for e in store.list_plan_events(plan.id) if e.type.startswith("accepted")]
        assert accepted.type == "accepted_partial_review" and accepted.actor == "user"
        assert (accepted.detail["answered"], accepted.detail["seats"], accepted.detail["errored"]) == (
            1, 2, ("verifier",))


def test_accept_never_accepts_a_failed_review(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("fail")}], verifier=[{"text": verdict("pass")}])
    _configure(harness)
    result = _run(harness, "--request", "add mul", "--approve", "--accept", "--accept-partial", "--merge")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "the review says fail" in result.stdout
    with Store.open(harness.project) as store:
        [plan] = store.list_plans()
        assert plan.pending_decision == "review" and plan.pending_detail["verdict"] == "fail"


def test_retry_seats_runs_the_errored_seat_again_and_a_full_pass_is_accepted(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"auth_401": True}, {"text": verdict("pass")}])
    _configure(harness)
    result = _run(harness, "--request", "add mul", "--approve", "--accept", "--retry-seats")
    assert result.returncode == 0, result.stdout + result.stderr
    with Store.open(harness.project) as store:
        [plan] = store.list_plans()
        types = [e.type for e in store.list_plan_events(plan.id)]
        assert "review_retry_requested" in types and types[-1] == "accepted"
        assert plan.review_round == 1
