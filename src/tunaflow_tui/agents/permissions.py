"""Permission requests an agent makes during a turn, and the broker that lets the user answer them.

An engine whose agent asks before it acts (ACP's ``session/request_permission``) first lets the role
policy decide; what the policy leaves open goes to a :class:`PermissionBroker` given with the turn.
The broker is the only way a question reaches a person, so an engine without one fails closed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol


class PermissionAnswer(StrEnum):
    """What the user (or the policy) answered; no answer at all means the request is cancelled."""

    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"  # for the rest of this agent session
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    """One question an agent asks before it uses a tool, in plain data for a decision card."""

    engine: str
    role: str
    session_id: str
    tool_call_id: str
    title: str
    #: the tool's kind as the agent reports it (read, edit, delete, move, search, execute, fetch, other…)
    kind: str
    #: the files the tool would touch (absolute paths as the agent gave them)
    paths: tuple[str, ...] = ()
    #: the shell command, for an ``execute`` tool whose input names one
    command: str = ""
    #: a unified diff of the change, where the agent sent one
    diff: str = ""


class PermissionBroker(Protocol):
    """Asks a person; returns their answer, or ``None`` if the request was withdrawn or never answered.

    The engine may cancel the awaiting task (the turn was cancelled or ran out of time): the broker then
    removes its question and no late answer is used.
    """

    async def decide(self, request: PermissionRequest) -> PermissionAnswer | None:
        """Wait for the user's answer to ``request``."""
        ...
