"""The questions asked when a project has no git history to branch from: initialise, or commit first."""

from __future__ import annotations

from tunaflow_tui.screens.decision_screen import DecisionScreen

GIT_INIT_CHOICES: tuple[tuple[str, str, str], ...] = (
    ("i", "Initialise git", "init"),
    ("c", "Continue without", "without"),
)


def git_init_screen(project_name: str) -> DecisionScreen:
    """Offer ``git init`` plus a first commit of the current files; esc is the same as continue without."""
    return DecisionScreen(
        "Not a git repository",
        f"{project_name} is not a git repository.\n"
        "Initialise one? tunaflow runs git init and commits the current files, so each plan is "
        "developed in its own branch and worktree and merged only when you accept it.\n"
        "Without git the Developer works in place: no isolation and no merge step.",
        GIT_INIT_CHOICES,
    )


INITIAL_COMMIT_CHOICES: tuple[tuple[str, str, str], ...] = (
    ("c", "Create initial commit", "commit"),
    ("n", "Not now", "later"),
)


def initial_commit_screen(project_name: str) -> DecisionScreen:
    """Offer to commit the current files of a git repository that has no commit yet."""
    return DecisionScreen(
        "No commits yet",
        f"{project_name} is a git repository with no commits yet, so a plan has nothing to branch from.\n"
        "Create an initial commit? tunaflow commits the current files (its own folder excluded).\n"
        "Not now: approving a plan is refused until the repository has a commit.",
        INITIAL_COMMIT_CHOICES,
    )
