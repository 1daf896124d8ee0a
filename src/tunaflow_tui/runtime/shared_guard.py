"""The repository's shared hooks and configuration around every agent turn the plan guard does not cover.

The Developer's and the reviewers' turns run under :mod:`tunaflow_tui.runtime.git_guard` (refs, HEADs,
stash, remotes, shared files). Every other turn — the Architect in main, a branch's agent, a roundtable
seat, the summarizer — runs in the user's own working tree with a read-only or chat profile, so it has
no business writing git's hooks or configuration. An agent that does anyway (a planted
``.git/hooks/post-commit``, a ``core.hooksPath`` or an alias in ``.git/config``) would have its code run
by the user's next ``git commit`` and trusted by the baseline of the next plan. So those files are read
before such a turn and put back after it, and the user is told.

Refs and HEAD are not repaired here: the user may commit or switch branches in their own tree while an
agent answers, and tunaflow cannot tell the two apart there. A switch of the tree's branch during the
turn is reported, though, so it never goes unnoticed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tunaflow_tui.core.gitops.refguard import Head, read_head
from tunaflow_tui.core.gitops.shared import SharedState, read_shared, restore_shared
from tunaflow_tui.runtime.events import NoticeRaised, RuntimeEvent

PLAN_GUARDED_ROLES = frozenset({"developer", "reviewer", "verifier"})
"""Roles whose turns for a plan run under the plan's own git guard (which covers these files too)."""


@dataclass(frozen=True)
class GitBefore:
    """What the guard read before a turn: the shared files, the user's tree's HEAD, and the plans at work."""

    shared: SharedState
    head: Head
    plans_at_work: frozenset[int] = frozenset()


def _others_note(plans: frozenset[int]) -> str:
    """Plans whose agents worked beside the turn: the change may have been theirs."""
    if not plans:
        return ""
    names = ", ".join(str(n) for n in sorted(plans))
    return f" (Plan {names} was at work at the same time: it may have been its agents.)" if len(plans) == 1 \
        else f" (Plans {names} were at work at the same time: it may have been their agents.)"


class SharedGitGuard:
    """Reads the shared git files before a turn and restores them after it (see the module docstring)."""

    def __init__(self, project_dir: Path, is_git: Callable[[], bool], emit: Callable[[RuntimeEvent], None],
                 plans_at_work: Callable[[], frozenset[int]] = frozenset) -> None:
        self._project_dir = project_dir
        self._is_git = is_git
        self._emit = emit
        self._plans_at_work = plans_at_work

    def covers(self, role: str, plan_id: int | None) -> bool:
        """Whether a turn of ``role`` (for ``plan_id``) is this guard's to watch."""
        return not (plan_id is not None and role in PLAN_GUARDED_ROLES)

    async def before(self) -> GitBefore | None:
        """The shared files and HEAD as they are now (None outside git, or when git cannot read them)."""
        if not self._is_git():
            return None

        def read() -> GitBefore | None:
            try:
                return GitBefore(read_shared(self._project_dir), read_head(self._project_dir))
            except Exception:  # a repository git cannot read: nothing to compare against later
                return None

        before = await asyncio.to_thread(read)
        return None if before is None else GitBefore(before.shared, before.head, self._plans_at_work())

    async def after(self, before: GitBefore | None, who: str, conversation_id: str | None) -> tuple[str, ...]:
        """Put back the shared files changed since ``before`` and say so, and report a switched branch.

        Returns the files put back, as the user names them (``.git/hooks/post-commit``).
        """
        if before is None:
            return ()
        state = before.shared
        restored, failed = await asyncio.to_thread(restore_shared, state)
        head = await asyncio.to_thread(read_head, self._project_dir)
        if head.ref != before.head.ref:
            self._emit(NoticeRaised(
                f"Your working tree switched from {before.head.describe()} to {head.describe()} while {who[:1].lower()}{who[1:]} "
                "answered; tunaflow left it as it is.", "warning", conversation_id))
        shown = tuple(state.display(path) for path in restored)
        note = _others_note(before.plans_at_work | self._plans_at_work()) if shown or failed else ""
        if shown:
            self._emit(NoticeRaised(
                f"{who} changed shared git files ({', '.join(shown[:5])}) during its turn; "
                f"tunaflow put them back, so your next commit runs none of it.{note}", "warning", conversation_id))
        if failed:
            self._emit(NoticeRaised(
                f"{who} changed {', '.join(state.display(path) for path in failed[:5])} during its turn and "
                f"tunaflow could not put it back: look at it before you commit.{note}", "error", conversation_id))
        return shown
