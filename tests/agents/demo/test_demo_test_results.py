"""The demo on a plain install: the sample's tests need no pytest, and the demo reviewers read the test result."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from app_harness import demo_settings
from project_envs import git, make_venv

from tunaflow_tui.agents.agent_events import FinalMessage
from tunaflow_tui.agents.base import PermissionProfile, TurnRequest
from tunaflow_tui.agents.demo import DemoEngine, copy_demo_project
from tunaflow_tui.core.markers import parse_markers
from tunaflow_tui.core.settings.engines import EngineConfig
from tunaflow_tui.core.testrunner import detect_test_command, run_tests
from tunaflow_tui.runtime.runtime import WorkflowRuntime


async def _review(project: Path, prompt: str, seat: str = "reviewer") -> dict[str, object]:
    engine = DemoEngine(EngineConfig(name="demo", type="demo", demo_delay_s=0))
    turn = engine.start(TurnRequest(prompt=prompt, cwd=project, role=seat, profile=PermissionProfile.READ_ONLY))
    events = [event async for event in turn]
    final = events[-1]
    assert isinstance(final, FinalMessage)
    [verdict] = parse_markers(final.text, seat).to_json()["markers"]
    return verdict  # type: ignore[no-any-return]


def _prompt(status: str, summary: str) -> str:
    return (f"Review round: 1\nYou are the reviewer.\n\n## Plan\n\n# x\n\n## Test result\n\n"
            f"Status: {status}\nSummary: {summary}\n\n```\n...\n```\n")


async def _implemented(tmp_path: Path) -> Path:
    project = copy_demo_project(tmp_path / "sample")
    engine = DemoEngine(EngineConfig(name="demo", type="demo", demo_delay_s=0))
    turn = engine.start(TurnRequest(prompt="Implement the approved plan.", cwd=project, role="developer",
                                    profile=PermissionProfile.EDIT))
    [_ async for _ in turn]
    return project


def test_the_sample_tests_run_without_pytest(tmp_path: Path) -> None:
    project = copy_demo_project(tmp_path / "sample")
    command = detect_test_command(project)
    assert command is not None and command.label == "unittest"
    assert "pytest" not in command.argv
    # an interpreter with nothing installed, the way a plain `pip install -e .` leaves pytest out
    bare = make_venv(tmp_path / "bare", with_pytest=False, dependency=False)
    probe = subprocess.run([str(bare), "-c", "import pytest"], capture_output=True, text=True)
    assert "No module named 'pytest'" in probe.stderr
    result = run_tests(project, detect_test_command(project, python=str(bare)) or command, timeout_s=60)
    assert result.status == "passed", result.output
    assert result.summary.startswith("Ran 4 tests in ") and result.summary.endswith("— OK")


async def test_the_developers_sample_tests_run_without_pytest_too(tmp_path: Path) -> None:
    project = await _implemented(tmp_path)
    bare = make_venv(tmp_path / "bare", with_pytest=False, dependency=False)
    command = detect_test_command(project, python=str(bare))
    assert command is not None and command.label == "unittest"
    result = run_tests(project, command, timeout_s=60)
    assert result.status == "passed", result.output
    assert result.summary.startswith("Ran 9 tests in ")


@pytest.mark.parametrize(("status", "verdict"), [("passed", "pass"), ("failed", "fail"), ("timeout", "fail"),
                                                 ("error", "conditional")])
async def test_demo_reviewers_read_the_test_result(tmp_path: Path, status: str, verdict: str) -> None:
    project = await _implemented(tmp_path)
    for seat in ("reviewer", "verifier"):
        result = await _review(project, _prompt(status, "1 failed, 8 passed in 0.2s"), seat)
        assert result["verdict"] == verdict, (seat, result)
        findings = " ".join(str(f) for f in result["findings"])  # type: ignore[attr-defined]
        if status == "failed":
            assert "The project's tests fail: 1 failed, 8 passed in 0.2s" in findings
        if status == "error":
            assert "could not run" in findings and "not a test failure" in findings


async def test_demo_cycle_with_a_broken_sample_fails_the_review(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    project = copy_demo_project(tmp_path / "textstats")
    core = project / "textstats" / "core.py"
    core.write_text(core.read_text().replace("match.group(0).lower()", "match.group(0)"))  # words keep case
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "a regression")
    runtime = WorkflowRuntime(project, demo_settings(project))
    try:
        await runtime.send_user_message("Plan a word-frequency report")
        [plan] = runtime.store.list_plans()
        plan = await runtime.decide(plan.id, "approve")
        assert plan.pending_detail["tests"]["status"] == "failed"
        assert plan.pending_detail["verdict"] == "fail"
        findings = plan.pending_detail["aggregate"]["findings"]
        assert any(str(f).startswith("The project's tests fail: Ran 9 tests") for f in findings), findings
    finally:
        runtime.close()


@pytest.mark.e2e
def test_tunaflow_run_demo_is_green_where_pytest_is_not_installed(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    project = copy_demo_project(tmp_path / "sample")
    make_venv(project / ".venv", with_pytest=False, dependency=False)  # the sample's own env: no pytest in it
    result = subprocess.run(
        [sys.executable, "-m", "tunaflow_tui", "run", str(project), "--demo", "--request", "Add a word report",
         "--approve", "--accept"],
        capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Running the project's tests: unittest — environment: the project's .venv" in result.stdout
    assert "Tests passed: Ran 9 tests in " in result.stdout
    assert "No module named pytest" not in result.stdout
