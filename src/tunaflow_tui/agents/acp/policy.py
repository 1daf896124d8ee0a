"""The role policy that answers an ACP permission request before any person is asked.

A pure function of the request, the role and the turn's folder: reviewers and verifiers may never
change anything or run a command (tunaflow refuses, whatever the agent's own mode says); the
Developer may write inside its worktree and run the commands its engine allows; everyone else asks.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path

from tunaflow_tui.agents.permissions import PermissionAnswer, PermissionRequest

#: roles that only read: every change and every command is refused for them
READ_ONLY_ROLES = frozenset({"reviewer", "verifier"})
#: tool kinds that change files
WRITE_KINDS = frozenset({"edit", "delete", "move"})
#: tool kinds that only look
LOOK_KINDS = frozenset({"read", "search", "think"})


class Verdict(StrEnum):
    """The policy's answer: decided either way, or left to the user."""

    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


def inside(path: str, root: Path) -> bool:
    """Whether the absolute ``path`` (symlinks resolved) lies inside ``root``."""
    candidate = Path(path)
    if not candidate.is_absolute():
        return False
    try:
        candidate.resolve().relative_to(root.resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def command_allowed(command: str, allowed: Sequence[str]) -> bool:
    """Whether ``command`` starts with the words of one allowed entry, and chains nothing else after it."""
    if not command.strip() or any(sep in command for sep in (";", "&", "|", "`", "$(", ">", "<", "\n")):
        return False  # a chained or redirected command is more than the allowed one: ask
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for entry in allowed:
        try:
            prefix = shlex.split(entry)
        except ValueError:
            continue
        if prefix and words[: len(prefix)] == prefix:
            return True
    return False


def role_verdict(request: PermissionRequest, root: Path, allowed_commands: Sequence[str] = ()) -> Verdict:
    """Decide ``request`` for its role in the turn folder ``root``, or leave it to the user (ASK)."""
    kind = request.kind or "other"
    paths_inside = all(inside(p, root) for p in request.paths)
    if request.role in READ_ONLY_ROLES:
        # reading is what they are for; anything else could change the tree they judge
        return Verdict.ALLOW if kind in LOOK_KINDS and paths_inside else Verdict.DENY
    if kind in LOOK_KINDS:
        return Verdict.ALLOW if paths_inside else Verdict.ASK
    if request.role == "developer":
        if kind in WRITE_KINDS:
            if not request.paths:
                return Verdict.ASK
            return Verdict.ALLOW if paths_inside else Verdict.DENY
        if kind == "execute" and command_allowed(request.command, allowed_commands):
            return Verdict.ALLOW
    return Verdict.ASK


def verdict_answer(verdict: Verdict) -> PermissionAnswer | None:
    """The answer a decided verdict gives (None for ASK)."""
    if verdict is Verdict.ALLOW:
        return PermissionAnswer.ALLOW_ONCE
    if verdict is Verdict.DENY:
        return PermissionAnswer.DENY
    return None


#: option kinds that carry each answer, in order of preference
ANSWER_KINDS: dict[PermissionAnswer, tuple[str, ...]] = {
    PermissionAnswer.ALLOW_ONCE: ("allow_once",),
    PermissionAnswer.ALLOW_ALWAYS: ("allow_always", "allow_once"),
    PermissionAnswer.DENY: ("reject_once", "reject_always"),
}


def option_for(answer: PermissionAnswer, options: Sequence[tuple[str, str]]) -> str | None:
    """The option id (of ``(option_id, kind)`` pairs) that carries ``answer``, matched by kind, not id.

    ``None`` when the agent offered no such option: the request is then answered as cancelled.
    """
    for wanted in ANSWER_KINDS[answer]:
        for option_id, kind in options:
            if kind == wanted:
                return option_id
    return None
