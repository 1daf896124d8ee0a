"""Typed wrappers over the ``git`` CLI: repositories, worktrees, diffs, merges and the reviewer guard."""

from tunaflow_tui.core.gitops.diffs import (
    DEFAULT_DIFF_MAX_BYTES,
    DiffStat,
    diff_against_base,
    diff_stat,
    merge_base,
)
from tunaflow_tui.core.gitops.guard import (
    Fingerprint,
    Snapshot,
    changed_paths,
    fingerprint,
    restore,
    snapshot,
)
from tunaflow_tui.core.gitops.merge import MergeKind, MergeRefusedError, MergeResult, merge_branch
from tunaflow_tui.core.gitops.repo import (
    add_local_exclude,
    branch_exists,
    commit_all,
    current_branch,
    has_commits,
    head_sha,
    init_repo,
    is_clean,
    is_git_repo,
    local_branches,
    repo_root,
    resolve_commit,
    validate_branch_name,
)
from tunaflow_tui.core.gitops.runner import GitError
from tunaflow_tui.core.gitops.worktrees import (
    Worktree,
    create_worktree,
    list_worktrees,
    prune_worktrees,
    remove_worktree,
)

__all__ = [
    "DEFAULT_DIFF_MAX_BYTES",
    "DiffStat",
    "Fingerprint",
    "GitError",
    "MergeKind",
    "MergeRefusedError",
    "MergeResult",
    "Snapshot",
    "Worktree",
    "add_local_exclude",
    "branch_exists",
    "changed_paths",
    "commit_all",
    "create_worktree",
    "current_branch",
    "diff_against_base",
    "diff_stat",
    "fingerprint",
    "has_commits",
    "head_sha",
    "init_repo",
    "is_clean",
    "is_git_repo",
    "list_worktrees",
    "local_branches",
    "merge_base",
    "merge_branch",
    "prune_worktrees",
    "remove_worktree",
    "repo_root",
    "resolve_commit",
    "restore",
    "snapshot",
    "validate_branch_name",
]
