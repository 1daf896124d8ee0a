"""Symbolic refs an agent may plant, and the commits a ref's log still names when no ref holds them.

``git symbolic-ref refs/heads/tunaflow/<slug> refs/heads/main`` makes a plan's branch an alias: every
commit "on the plan's branch" then moves ``main``, and a plain ``update-ref`` of the alias does too.
The ref guard finds such aliases with :func:`symref_target` and keeps what the replaced branch held
with :func:`lost_tips`. Every git command here runs with hooks disabled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tunaflow_tui.core.gitops.hooks import NO_HOOKS
from tunaflow_tui.core.gitops.runner import run_git as _run_git

ZERO = "0" * 40
LOG_ENTRIES = 50  # a plan's branch logs every commit: its newest entries cover one agent turn


def _git(args: Sequence[str], cwd: Path, **kwargs: Any) -> bytes:
    return _run_git([*NO_HOOKS, *args], cwd, check=False, **kwargs).stdout


def symref_target(repo: Path, ref: str) -> str | None:
    """The ref ``ref`` points at when it is a symbolic ref (followed to the end), else None."""
    proc = _run_git([*NO_HOOKS, "symbolic-ref", "-q", ref], repo, check=False)
    target = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return target or None if proc.returncode == 0 else None


def _log_shas(repo: Path, ref: str) -> list[str]:
    """The commits the newest entries of ``ref``'s log name (both sides of each entry), newest first."""
    raw = Path(_git(["rev-parse", "--git-path", f"logs/{ref}"], repo).decode("utf-8", "surrogateescape").strip())
    path = raw if raw.is_absolute() else repo / raw
    try:
        lines = path.read_bytes().decode("utf-8", "replace").splitlines()[-LOG_ENTRIES:]
    except OSError:
        return []
    shas: list[str] = []
    for line in reversed(lines):
        parts = line.split(" ", 2)
        for sha in reversed(parts[:2]):  # the new side of an entry is the newer
            if len(sha) == 40 and sha != ZERO and sha not in shas:
                shas.append(sha)
    return shas


def lost_tips(repo: Path, ref: str, keep: Callable[[str], str]) -> list[str]:
    """Keep each commit ``ref``'s log names that no ref holds any more; what ``keep(sha)`` returned for each.

    ``keep`` must make a ref holding ``sha``. Newest first, so the ancestors of a kept commit are held
    by it and not kept again.
    """
    return [keep(sha) for sha in _log_shas(repo, ref) if not held(repo, sha)]


def held(repo: Path, sha: str) -> bool:
    """False when ``sha`` is a commit no ref (nor any working tree's HEAD) reaches."""
    loose = _git(["rev-list", "-n", "1", f"{sha}^{{commit}}", "--not", "--all"], repo)
    return not loose.strip()
