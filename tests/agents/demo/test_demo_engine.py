"""The demo engine plays a whole Plan → Dev → Review cycle on a real copy of the sample project."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from tunaflow_tui.agents.agent_events import (
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    SessionStarted,
    TextDelta,
    ToolUse,
    Usage,
)
from tunaflow_tui.agents.base import PermissionProfile, TurnRequest
from tunaflow_tui.agents.demo import DemoEngine, copy_demo_project
from tunaflow_tui.core.markers import parse_markers
from tunaflow_tui.core.settings.engines import EngineConfig


def _engine(**extra: object) -> DemoEngine:
    return DemoEngine(EngineConfig(name="demo", type="demo", demo_delay_s=0, **extra))  # type: ignore[arg-type]


async def _run(engine: DemoEngine, role: str, prompt: str, cwd: Path) -> list[EngineEvent]:
    turn = engine.start(TurnRequest(prompt=prompt, cwd=cwd, role=role, profile=PermissionProfile.CHAT))
    return [event async for event in turn]


def _final(events: list[EngineEvent]) -> str:
    last = events[-1]
    assert isinstance(last, FinalMessage), last
    assert last.text == "".join(e.text for e in events if isinstance(e, TextDelta))
    return last.text


def _pytest(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest"], cwd=project, capture_output=True, text=True,
                          timeout=60)


def _tree(project: Path) -> dict[str, str]:
    return {str(p.relative_to(project)): p.read_text(encoding="utf-8")
            for p in sorted(project.rglob("*")) if p.is_file() and ".git" not in p.parts}


def test_sample_project_ships_in_the_package() -> None:
    root = resources.files("tunaflow_tui").joinpath("data", "demo_project")
    for relative in ("README.md", "pyproject.toml", "textstats/__init__.py", "textstats/core.py",
                     "tests/test_textstats.py"):
        assert root.joinpath(*relative.split("/")).is_file(), relative


def test_copy_demo_project_makes_a_git_repo_whose_tests_pass(tmp_path: Path) -> None:
    project = copy_demo_project(tmp_path / "sample")
    log = subprocess.run(["git", "log", "--oneline"], cwd=project, capture_output=True, text=True, check=True)
    assert len(log.stdout.splitlines()) == 1
    status = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True)
    assert status.stdout == ""
    result = _pytest(project)
    assert result.returncode == 0, result.stdout
    with pytest.raises(FileExistsError):
        copy_demo_project(project)


def test_copy_works_without_any_git_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    project = copy_demo_project(tmp_path / "sample")
    author = subprocess.run(["git", "log", "-1", "--format=%ae"], cwd=project, capture_output=True, text=True)
    assert author.stdout.strip() == "demo@tunaflow.invalid"


async def test_full_cycle_architect_developer_reviewer(tmp_path: Path) -> None:
    project = copy_demo_project(tmp_path / "sample")
    engine = _engine()
    pristine = _tree(project)

    plan_events = await _run(engine, "architect", "Please plan a word-frequency report.", project)
    plan = _final(plan_events)
    assert plan.count("<!-- tunaflow:plan-proposal -->") == 1 and "<!-- /tunaflow:plan-proposal -->" in plan
    for section in ("title: Add a word-frequency report to textstats", "subtasks:\n1. ", "\n2. ", "\n3. ",
                    "description:", "expected outcome:", "constraints:", "non-goals:"):
        assert section in plan
    assert _tree(project) == pristine  # the architect does not edit
    parsed = parse_markers(plan, "architect").to_json()["markers"]
    assert [m["kind"] for m in parsed] == ["plan-proposal"] and parsed[0]["accepted"]
    assert parsed[0]["title"] == "Add a word-frequency report to textstats"
    assert [t["index"] for t in parsed[0]["subtasks"]] == [1, 2, 3]

    dev_events = await _run(engine, "developer", "Implement the approved plan.", project)
    dev = _final(dev_events)
    for n in (1, 2, 3):
        assert f"<!-- tunaflow:subtask-done:{n} -->" in dev
    assert dev.rstrip().endswith("<!-- tunaflow:impl-complete -->")
    dev_kinds = [m["kind"] for m in parse_markers(dev, "developer").to_json()["markers"]]
    assert dev_kinds.count("impl-complete") == 1 and len(dev_kinds) == 4
    assert dev.index("subtask-done:1") < dev.index("subtask-done:2") < dev.index("subtask-done:3")
    writes = [e.tool.detail for e in dev_events if isinstance(e, ToolUse) and e.tool.name in ("Write", "Edit")]
    assert "textstats/frequency.py" in writes and "tests/test_frequency.py" in writes
    result = _pytest(project)
    assert result.returncode == 0, result.stdout
    assert "9 passed" in result.stdout  # 4 original + 5 new, including the empty-text edge case

    before = _tree(project)
    review = _final(await _run(engine, "reviewer", "Review round: 1\nReview the diff.", project))
    assert "<!-- tunaflow:review-verdict -->" in review and "verdict: pass" in review
    verdict = parse_markers(review, "reviewer").to_json()["markers"][0]
    assert verdict["verdict"] == "pass" and verdict["accepted"] and verdict["failed_subtasks"] == []
    assert verdict["scores"]["plan_coverage"] == 5
    assert _tree(project) == before  # read-only


async def test_demo_fail_reviews_then_rework_fixes_the_real_finding(tmp_path: Path) -> None:
    project = copy_demo_project(tmp_path / "sample")
    engine = _engine(demo_fail_reviews=2)
    _final(await _run(engine, "developer", "Implement the approved plan.", project))
    assert _pytest(project).returncode == 0

    first = _final(await _run(engine, "reviewer", "Review round: 1", project))
    assert "verdict: fail" in first and "no test for empty text" in first
    failed = parse_markers(first, "reviewer").to_json()["markers"][0]
    assert failed["verdict"] == "fail" and failed["failed_subtasks"] == [3]
    verifier = _final(await _run(engine, "verifier", "Review round: 1", project))
    assert "verdict: fail" in verifier  # the verifier sees the same real gap

    rework = _final(await _run(engine, "developer", "Review findings:\n- no test for empty text", project))
    assert "<!-- tunaflow:impl-complete -->" in rework
    assert "def test_empty_text_has_no_frequencies" in (project / "tests" / "test_frequency.py").read_text()
    assert _pytest(project).returncode == 0

    second = _final(await _run(engine, "reviewer", "Review round: 2", project))
    assert "verdict: fail" in second and "demo_fail_reviews" in second and "empty text" not in second
    assert "verdict: pass" in _final(await _run(engine, "verifier", "Review round: 2", project))
    third = _final(await _run(engine, "reviewer", "Review round: 3", project))
    assert "verdict: pass" in third


async def test_reviewer_on_an_untouched_project_fails_every_subtask(tmp_path: Path) -> None:
    project = copy_demo_project(tmp_path / "sample")
    review = _final(await _run(_engine(), "reviewer", "Review round: 1", project))
    assert "verdict: fail" in review and "failed_subtasks: [1, 2, 3]" in review


async def test_architect_revision_addresses_the_feedback(tmp_path: Path) -> None:
    engine = _engine()
    text = _final(await _run(engine, "architect", "plan it\nRevision requested: also count digits", tmp_path))
    assert "Revision 2" in text and "also count digits" in text
    assert text.count("<!-- tunaflow:plan-proposal -->") == 1
    again = _final(await _run(
        engine, "architect", "Revision requested: a\nReview findings:\n- missing edge case", tmp_path))
    assert "Revision 3" in again


async def test_architect_chat_without_a_plan_request(tmp_path: Path) -> None:
    text = _final(await _run(_engine(), "architect", "hello there, what is this?", tmp_path))
    assert "tunaflow:" not in text and "plan" in text


async def test_synthesizer_summarizer_and_free_roles(tmp_path: Path) -> None:
    engine = _engine()
    assert "<!-- tunaflow:consensus -->" in _final(await _run(engine, "synthesizer", "topic", tmp_path))
    assert _final(await _run(engine, "summarizer", "summarise", tmp_path)).startswith("Summary:")
    assert "critic" in _final(await _run(engine, "critic", "topic", tmp_path))


async def test_session_usage_and_determinism(tmp_path: Path) -> None:
    engine = _engine()
    first = await _run(engine, "architect", "plan a report", tmp_path)
    second = await _run(engine, "architect", "plan a report", tmp_path)
    assert first == second
    assert isinstance(first[0], SessionStarted) and first[0].session_id.startswith("demo-")
    other_role = await _run(engine, "reviewer", "x", tmp_path)
    assert isinstance(other_role[0], SessionStarted) and other_role[0].session_id != first[0].session_id
    usage = next(e for e in first if isinstance(e, Usage))
    assert usage.input_tokens == len("plan a report") // 4 and usage.output_tokens > 50


async def test_developer_outside_the_sample_project_writes_only_the_demo_note(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep", encoding="utf-8")
    text = _final(await _run(_engine(), "developer", "implement", tmp_path))
    assert text.count("impl-complete") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["TUNAFLOW_DEMO.md", "mine.txt"]
    assert (tmp_path / "mine.txt").read_text(encoding="utf-8") == "keep"
    assert "- `mine.txt`" in (tmp_path / "TUNAFLOW_DEMO.md").read_text(encoding="utf-8")


async def test_cancel_mid_stream_with_pacing(tmp_path: Path) -> None:
    engine = DemoEngine(EngineConfig(name="demo", demo_delay_s=0.01))
    turn = engine.start(TurnRequest(prompt="plan a report", cwd=tmp_path, role="architect"))
    events: list[EngineEvent] = []

    async def consume() -> None:
        async for event in turn:
            events.append(event)

    task = asyncio.create_task(consume())
    while sum(isinstance(e, TextDelta) for e in events) < 3:
        await asyncio.sleep(0.005)
    await turn.cancel()
    await asyncio.wait_for(task, 30)  # a hang limit: the cancel is seen at the next chunk
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.CANCELLED
    assert error.partial_text == "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "plan-proposal -->" not in error.partial_text


@pytest.mark.parametrize("foreign", [False, True])
async def test_the_architect_s_plan_names_no_keys(tmp_path: Path, foreign: bool) -> None:
    """In a branch pane ``a`` adopts the branch: a reply saying "approve it with a" would send the user
    to the wrong key. The card names the keys as they are mapped where it is shown."""
    where = tmp_path
    if foreign:
        (where / "main.go").write_text("package main\n", encoding="utf-8")
    text = _final(await _run(_engine(), "architect", "plan a word-frequency report", where))
    assert "<!-- tunaflow:plan-proposal -->" in text
    prose = text.rsplit("<!-- /tunaflow:plan-proposal -->", 1)[-1]
    assert "**a**" not in prose and "**r**" not in prose and "with a" not in prose
    assert "plan's card" in prose
