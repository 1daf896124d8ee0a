"""The question asked when a project is not a git repository: initialise one, or go on without."""

from __future__ import annotations

from tunaflow_tui.screens.decision import DecisionScreen

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
