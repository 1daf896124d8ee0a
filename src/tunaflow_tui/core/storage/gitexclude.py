"""Keep the project's ``.tunaflow/`` directory out of git without touching tracked files."""

from __future__ import annotations

from pathlib import Path

from tunaflow_tui.core.gitops.runner import GitError, run_git

EXCLUDE_PATTERN = ".tunaflow/"
_EQUIVALENT = {".tunaflow", ".tunaflow/", "/.tunaflow", "/.tunaflow/"}


def _git_common_dir(project_dir: Path) -> Path | None:
    try:
        out = run_git(["rev-parse", "--git-common-dir"], project_dir, check=False, timeout_s=10)
    except GitError:
        return None
    text = out.stdout.decode("utf-8", "surrogateescape").strip()
    if out.returncode != 0 or not text:
        return None
    common = Path(text)
    return common if common.is_absolute() else (project_dir / common).resolve()


def exclude_from_git(project_dir: Path) -> bool:
    """Add ``.tunaflow/`` to the repository's ``info/exclude`` once; False if not a git repo.

    Uses the common git directory, so it works from a linked worktree (where ``.git`` is a file).
    """
    common = _git_common_dir(project_dir)
    if common is None:
        return False
    exclude = common / "info" / "exclude"
    try:
        existing = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if any(line.strip() in _EQUIVALENT for line in existing.splitlines()):
            return True
        exclude.parent.mkdir(parents=True, exist_ok=True)
        separator = "" if not existing or existing.endswith("\n") else "\n"
        with exclude.open("a", encoding="utf-8") as handle:
            handle.write(f"{separator}{EXCLUDE_PATTERN}\n")
    except OSError:
        return False
    return True
