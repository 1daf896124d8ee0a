"""A project that is not a git repository: offer to initialise one, or go on without isolation."""

from __future__ import annotations

from pathlib import Path

NOT_GIT_NOTE = ("Not a git repository: the Developer works in place — no isolation and no merge step "
                "(run `git init` and commit to get both).")
"""What the status line says about a project without git."""

INITIAL_MESSAGE = "Initial commit"


def initialise_repository(project_dir: Path, *, branch: str = "main") -> str:
    """``git init`` in ``project_dir`` and commit its current files (tunaflow's own folder excluded).

    Returns the initial commit's SHA. An empty project gets an empty initial commit, since plan
    branches and worktrees need a commit to start from.
    """
    # imported here: the command line reads NOT_GIT_NOTE before the first frame
    from tunaflow_tui.core import gitops
    from tunaflow_tui.core.gitops.runner import identity_args, run_git
    from tunaflow_tui.core.storage.gitexclude import EXCLUDE_PATTERN

    root = gitops.init_repo(project_dir, initial_branch=branch)
    gitops.add_local_exclude(root, EXCLUDE_PATTERN)
    sha = gitops.commit_all(root, INITIAL_MESSAGE)
    if sha is None:
        run_git([*identity_args(root), "commit", "-q", "--allow-empty", "-m", INITIAL_MESSAGE], root)
        sha = gitops.head_sha(root)
    return sha
