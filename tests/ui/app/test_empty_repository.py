"""A git repository with no commits: the app asks up front whether to create the initial commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

from app_harness import demo_settings, posted, screen_text
from waiting import until

from tunaflow_tui.core.gitops import has_commits
from tunaflow_tui.screens.decision_screen import DecisionScreen


def _empty_repo(tmp_path: Path) -> Path:
    project = tmp_path / "fresh"
    project.mkdir()
    (project / "todo.txt").write_text("write the report\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=project, check=True)
    return project


def _notes(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [n.message for n in posted(app)]


async def test_an_empty_repository_is_offered_an_initial_commit_of_its_files(open_app, tmp_path) -> None:
    project = _empty_repo(tmp_path)
    app, _controller, runtime = open_app(project=project, settings=demo_settings(project))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DecisionScreen)
        await until(pilot, lambda: "no commits yet" in screen_text(app), "no commits yet on screen")
        await pilot.press("c")
        await until(pilot, lambda: any("Created the initial commit" in n for n in _notes(app)),
                    "the initial commit")
        assert any("Created the initial commit" in n for n in _notes(app))
        assert not runtime.needs_initial_commit
    assert has_commits(project)
    tracked = subprocess.run(["git", "ls-files"], cwd=project, capture_output=True, text=True, check=True).stdout
    assert tracked.split() == ["todo.txt"]


async def test_not_now_leaves_the_repository_alone_and_says_what_a_plan_needs(open_app, tmp_path) -> None:
    project = _empty_repo(tmp_path)
    app, _controller, runtime = open_app(project=project, settings=demo_settings(project))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DecisionScreen)
        await pilot.press("n")
        assert runtime.needs_initial_commit
        await pilot.pause()
        assert not isinstance(app.screen, DecisionScreen)
        assert any("no commits yet" in n for n in _notes(app))
    assert not has_commits(project)
