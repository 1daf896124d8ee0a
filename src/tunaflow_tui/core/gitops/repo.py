"""Repository-level queries and commits: is this a repo, which branch, is it clean, commit everything."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tunaflow_tui.core.gitops.runner import GitError, git_text, identity_args, run_git
from tunaflow_tui.core.gitops.worktree_include import unstage_private_paths


def is_git_repo(path: Path) -> bool:
    """True when ``path`` is inside a git working tree."""
    if not Path(path).is_dir():
        return False
    try:
        proc = run_git(["rev-parse", "--is-inside-work-tree"], Path(path), check=False)
    except GitError:
        return False
    return proc.returncode == 0 and proc.stdout.strip() == b"true"


def init_repo(path: Path, *, initial_branch: str = "main") -> Path:
    """Create a git repository at ``path`` (created if missing) and return its root.

    The repository has no commits yet; worktrees need a commit to branch from.
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    validate_branch_name(path, initial_branch)
    run_git(["init", "-q", f"--initial-branch={initial_branch}"], path)
    return repo_root(path)


def repo_root(path: Path) -> Path:
    """The top-level directory of the working tree containing ``path``."""
    return Path(git_text(["rev-parse", "--show-toplevel"], Path(path))).resolve()


def current_branch(repo: Path) -> str | None:
    """The checked-out branch name, or None when HEAD is detached."""
    proc = run_git(["symbolic-ref", "--short", "-q", "HEAD"], Path(repo), check=False)
    if proc.returncode != 0:
        if proc.returncode == 1:
            return None
        raise GitError(f"cannot read HEAD in {repo}: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout.decode("utf-8", "replace").strip() or None


def has_commits(repo: Path) -> bool:
    """True when HEAD points at a commit (a fresh ``git init`` has none)."""
    proc = run_git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], Path(repo), check=False)
    return proc.returncode == 0


def head_sha(repo: Path) -> str:
    """The full SHA of HEAD; ``GitError`` when the repository has no commits yet."""
    return resolve_commit(repo, "HEAD")


def resolve_commit(repo: Path, rev: str) -> str:
    """The full SHA of the commit ``rev`` names; ``GitError`` when it names none."""
    if rev.startswith("-"):
        raise GitError(f"invalid revision: {rev!r}")
    proc = run_git(["rev-parse", "--verify", "-q", f"{rev}^{{commit}}"], Path(repo), check=False)
    if proc.returncode != 0:
        raise GitError(f"unknown revision {rev!r} in {repo}", returncode=proc.returncode)
    return proc.stdout.decode("ascii").strip()


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    """True when commit ``ancestor`` is reachable from ``descendant`` (a commit is its own ancestor)."""
    proc = run_git(["merge-base", "--is-ancestor", ancestor, descendant], Path(repo), check=False)
    if proc.returncode not in (0, 1):
        stderr = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"cannot compare {ancestor} and {descendant}: {stderr}", returncode=proc.returncode)
    return proc.returncode == 0


def initial_commit(repo: Path, message: str = "Initial commit") -> str:
    """Commit the current files of a repository that has no commits yet (empty if there are none).

    Plan branches and worktrees start from a commit; this gives an empty repository its first one.
    Refuses (``GitError``) when the repository already has commits.
    """
    repo = Path(repo)
    if has_commits(repo):
        raise GitError(f"{repo} already has commits")
    sha = commit_all(repo, message)
    if sha is None:
        run_git([*identity_args(repo), "commit", "-q", "--allow-empty", "-m", message], repo)
        sha = head_sha(repo)
    return sha


def branch_exists(repo: Path, name: str) -> bool:
    """True when a local branch ``name`` exists."""
    proc = run_git(["show-ref", "--verify", "--quiet", f"refs/heads/{name}"], Path(repo), check=False)
    return proc.returncode == 0


def local_branches(repo: Path, prefix: str = "") -> frozenset[str]:
    """The names of the local branches that start with ``prefix`` (one git call for all of them)."""
    ref = f"refs/heads/{prefix}" if prefix else "refs/heads/"
    out = git_text(["for-each-ref", "--format=%(refname:short)", ref], Path(repo))
    return frozenset(line for line in out.splitlines() if line.startswith(prefix))


def validate_branch_name(repo: Path, name: str) -> str:
    """Return ``name`` if git accepts it as a new branch name, else raise ``GitError``."""
    if not name or name.startswith("-") or "@{" in name or "\x00" in name:
        raise GitError(f"invalid branch name: {name!r}")
    proc = run_git(["check-ref-format", "--branch", name], Path(repo), check=False)
    if proc.returncode != 0 or proc.stdout.decode("utf-8", "replace").strip() != name:
        raise GitError(f"invalid branch name: {name!r}")
    return name


def status_porcelain(repo: Path, *, include_untracked: bool = True) -> str:
    """``git status --porcelain`` output (NUL-separated), read without taking the index lock."""
    args = ["--no-optional-locks", "status", "--porcelain=v1", "-z", "--ignore-submodules=none"]
    args.append("--untracked-files=all" if include_untracked else "--untracked-files=no")
    return run_git(args, Path(repo)).stdout.decode("utf-8", "surrogateescape")


def is_clean(repo: Path, *, include_untracked: bool = True) -> bool:
    """True when the working tree and index match HEAD (untracked files count unless told otherwise)."""
    return status_porcelain(repo, include_untracked=include_untracked) == ""


def commit_all(
    worktree: Path, message: str, *, no_verify: bool = False, git_config: Sequence[str] = ()
) -> str | None:
    """Stage every change (new, modified, deleted) and commit it.

    Returns the new commit's SHA, or None when there was nothing to commit. A missing user
    identity is filled in with a fallback (``tunaflow <tunaflow@localhost>``). Files private to the
    worktree (copied by ``.worktreeinclude``) stay out, even when something un-ignored them.
    ``git_config`` is put before ``commit`` (``-c key=value`` pairs, e.g. the hooks tunaflow trusts).
    """
    worktree = Path(worktree)
    run_git(["add", "-A"], worktree)
    unstage_private_paths(worktree)
    staged = run_git(["diff", "--cached", "--quiet"], worktree, check=False)
    if staged.returncode == 0:
        return None
    if staged.returncode != 1:
        raise GitError(f"cannot inspect staged changes in {worktree}", returncode=staged.returncode)
    args = [*identity_args(worktree), *git_config, "commit", "-q", "-F", "-"]
    if no_verify:
        args.append("--no-verify")
    run_git(args, worktree, input_bytes=(message or "tunaflow commit").encode("utf-8", "replace"))
    return head_sha(worktree)


def add_local_exclude(repo: Path, pattern: str) -> bool:
    """Add ``pattern`` to the repository's ``info/exclude`` (never committed); True if it was added."""
    if "\n" in pattern or "\r" in pattern or not pattern.strip():
        raise GitError(f"invalid exclude pattern: {pattern!r}")
    raw = git_text(["rev-parse", "--git-path", "info/exclude"], Path(repo))
    exclude = Path(raw) if Path(raw).is_absolute() else Path(repo) / raw
    existing = exclude.read_text(encoding="utf-8", errors="replace") if exclude.exists() else ""
    if pattern in existing.splitlines():
        return False
    exclude.parent.mkdir(parents=True, exist_ok=True)
    prefix = "" if not existing or existing.endswith("\n") else "\n"
    with exclude.open("a", encoding="utf-8") as fh:
        fh.write(f"{prefix}{pattern}\n")
    return True
