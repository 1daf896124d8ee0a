"""Merging a finished implementation branch into its base: fast-forward or merge commit, never force."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tunaflow_tui.core.counting import counted
from tunaflow_tui.core.gitops.repo import branch_exists, current_branch, head_sha, is_ancestor, is_clean
from tunaflow_tui.core.gitops.runner import GitError, identity_args, run_git

MergeKind = Literal["fast-forward", "merge-commit", "conflict", "up-to-date"]


class MergeRefusedError(GitError):
    """The merge was not attempted (dirty working tree, unknown branch); nothing was touched."""


@dataclass(frozen=True)
class MergeResult:
    """What a merge did: its kind, the resulting HEAD, and any conflicted files (merge aborted)."""

    kind: MergeKind
    sha: str | None
    conflicted_files: tuple[str, ...]
    message: str


def merge_branch(repo: Path, branch: str, into: str, *, git_config: Sequence[str] = ()) -> MergeResult:
    """Merge local branch ``branch`` into local branch ``into`` in the repository at ``repo``.

    ``into`` is checked out first, but only when no tracked file has uncommitted changes; otherwise
    ``MergeRefusedError`` is raised and nothing is touched. A fast-forward is preferred; else a
    ``--no-ff`` merge commit "Merge {branch}". On conflict the merge is aborted and the files listed.
    ``git_config`` (``-c key=value`` pairs) goes before each checkout and merge, e.g. trusted hooks.
    """
    cfg = list(git_config)
    repo = Path(repo)
    for name in (branch, into):
        if name.startswith("-") or not branch_exists(repo, name):
            raise MergeRefusedError(f"cannot merge: no local branch named {name!r}")
    if not is_clean(repo, include_untracked=False):
        raise MergeRefusedError(
            f"cannot merge {branch} into {into}: the working tree of {repo} has uncommitted changes; "
            "commit or stash them first"
        )
    if current_branch(repo) != into:
        run_git([*cfg, "checkout", "-q", into, "--"], repo)
    branch_ref, into_ref = f"refs/heads/{branch}", f"refs/heads/{into}"
    if is_ancestor(repo, branch_ref, into_ref):
        return MergeResult("up-to-date", head_sha(repo), (), f"{into} already contains {branch}")
    if is_ancestor(repo, into_ref, branch_ref):
        run_git([*cfg, "merge", "-q", "--ff-only", branch_ref], repo)
        return MergeResult("fast-forward", head_sha(repo), (), f"fast-forwarded {into} to {branch}")
    message = f"Merge {branch}"
    proc = run_git(
        [*identity_args(repo), *cfg, "merge", "-q", "--no-ff", "--no-edit", "-m", message, branch_ref],
        repo,
        check=False,
    )
    if proc.returncode == 0:
        return MergeResult("merge-commit", head_sha(repo), (), f"merged {branch} into {into} with a merge commit")
    conflicted = run_git(["diff", "--name-only", "--diff-filter=U", "-z"], repo, check=False).stdout
    files = tuple(p for p in conflicted.decode("utf-8", "surrogateescape").split("\0") if p)
    abort = run_git([*cfg, "merge", "--abort"], repo, check=False)
    if not files:
        stderr = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git merge {branch} into {into} failed: {stderr}", returncode=proc.returncode, stderr=stderr)
    note = "" if abort.returncode == 0 else " (git merge --abort failed; resolve by hand)"
    return MergeResult(
        "conflict",
        head_sha(repo),
        files,
        f"merging {branch} into {into} conflicts in {counted(len(files), 'file')}; the merge was aborted{note}",
    )
