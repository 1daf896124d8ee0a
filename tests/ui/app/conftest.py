"""Fixtures for the integrated app: the real runtime with the demo engine on a copy of the sample project."""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from app_harness import FAILING_REVIEWS, demo_settings

from tunaflow_tui.agents.demo.sample import copy_demo_project
from tunaflow_tui.app import TunaflowApp
from tunaflow_tui.controllers import ProjectSession
from tunaflow_tui.core.settings import Settings
from tunaflow_tui.runtime.runtime import EngineFactory, WorkflowRuntime
from tunaflow_tui.subcommands.open_command import build_app

AppFactory = Callable[..., tuple[TunaflowApp, ProjectSession, WorkflowRuntime]]


REQUEST = "Add a word frequency report"
"""What the user asks for in the app tests; the demo Architect proposes a plan for it."""


def _user_dirs_in(monkeypatch: pytest.MonkeyPatch, where: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(where / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(where / "xdg-data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(where / "xdg-state"))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in list(os.environ):  # the user's settings, but the test run's memory settings (tests/conftest.py)
        if name.upper().startswith("TUNAFLOW_") and not name.upper().startswith("TUNAFLOW_MEMORY__"):
            monkeypatch.delenv(name)


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample project made a git repo once per test process; each test works on a copy."""
    return copy_demo_project(tmp_path_factory.mktemp("template") / "textstats")


@pytest.fixture(scope="session")
def approval_template(tmp_path_factory: pytest.TempPathFactory, demo_template: Path) -> Path:
    """The sample project with the Architect's proposal for :data:`REQUEST` waiting for approval.

    The demo Architect's turn runs once per test process, headless, through the real runtime; tests
    about what the user sees and does at the approval gate open the app on a copy.
    """
    root = tmp_path_factory.mktemp("approval-template")
    project = root / "textstats"
    shutil.copytree(demo_template, project, symlinks=True)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _user_dirs_in(monkeypatch, root)
        runtime = WorkflowRuntime(project, demo_settings(project))
        try:
            asyncio.run(runtime.send_user_message(REQUEST))
            [plan] = runtime.store.list_plans()
            assert plan.pending_decision == "approval", plan
        finally:
            runtime.close()
    return project


@pytest.fixture
def demo_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    """A fresh copy of the sample project (a git repo with a pytest suite); user dirs point into tmp."""
    _user_dirs_in(monkeypatch, tmp_path)
    return Path(shutil.copytree(demo_template, tmp_path / "textstats", symlinks=True))


@pytest.fixture
def at_approval(demo_project: Path, approval_template: Path) -> Path:
    """The demo project with the proposal for :data:`REQUEST` waiting for the user's approval."""
    shutil.rmtree(demo_project)
    return Path(shutil.copytree(approval_template, demo_project, symlinks=True))


def _copy_back(template: Path) -> Path:
    """The template's folder copied back to where it was made (its worktree links and stored paths point
    there); the project in it."""
    work = template.parent / template.name.removesuffix("-template")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(template, work, symlinks=True)
    return work / "textstats"


def _headless_template(tmp_path_factory: pytest.TempPathFactory, approval_template: Path, name: str,
                       drive: Callable[[WorkflowRuntime], Any], **settings: Any) -> Path:
    """The approval template copied to ``<basetemp>/<name>`` and driven on by ``drive`` through the real
    runtime, headless; the result kept as ``<name>-template`` for :func:`_copy_back`."""
    work = tmp_path_factory.getbasetemp() / name
    project = work / "textstats"
    shutil.copytree(approval_template, project, symlinks=True)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _user_dirs_in(monkeypatch, tmp_path_factory.mktemp(f"{name}-user"))
        runtime = WorkflowRuntime(project, demo_settings(project, **settings))
        try:
            asyncio.run(drive(runtime))
        finally:
            runtime.close()
    template = tmp_path_factory.getbasetemp() / f"{name}-template"
    shutil.copytree(work, template, symlinks=True)
    return template


@pytest.fixture(scope="session")
def review_template(tmp_path_factory: pytest.TempPathFactory, approval_template: Path) -> Path:
    """The approval template's plan approved and run through to its review verdict, once per test process.

    The Developer's turn, the project's tests and both review seats run headless through the real
    runtime, in the folder :func:`at_review` copies it back into for every test: git's worktree links
    and the paths the store keeps hold there as they were made.
    """
    async def approve(runtime: WorkflowRuntime) -> None:
        [plan] = runtime.store.list_plans()
        plan = await runtime.decide(plan.id, "approve")
        assert plan.pending_decision == "review", plan

    return _headless_template(tmp_path_factory, approval_template, "at-review", approve)


@pytest.fixture
def at_review(demo_project: Path, review_template: Path) -> Path:
    """A project whose plan for :data:`REQUEST` was approved, implemented, tested and reviewed (a pass):
    its verdict waits for the user. The project is at the same path in every test of a process (its
    worktree and the store's paths point there): pass it to ``open_app(project=at_review)``."""
    return _copy_back(review_template)


@pytest.fixture(scope="session")
def second_failure_template(tmp_path_factory: pytest.TempPathFactory, approval_template: Path) -> Path:
    """The approval template's plan approved, failed in review, reworked and failed again, once per test
    process (the Developer's turns, the project's tests and the review seats run headless through the
    real runtime, the demo Reviewer failing ``FAILING_REVIEWS`` rounds: ``app_harness``)."""
    async def fail_twice(runtime: WorkflowRuntime) -> None:
        [plan] = runtime.store.list_plans()
        plan = await runtime.decide(plan.id, "approve")
        assert plan.pending_decision == "review", plan
        plan = await runtime.decide(plan.id, "rework")
        assert plan.pending_decision == "review", plan

    return _headless_template(tmp_path_factory, approval_template, "at-second-failure", fail_twice,
                              fail_reviews=FAILING_REVIEWS)


@pytest.fixture
def at_second_failure(demo_project: Path, second_failure_template: Path) -> Path:
    """A project whose plan for :data:`REQUEST` failed its review twice (rework in between): the second
    FAIL verdict waits for the user. Open it with ``open_app(project=at_second_failure,
    fail_reviews=FAILING_REVIEWS)``; like :func:`at_review`, it is at the same path in every test of a process."""
    return _copy_back(second_failure_template)


@pytest.fixture
def open_app(demo_project: Path) -> Iterator[AppFactory]:
    """Build the integrated app on the demo project: (app, controller, runtime)."""
    runtimes: list[WorkflowRuntime] = []

    def factory(*, fail_reviews: int = 0, settings: Settings | None = None, project: Path | None = None,
                notes: tuple[str, ...] | None = (), engine_factory: EngineFactory | None = None,
                **workflow: object) -> tuple[TunaflowApp, ProjectSession, WorkflowRuntime]:
        where = project or demo_project
        chosen = settings or demo_settings(where, fail_reviews=fail_reviews, **workflow)
        runtime = (WorkflowRuntime(where, chosen) if engine_factory is None
                   else WorkflowRuntime(where, chosen, engine_factory=engine_factory))
        runtimes.append(runtime)
        app = build_app(runtime, notes=notes, cursor_blink=False)
        assert isinstance(app.controller, ProjectSession)
        return app, app.controller, runtime

    yield factory
    for runtime in runtimes:
        runtime.close()


ENGINE_CLIS = frozenset({"claude", "codex", "gemini"})


def _in_seat_order(run_seat: Callable[..., Any], seats: tuple[str, ...]) -> Callable[..., Any]:
    """``run_seat`` (one review seat's turn) returning in seat order within a round.

    The seats run at once and each answer is recorded as its turn returns, so on a busy machine the
    timeline could list them either way round; a snapshot needs one order.
    """
    import asyncio

    rounds: dict[tuple[int, int], tuple[list[str], set[str], asyncio.Condition]] = {}

    def rank(seat: str) -> int:
        return seats.index(seat) if seat in seats else len(seats)

    async def in_order(rt: Any, plan: Any, seat: str, round_no: int, *rest: Any) -> Any:
        running, returned, turn = rounds.setdefault((plan.id, round_no), ([], set(), asyncio.Condition()))
        running.append(seat)
        result = await run_seat(rt, plan, seat, round_no, *rest)
        async with turn:
            await turn.wait_for(lambda: all(s in returned for s in running if rank(s) < rank(seat)))
            returned.add(seat)
            turn.notify_all()
        return result

    return in_order


@pytest.fixture
def steady_app(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., TunaflowApp]]:
    """The app on the demo project for snapshots: ``steady_app(folder, hide_engine_clis=False, engine_factory=None, **workflow)``.

    The project lives at ``<temp>/<folder>`` (prompt sizes and token counts derive from its path, so
    it is the same path on every run); a lock file beside it, held until the test ends, keeps two
    runs or two xdist workers out of each other's folder. Timeline clocks are frozen, the test run's
    duration is pinned, decision records show 12:00, review seats answer in seat order and, with ``hide_engine_clis``, the claude/codex/gemini CLIs count as not
    installed on any machine.
    """
    import dataclasses
    import re
    import shutil
    import tempfile

    from tunaflow_tui.controllers import plan_views, tools
    from tunaflow_tui.core import decision_records
    from tunaflow_tui.runtime import review

    made: list[tuple[WorkflowRuntime, Path]] = []
    locks: dict[str, IO[str]] = {}

    def factory(folder: str, *, hide_engine_clis: bool = False,
                engine_factory: EngineFactory | None = None, **workflow: object) -> TunaflowApp:
        root = Path(tempfile.gettempdir()) / folder
        if folder not in locks:
            locks[folder] = (root.parent / f"{folder}.lock").open("w")
            fcntl.flock(locks[folder], fcntl.LOCK_EX)  # another run using this folder finishes first
        shutil.rmtree(root, ignore_errors=True)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        monkeypatch.setenv("XDG_DATA_HOME", str(root / "data"))
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        for variable in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):  # the same commit ids on every run
            monkeypatch.setenv(variable, "2026-01-01T12:00:00+00:00")
        monkeypatch.setattr(plan_views, "event_time", lambda _event: "12:00:00")
        monkeypatch.setattr(decision_records, "_when", lambda _meta, *, full: "2026-01-01 12:00" if full else "12:00")
        if hide_engine_clis:
            real_which = shutil.which
            monkeypatch.setattr(tools.shutil, "which", lambda name, *args, **kwargs:
                                None if name in ENGINE_CLIS else real_which(name, *args, **kwargs))
        real_run_tests = review.run_tests

        def steady_run_tests(*args: object, **kwargs: object) -> object:
            result = real_run_tests(*args, **kwargs)  # type: ignore[arg-type]
            return dataclasses.replace(result, summary=re.sub(r" in [\d.]+s", " in 0.01s", result.summary))

        monkeypatch.setattr(review, "run_tests", steady_run_tests)
        monkeypatch.setattr(review, "_run_seat", _in_seat_order(review._run_seat, review.SEATS))
        project = copy_demo_project(root / "textstats")
        settings = demo_settings(project, **workflow)
        runtime = (WorkflowRuntime(project, settings) if engine_factory is None
                   else WorkflowRuntime(project, settings, engine_factory=engine_factory))
        made.append((runtime, root))
        app = build_app(runtime, notes=(), cursor_blink=False)
        app.theme = "tunaflow-dark"
        return app

    yield factory
    for runtime, root in made:
        runtime.close()
        shutil.rmtree(root, ignore_errors=True)
    for lock in locks.values():
        lock.close()  # releases the folder
