"""What each plan's own work is told about itself: ``TUNAFLOW_PLAN``, ``TUNAFLOW_WORKTREE`` and a ``TMPDIR`` of its own.

Several plans' Developers and test runs work at the same time. Whatever a project's tests take
from the environment — a temporary folder, a port derived from a number — must then differ between
them, or two runs trample each other's files and ports. The project's test command and the
Developer's turn get:

- ``TUNAFLOW_PLAN``: the plan's number (a project can derive a port from it: ``8000 + $TUNAFLOW_PLAN``);
- ``TUNAFLOW_WORKTREE``: the directory the plan's work happens in (its worktree);
- ``TMPDIR`` (and ``TMP``, ``TEMP``): a fresh folder for this one run, under the plan's own temporary
  area, removed when the run ends.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

PLAN_VARIABLE = "TUNAFLOW_PLAN"
WORKTREE_VARIABLE = "TUNAFLOW_WORKTREE"
TEMP_VARIABLES = ("TMPDIR", "TMP", "TEMP")


def plan_temp_area(project_dir: Path, plan_id: int) -> Path:
    """The plan's own temporary area (each run gets a fresh folder inside): one per project and plan."""
    digest = hashlib.sha256(str(project_dir).encode()).hexdigest()[:8]
    return Path(tempfile.gettempdir()) / f"tunaflow-{digest}" / f"plan-{plan_id}"


@contextmanager
def plan_environment(project_dir: Path, plan_id: int, worktree: Path) -> Iterator[Mapping[str, str]]:
    """The variables for one run of plan ``plan_id``'s work in ``worktree``; its ``TMPDIR`` is removed afterwards."""
    area = plan_temp_area(project_dir, plan_id)
    area.mkdir(parents=True, exist_ok=True, mode=0o700)
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=area))
    try:
        yield {PLAN_VARIABLE: str(plan_id), WORKTREE_VARIABLE: str(worktree),
               **{name: str(run_dir) for name in TEMP_VARIABLES}}
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
