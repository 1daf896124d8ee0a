"""``.worktreeinclude``: gitignored files (``.env``, local config) copied into each new worktree.

The file at the project root lists patterns in gitignore syntax — the convention Claude Code, Conductor
and Roo Code share. A file is copied when it matches a pattern *and* git ignores it: a file git would
track is either in the checkout already or would end up in a commit, so it is never copied.

Copied files are private to the worktree: their paths are kept in the worktree's own git admin
directory, and :func:`~tunaflow_tui.core.gitops.repo.commit_all` keeps them out of every commit even if
the Developer un-ignores them. Matching is git's own (``git ls-files --exclude-from``,
``git check-ignore``), not a second implementation of gitignore rules.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tunaflow_tui.core.gitops.runner import GitError, git_text, run_git

INCLUDE_FILE = ".worktreeinclude"
PRIVATE_PATHS_FILE = "tunaflow-private-paths"
MAX_COPIED_FILES = 5_000


@dataclass(frozen=True)
class IncludeResult:
    """What ``.worktreeinclude`` brought into a worktree: copied paths, and paths left out with why."""

    copied: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()


def _nul_list(data: bytes) -> list[str]:
    return [p for p in data.decode("utf-8", "surrogateescape").split("\0") if p]


def matching_untracked(project: Path, include_file: Path) -> list[str]:
    """Untracked files of ``project`` that match the patterns of ``include_file`` (gitignore syntax)."""
    proc = run_git(["ls-files", "-z", "--others", "--ignored", f"--exclude-from={include_file}"], project)
    return sorted(_nul_list(proc.stdout))


def ignored_by_git(project: Path, paths: Iterable[str]) -> set[str]:
    """The paths among ``paths`` that the project's own ignore rules ignore."""
    listing = "".join(f"{p}\0" for p in paths).encode("utf-8", "surrogateescape")
    if not listing:
        return set()
    proc = run_git(["check-ignore", "-z", "--stdin", "--no-index"], project, input_bytes=listing, check=False)
    if proc.returncode not in (0, 1):  # 1: none of them is ignored
        raise GitError(f"git check-ignore failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return set(_nul_list(proc.stdout))


def _safe_relative(rel: str) -> bool:
    parts = Path(rel).parts
    return bool(parts) and not Path(rel).is_absolute() and ".." not in parts and parts[0] != ".git"


def private_paths_file(worktree: Path) -> Path:
    """Where a worktree's private paths are listed: in its own git admin directory, never in the tree."""
    raw = git_text(["rev-parse", "--git-dir"], Path(worktree))
    git_dir = Path(raw) if Path(raw).is_absolute() else Path(worktree) / raw
    return git_dir / PRIVATE_PATHS_FILE


def private_paths(worktree: Path) -> list[str]:
    """The paths tunaflow put into ``worktree`` that must never be committed (empty when none)."""
    try:
        path = private_paths_file(worktree)
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except (GitError, OSError):
        return []
    return [line for line in text.splitlines() if line and _safe_relative(line)]


def add_private_paths(worktree: Path, paths: Iterable[str]) -> None:
    """Record ``paths`` as private to ``worktree`` (kept out of every commit tunaflow makes)."""
    known = private_paths(worktree)
    new = [p for p in paths if p not in known and _safe_relative(p) and "\n" not in p]
    if not new:
        return
    target = private_paths_file(worktree)
    with target.open("a", encoding="utf-8", errors="surrogateescape") as fh:
        fh.writelines(f"{p}\n" for p in new)


def _copy_one(source: Path, target: Path) -> str | None:
    """Copy a regular file (following a link to one); the reason it was not copied otherwise."""
    try:
        st = source.stat()
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if os.path.lexists(target):
        return "already in the worktree"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)
    return None


def copy_included(project: Path, worktree: Path) -> IncludeResult:
    """Copy the files ``.worktreeinclude`` names from ``project`` into ``worktree`` (a new worktree).

    Only untracked files that git ignores in the project are copied; a file already in the worktree is
    left as it is. Every copied path is recorded as private to the worktree.
    """
    project = Path(project).resolve()
    worktree = Path(worktree).resolve()
    include_file = project / INCLUDE_FILE
    if not include_file.is_file():
        return IncludeResult()
    candidates = [p for p in matching_untracked(project, include_file) if _safe_relative(p)]
    ignored = ignored_by_git(project, candidates)
    copied: list[str] = []
    skipped: list[tuple[str, str]] = []
    for rel in candidates:
        if rel not in ignored:
            skipped.append((rel, "not ignored by git (it would be committed)"))
            continue
        if len(copied) >= MAX_COPIED_FILES:
            skipped.append((rel, f"more than {MAX_COPIED_FILES} files match"))
            continue
        target = worktree / rel
        if not target.resolve().is_relative_to(worktree):
            skipped.append((rel, "outside the worktree"))
            continue
        try:
            reason = _copy_one(project / rel, target)
        except OSError as exc:
            reason = f"cannot copy: {exc.strerror or exc}"
        if reason is None:
            copied.append(rel)
        else:
            skipped.append((rel, reason))
    add_private_paths(worktree, copied)
    return IncludeResult(tuple(copied), tuple(skipped))


def unstage_private_paths(worktree: Path) -> list[str]:
    """Take the worktree's private paths out of the index (they stay on disk); returns those that were in it.

    They were never tracked (only untracked files are copied), so one in the index was staged or
    committed by someone: the next commit leaves it out of the branch's tree.
    """
    paths = private_paths(worktree)
    if not paths:
        return []
    proc = run_git(["--literal-pathspecs", "ls-files", "--cached", "-z", "--", *paths], Path(worktree))
    staged = _nul_list(proc.stdout)
    if staged:
        with contextlib.suppress(GitError):
            run_git(["--literal-pathspecs", "rm", "--cached", "-q", "--ignore-unmatch", "--", *staged],
                    Path(worktree))
    return staged


def committed_private_paths(worktree: Path, base: str) -> list[str]:
    """Private paths that a commit between ``base`` and HEAD contains (someone committed them anyway)."""
    paths = private_paths(worktree)
    if not paths:
        return []
    proc = run_git(["--literal-pathspecs", "log", "--format=", "--name-only", "-z", f"{base}..HEAD", "--", *paths],
                   Path(worktree), check=False)
    return sorted(set(_nul_list(proc.stdout)))
