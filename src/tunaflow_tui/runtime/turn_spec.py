"""The value describing one role turn (what :class:`~tunaflow_tui.runtime.turn_service.TurnService` runs)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tunaflow_tui.core.storage.records import PlanRecord
from tunaflow_tui.runtime.agent_turn import MarkerProgress


@dataclass(frozen=True, slots=True)
class TurnSpec:
    """One role turn: who answers, where, what is asked, and how much of the past it gets.

    ``engine_name`` picks another configured engine than the role's (a branch runs on its own).
    ``fork_session``: the conversation has no session yet and continues this one of its parent as a
    fork (the engine's own resume + fork; nothing of the history is sent again); an engine that no
    longer knows it gets the ContextPack instead. ``blind`` turns (reviewers) get no conversation
    history, so they never see another seat's answer. ``on_markers`` follows the markers while the
    reply streams (see :meth:`TurnRunner.run`). ``env`` is set for the agent's process over tunaflow's
    own environment (a plan's Developer: its variables, see :mod:`.plan_env`).
    """

    role: str
    conversation_id: str
    request_text: str
    cwd: Path | None = None
    plan: PlanRecord | None = None
    findings: tuple[str, ...] = ()
    exclude_message_id: int | None = None
    fresh_session: bool = False
    blind: bool = False
    on_markers: MarkerProgress | None = None
    engine_name: str | None = None
    fork_session: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
