"""A project that is not a git repository: offer to initialise one, or go on without isolation."""

from __future__ import annotations

from pathlib import Path

NOT_GIT_NOTE = ("Not a git repository: the Developer works in place — no isolation and no merge step "
                "(run `git init` and commit to get both).")
"""What the status line says about a project without git."""

INITIAL_MESSAGE = "Initial commit"

INIT_GIT_COMMAND = "Initialise git repository"
"""The palette command that sets git up after the offer was declined."""

DECLINED_MARKER = Path(".tunaflow") / "git-declined"
"""Present once the user chose to go on without git: the offer is not made again on open."""


def git_declined(project_dir: Path) -> bool:
    """True if the user declined to initialise git for this project."""
    return (project_dir / DECLINED_MARKER).is_file()


def remember_git_declined(project_dir: Path) -> None:
    """Remember that the user declined (best effort: an unwritable folder only means being asked again)."""
    marker = project_dir / DECLINED_MARKER
    try:
        marker.parent.mkdir(exist_ok=True)
        marker.write_text("The user chose to work without git; ctrl+p “Initialise git repository” sets it up.\n",
                          encoding="utf-8")
    except OSError:
        pass


def initialise_repository(project_dir: Path, *, branch: str = "main") -> str:
    """``git init`` in ``project_dir`` and commit its current files (tunaflow's own folder excluded).

    Returns the initial commit's SHA. An empty project gets an empty initial commit, since plan
    branches and worktrees need a commit to start from.
    """
    # imported here: the command line reads NOT_GIT_NOTE before the first frame
    from tunaflow_tui.core import gitops
    from tunaflow_tui.runtime.git_guard import create_initial_commit

    (project_dir / DECLINED_MARKER).unlink(missing_ok=True)
    root = gitops.init_repo(project_dir, initial_branch=branch)
    return create_initial_commit(root, INITIAL_MESSAGE)


NO_COMMIT_NOTE = ("This git repository has no commits yet: a plan cannot start until it has one "
                  "(commit your files, or reopen the project and let tunaflow create the initial commit).")
"""What the app says when the user did not want the initial commit made now."""
