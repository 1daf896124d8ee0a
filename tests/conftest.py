"""Shared test set-up: a deterministic git identity, a clean environment for subprocesses, compiled
modules kept between runs, the long tests started first on the parallel workers, the garbage
collector kept off what outlives each test, and embeddings only where a test asks for them."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from long_first import CACHE_KEY, reorder

# Keep compiled modules (tests with pytest's rewritten asserts, and tunaflow's own, which the app
# processes started by the tests load too) even where PYTHONDONTWRITEBYTECODE is set: every worker
# otherwise parses and compiles them again on every run. The caches are ignored by git.
sys.dont_write_bytecode = False


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers more than there are CPUs.

    Many tests spend part of their time waiting (for an agent's subprocess, a terminal, a timer): with
    one worker per CPU the CPUs stood idle a third of the run; a third worker on two CPUs took a full
    run from about 11 to about 9 minutes, and a fourth from 4 min 26 s to 4 min 6 s on a faster
    machine (CPU time 6 min 34 s against 6 min 14 s: the CPUs were still idle a quarter of the run).
    """
    return (os.cpu_count() or 1) + 2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long tests first, dealt out to the xdist workers (``long_first``); the rest as shuffled."""
    cache = getattr(config, "cache", None)
    durations = cache.get(CACHE_KEY, {}) if cache is not None else {}
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    items[:] = reorder(items, [item.nodeid for item in items], durations, workers)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Let the finished test's widgets go, as the chat lets released messages go
    (:func:`~tunaflow_tui.widgets.chat_view.forget_released_lines`)."""
    if "textual.widget" in sys.modules:  # a test that drew no widget leaves Textual unloaded
        from tunaflow_tui.widgets.chat_view import forget_released_lines

        forget_released_lines()


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    """Collect the finished test's garbage, then keep what is still alive out of later full collections.

    A worker runs hundreds of apps; what stays alive between tests (modules, Textual's and Rich's
    caches, pytest's own records) grew to several hundred thousand objects, and each of Python's full
    collections walked all of them: a quarter of an app test's CPU time went to the collector.
    Frozen, they are walked no more; the next test's garbage is collected as usual.
    """
    gc.collect()
    gc.freeze()


_took: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add up each test's set-up, call and tear-down time (in the main process under xdist)."""
    _took[report.nodeid] = _took.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Keep this run's durations for the next run's order (the workers' reports reach the main process)."""
    cache = getattr(session.config, "cache", None)
    if cache is None or hasattr(session.config, "workerinput") or not _took:
        return
    durations = dict(cache.get(CACHE_KEY, {}))
    durations.update({nodeid: round(seconds, 2) for nodeid, seconds in _took.items()})
    cache.set(CACHE_KEY, durations)


def pytest_configure(config: pytest.Config) -> None:
    # Tests create real git repositories; CI machines may have no global git identity.
    os.environ.setdefault("GIT_AUTHOR_NAME", "tunaflow-tests")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "tests@tunaflow.invalid")
    os.environ.setdefault("GIT_COMMITTER_NAME", "tunaflow-tests")
    os.environ.setdefault("GIT_COMMITTER_EMAIL", "tests@tunaflow.invalid")
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    # No embedding worker unless the test is about memory (``@pytest.mark.embeddings``): every
    # `tunaflow ask`, `run` or opened app would otherwise start one beside the test, which loads the
    # model (most of a second of CPU) and stays for its idle time. The tests of memory turn them on.
    os.environ.setdefault(EMBEDDINGS, "false")
    # Embedding workers that tests start (every `ask` hands its messages to one) leave soon after.
    os.environ.setdefault("TUNAFLOW_MEMORY__WORKER_IDLE_SECONDS", "3")


EMBEDDINGS = "TUNAFLOW_MEMORY__EMBEDDINGS"
"""The setting (``[memory] embeddings``) as every process of a test reads it from the environment."""


@pytest.fixture(autouse=True)
def embeddings_when_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """``@pytest.mark.embeddings``: the test, and the processes it starts, embed as a user's tunaflow
    does by default (the embedding worker with the real model)."""
    if request.node.get_closest_marker("embeddings") is not None:
        monkeypatch.setenv(EMBEDDINGS, "true")


@pytest.fixture(scope="session")
def git_repo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository :func:`git_repo` copies, made once per test process."""
    repo = tmp_path_factory.mktemp("git-repo-template") / "project"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "README.md").write_text("# sample\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "initial"], check=True)
    return repo


@pytest.fixture
def git_repo(tmp_path: Path, git_repo_template: Path) -> Path:
    """A fresh git repository with one commit on branch main (a copy: three git commands saved per test)."""
    return Path(shutil.copytree(git_repo_template, tmp_path / "project", symlinks=True))
