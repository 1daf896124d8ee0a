"""Git worktrees: an isolated checkout per implementation branch, outside the project directory."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from tunaflow_tui.core.gitops.repo import branch_exists, repo_root, resolve_commit, validate_branch_name
from tunaflow_tui.core.gitops.runner import GitError, run_git


@dataclass(frozen=True)
class Worktree:
    """One entry of ``git worktree list``."""

    path: Path
    head: str | None
    branch: str | None  # short name (``tunaflow/x``), None when detached or bare
    bare: bool = False
    locked: bool = False
    prunable: bool = False


def list_worktrees(repo: Path) -> list[Worktree]:
    """Every worktree of the repository, the main one first."""
    out = run_git(["worktree", "list", "--porcelain"], Path(repo)).stdout.decode("utf-8", "surrogateescape")
    result: list[Worktree] = []
    for block in out.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, _, value = line.partition(" ")
            fields[key] = value
        if "worktree" not in fields:
            continue
        branch = fields.get("branch")
        if branch and branch.startswith("refs/heads/"):
            branch = branch[len("refs/heads/"):]
        result.append(
            Worktree(
                path=Path(fields["worktree"]),
                head=fields.get("HEAD") or None,
                branch=branch or None,
                bare="bare" in fields,
                locked="locked" in fields,
                prunable="prunable" in fields,
            )
        )
    return result


def _same_path(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


RESCUE_DIR = ".rescued"
"""Beside the worktrees, where a folder that was in the way of a new one is kept."""


def _live_worktree_of_another_repository(folder: Path, repo: Path) -> Path | None:
    """The git directory of another, still existing repository whose worktree ``folder`` is, if it is one."""
    dot_git = folder / ".git"
    if dot_git.is_symlink() or not dot_git.is_file():
        return None
    try:
        first = dot_git.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    gitdir = Path(first.removeprefix("gitdir:").strip())
    gitdir = (gitdir if gitdir.is_absolute() else folder / gitdir).resolve()
    if not gitdir.is_dir():
        return None  # its repository is gone: the folder is what a deleted project left behind
    common = Path(run_git(["rev-parse", "--git-common-dir"], repo).stdout.decode("utf-8", "surrogateescape").strip())
    common = (common if common.is_absolute() else repo / common).resolve()
    return None if common in gitdir.parents else gitdir


def set_aside_stale_folder(repo: Path, path: Path) -> Path | None:
    """Move what occupies ``path`` but is none of ``repo``'s worktrees to :data:`RESCUE_DIR`, untouched.

    A project deleted and created again at the same place gets the same worktree folder names, and
    the old project's worktrees are still there: a new plan with an old plan's title could never
    start. The folder is kept (``<path's folder>/.rescued/<name>-<time>``), never deleted; the
    return value says where it went (None: nothing was in the way, or it is a worktree of ``repo``,
    which :func:`create_worktree` deals with). A live worktree of another repository is left alone:
    ``GitError``.
    """
    path = Path(path).expanduser()
    target = path.parent.resolve() / path.name  # a symlink in the way is moved, not what it points to
    if not target.is_symlink():
        if not target.exists() or (target.is_dir() and not any(target.iterdir())):
            return None
        if any(_same_path(existing.path, target) for existing in list_worktrees(repo)):
            return None
        other = _live_worktree_of_another_repository(target, Path(repo))
        if other is not None:
            raise GitError(f"worktree path {target} is a worktree of another repository ({other}); move it away")
    rescue = target.parent / RESCUE_DIR
    rescue.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    destination = rescue / f"{target.name}-{stamp}"
    number = 1
    while destination.exists() or destination.is_symlink():
        number += 1
        destination = rescue / f"{target.name}-{stamp}-{number}"
    target.rename(destination)
    return destination


def create_worktree(repo: Path, branch: str, base: str, path: Path) -> Path:
    """Check out ``branch`` (created from ``base`` if it does not exist) in a new worktree at ``path``.

    ``path`` must lie outside the repository's working tree; its parents are created. If the branch
    already has a worktree at ``path`` it is reused. Returns the worktree's resolved path.
    """
    repo = Path(repo)
    root = repo_root(repo)
    validate_branch_name(repo, branch)
    target = Path(path).expanduser().resolve()
    if target == root or root in target.parents:
        raise GitError(f"worktree path {target} is inside the project directory {root}")
    for existing in list_worktrees(repo):
        if existing.branch == branch:
            if _same_path(existing.path, target) and target.is_dir():
                return target
            raise GitError(f"branch {branch!r} is already checked out at {existing.path}")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise GitError(f"worktree path {target} already exists and is not empty")
    target.parent.mkdir(parents=True, exist_ok=True)
    if branch_exists(repo, branch):
        run_git(["worktree", "add", "-q", str(target), branch], repo)
    else:
        base_sha = resolve_commit(repo, base)
        run_git(["worktree", "add", "-q", "-b", branch, str(target), base_sha], repo)
    return target


def remove_worktree(repo: Path, path: Path, *, force: bool = False) -> None:
    """Remove the worktree at ``path`` (the branch stays). Refuses local changes unless ``force``."""
    args = ["worktree", "remove"]
    if force:
        args.append("--force")
    args.append(str(Path(path).resolve()))
    run_git(args, Path(repo))


def prune_worktrees(repo: Path) -> None:
    """Forget worktrees whose directories were deleted by hand."""
    run_git(["worktree", "prune"], Path(repo))
