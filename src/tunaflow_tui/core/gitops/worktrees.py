"""Git worktrees: an isolated checkout per implementation branch, outside the project directory."""

from __future__ import annotations

from dataclasses import dataclass
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
