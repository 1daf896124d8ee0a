"""What a branch changed against its base: committed, staged, unstaged and untracked, as one diff."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tunaflow_tui.core.gitops.repo import resolve_commit
from tunaflow_tui.core.gitops.runner import GitError, git_text, run_git

DEFAULT_DIFF_MAX_BYTES = 200_000


@dataclass(frozen=True)
class DiffStat:
    """Summary of a diff: number of files, inserted and deleted lines, and git's ``--stat`` text."""

    files: int
    insertions: int
    deletions: int
    text: str
    paths: tuple[str, ...] = ()


def merge_base(worktree: Path, base: str) -> str:
    """The merge-base of ``base`` and HEAD in ``worktree``."""
    base_sha = resolve_commit(worktree, base)
    return git_text(["merge-base", base_sha, "HEAD"], Path(worktree))


@contextmanager
def _whole_tree_index(worktree: Path) -> Iterator[dict[str, str]]:
    """A throw-away index holding the working tree as it is (untracked files included).

    The user's real index is never touched; diffing ``--cached`` against it shows every change.
    """
    with tempfile.TemporaryDirectory(prefix="tunaflow-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        run_git(["read-tree", "HEAD"], Path(worktree), env=env)
        run_git(["add", "-A"], Path(worktree), env=env)
        yield env


def truncate_text(text: str, max_bytes: int) -> str:
    """Cut ``text`` to at most ``max_bytes`` UTF-8 bytes at a line break, with a marker line saying so."""
    data = text.encode("utf-8")
    if max_bytes <= 0 or len(data) <= max_bytes:
        return text
    cut = data[:max_bytes]
    newline = cut.rfind(b"\n")
    if newline > 0:
        cut = cut[: newline + 1]
    kept = cut.decode("utf-8", "ignore")
    if not kept.endswith("\n"):
        kept += "\n"
    return kept + f"[… diff truncated: {len(cut)} of {len(data)} bytes shown …]\n"


def diff_against_base(worktree: Path, base: str, *, max_bytes: int = DEFAULT_DIFF_MAX_BYTES) -> str:
    """Unified diff of everything in ``worktree`` (committed, uncommitted, untracked) vs its merge-base.

    Output above ``max_bytes`` is cut at a line break and ends with a ``[… diff truncated …]`` line.
    """
    worktree = Path(worktree)
    mb = merge_base(worktree, base)
    with _whole_tree_index(worktree) as env:
        proc = run_git(["diff", "--cached", "--no-color", "--no-ext-diff", "-M", mb], worktree, env=env)
    return truncate_text(proc.stdout.decode("utf-8", "replace"), max_bytes)


def diff_stat(worktree: Path, base: str) -> DiffStat:
    """Files changed and lines inserted/deleted in ``worktree`` vs its merge-base with ``base``."""
    worktree = Path(worktree)
    mb = merge_base(worktree, base)
    with _whole_tree_index(worktree) as env:
        numstat = run_git(["diff", "--cached", "--numstat", "-z", "-M", mb], worktree, env=env).stdout
        stat = run_git(["diff", "--cached", "--no-color", "--stat", "-M", mb], worktree, env=env).stdout
    insertions = deletions = 0
    paths: list[str] = []
    fields = numstat.decode("utf-8", "surrogateescape").split("\0")
    i = 0
    while i < len(fields):
        head = fields[i]
        i += 1
        if not head:
            continue
        parts = head.split("\t")
        if len(parts) != 3:
            raise GitError(f"unexpected numstat line: {head!r}")
        added, deleted, path = parts
        if path == "":  # rename: the next two fields are the old and the new path
            path = fields[i + 1] if i + 1 < len(fields) else ""
            i += 2
        insertions += int(added) if added.isdigit() else 0
        deletions += int(deleted) if deleted.isdigit() else 0
        paths.append(path)
    return DiffStat(
        files=len(paths),
        insertions=insertions,
        deletions=deletions,
        text=stat.decode("utf-8", "replace").rstrip("\n"),
        paths=tuple(paths),
    )
