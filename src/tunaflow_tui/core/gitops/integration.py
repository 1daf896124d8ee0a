"""Bringing the base into a plan's branch, in the plan's worktree, and checking what a resolve left.

When a done plan no longer merges into its base (another plan landed first), its Developer resolves
the conflict in the plan's own worktree: :func:`start_base_merge` starts ``git merge --no-commit`` of
the base there (a merge, not a rebase: the reviewed commits stay as they were), leaving the conflict
markers for the Developer; :func:`left_unresolved` then says whether anything was left — conflict
markers, files untouched since, or the merge undone — before tunaflow commits the result. Neither touches
the base branch or the user's own tree.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tunaflow_tui.core.gitops.repo import is_ancestor, resolve_commit
from tunaflow_tui.core.gitops.runner import GitError, identity_args, run_git

_MARKER = re.compile(rb"^(<<<<<<<|>>>>>>>)( |$)", re.MULTILINE)
_MARKER_SCAN_BYTES = 4_000_000


@dataclass(frozen=True)
class BaseMerge:
    """A merge of the base started in a worktree: the base commit merged, the files left in conflict and
    what each of them held then (a file nobody touched since is not resolved)."""

    base_sha: str
    conflicted: tuple[str, ...]
    as_left: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Unresolved:
    """What a resolve turn left: the files still in conflict, and why (one line)."""

    files: tuple[str, ...]
    reason: str


def merge_in_progress(worktree: Path) -> bool:
    """True while a merge waits to be committed in ``worktree`` (``MERGE_HEAD`` exists)."""
    proc = run_git(["rev-parse", "-q", "--verify", "MERGE_HEAD"], Path(worktree), check=False)
    return proc.returncode == 0


def unmerged_paths(worktree: Path) -> tuple[str, ...]:
    """The paths git still holds in conflict in ``worktree``'s index."""
    out = run_git(["diff", "--name-only", "--diff-filter=U", "-z"], Path(worktree), check=False).stdout
    return tuple(sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}))


def _content_id(worktree: Path, rel: str) -> str:
    path = worktree / rel
    if not path.is_file() or path.is_symlink():
        return ""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _as_left(worktree: Path, conflicted: tuple[str, ...]) -> BaseMerge:
    return BaseMerge("", conflicted, {rel: _content_id(worktree, rel) for rel in conflicted})


def start_base_merge(worktree: Path, base: str, *, git_config: Sequence[str] = ()) -> BaseMerge:
    """Start merging local branch ``base`` into the branch checked out in ``worktree``, without committing.

    A merge already in progress (an earlier resolve turn left it) is kept as it is. Conflicted files
    keep their markers for the Developer; a clean merge waits to be committed too. ``GitError`` when
    the worktree has uncommitted changes (nothing is started then) or git fails otherwise.
    """
    worktree = Path(worktree)
    if base.startswith("-"):
        raise GitError(f"invalid branch name: {base!r}")
    if merge_in_progress(worktree):
        head = run_git(["rev-parse", "MERGE_HEAD"], worktree).stdout.decode("ascii").split()[0]
        left = _as_left(worktree, unmerged_paths(worktree))
        return BaseMerge(head, left.conflicted, left.as_left)
    base_sha = resolve_commit(worktree, f"refs/heads/{base}")
    if is_ancestor(worktree, base_sha, "HEAD"):
        return BaseMerge(base_sha, ())
    dirty = run_git(["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"], worktree).stdout
    if dirty.strip():
        raise GitError(f"cannot merge {base} into {worktree}: it has uncommitted changes")
    proc = run_git([*identity_args(worktree), *git_config, "merge", "--no-ff", "--no-commit", "--no-edit",
                    "-m", f"Merge {base}", base_sha], worktree, check=False)
    conflicted = unmerged_paths(worktree)
    if proc.returncode != 0 and not conflicted:
        stderr = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git merge {base} in {worktree} failed: {stderr}", returncode=proc.returncode, stderr=stderr)
    left = _as_left(worktree, conflicted)
    return BaseMerge(base_sha, conflicted, left.as_left)


def _with_markers(worktree: Path, paths: Sequence[str]) -> tuple[str, ...]:
    found = []
    root = worktree.resolve()
    for rel in paths:
        path = (worktree / rel).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            continue
        with path.open("rb") as fh:
            if _MARKER.search(fh.read(_MARKER_SCAN_BYTES)):
                found.append(rel)
    return tuple(found)


def left_unresolved(worktree: Path, merge: BaseMerge, base: str) -> Unresolved | None:
    """What the resolve of ``merge`` left in ``worktree``, or None when the base is merged cleanly.

    Unresolved: the merge undone (no merge in progress, and the base is not in the branch's history);
    conflict markers left in a file that conflicted or that git still holds in conflict; or such a file
    left exactly as the merge left it (a binary conflict has no markers). A file git still holds in
    conflict but whose markers are gone counts as resolved: tunaflow stages it when it commits.
    """
    worktree = Path(worktree)
    if not merge_in_progress(worktree) and not is_ancestor(worktree, merge.base_sha, "HEAD"):
        return Unresolved(merge.conflicted, f"the merge of {base} was undone")
    suspects = tuple(sorted(set(merge.conflicted) | set(unmerged_paths(worktree))))
    marked = _with_markers(worktree, suspects)
    if marked:
        return Unresolved(marked, "conflict markers are left in the files")
    untouched = tuple(rel for rel in suspects if rel in merge.as_left and merge_in_progress(worktree)
                      and _content_id(worktree, rel) == merge.as_left[rel])
    if untouched:
        return Unresolved(untouched, "the files are as the merge left them")
    return None


def abort_base_merge(worktree: Path) -> bool:
    """Abort a merge in progress in ``worktree`` (the branch back as it was); True if there was one."""
    if not merge_in_progress(worktree):
        return False
    run_git(["merge", "--abort"], Path(worktree))
    return True
