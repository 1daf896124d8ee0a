"""Role turns: which engine answers, which native session it resumes, what it is sent.

:class:`TurnService` owns the engine instances (one per engine name) and the per-conversation, per-role
turn locks; a turn is described by a :class:`TurnSpec`. The prompt itself is built by
:mod:`~tunaflow_tui.runtime.since` (a new session gets the full ContextPack, a resumed one what it has
not seen) and the reply is streamed and stored by :class:`~tunaflow_tui.runtime.agent_turn.TurnRunner`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from tunaflow_tui.agents.agent_events import ErrorKind
from tunaflow_tui.agents.base import Engine, PermissionProfile, TurnRequest
from tunaflow_tui.core.personas import load_persona
from tunaflow_tui.core.settings import EngineConfig
from tunaflow_tui.runtime import branching, since
from tunaflow_tui.runtime.agent_turn import TurnResult, TurnRunner
from tunaflow_tui.runtime.context import SentPack
from tunaflow_tui.runtime.events import NoticeRaised
from tunaflow_tui.runtime.permission_desk import PermissionDesk
from tunaflow_tui.runtime.ports import Emitter
from tunaflow_tui.runtime.since import PackContext
from tunaflow_tui.runtime.turn_spec import TurnSpec

EngineFactory = Callable[[EngineConfig], Engine]

# errors with which a CLI answers a session it no longer has (e.g. resumed from another directory)
_STALE_SESSION_ERRORS = frozenset({ErrorKind.BAD_REQUEST, ErrorKind.CRASHED, ErrorKind.MALFORMED_OUTPUT})

ROLE_PROFILES: dict[str, PermissionProfile] = {
    "architect": PermissionProfile.CHAT,
    "developer": PermissionProfile.EDIT,
    "reviewer": PermissionProfile.READ_ONLY,
    "verifier": PermissionProfile.READ_ONLY,
    "synthesizer": PermissionProfile.CHAT,
    "summarizer": PermissionProfile.CHAT,
}


PLAN_WORK_ROLES = frozenset({"developer", "reviewer", "verifier"})
"""Roles whose turns are one plan's work: their progress line names the plan (several may work at once)."""


class TurnHost(PackContext, Emitter, Protocol):
    """What the turn service reads around a turn: the prompt's sources, and where to say what happens."""


class TurnService:
    """Runs role turns: engine choice, session resume or fork, the prompt, the reply (one job: a turn)."""

    def __init__(self, host: TurnHost, runner: TurnRunner, engine_factory: EngineFactory,
                 permissions: PermissionDesk | None = None) -> None:
        self._host = host
        self._permissions = permissions
        self._runner = runner
        self._engine_factory = engine_factory
        self._engines: dict[str, Engine] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self.last_sent: SentPack | None = None
        """The prompt the latest turn was sent with (a resumed session's: what it had not seen)."""

    def forget_engines(self) -> None:
        """Make the engines anew from the settings at the next turn (the settings changed)."""
        self._engines.clear()

    def engine_for(self, role: str) -> tuple[Engine, EngineConfig]:
        """The engine configured for ``role`` (one instance per engine name, reused)."""
        settings = self._host.settings
        config = settings.engine_for_role(role)
        return self._engine(config.name or settings.roles.engine_name(role), config), config

    def engine_named(self, name: str) -> tuple[Engine, EngineConfig]:
        """The engine configured under ``name`` (one instance per name, reused); KeyError if none."""
        config = self._host.settings.engines[name]
        return self._engine(name, config), config

    def _engine(self, name: str, config: EngineConfig) -> Engine:
        engine = self._engines.get(name)
        if engine is None:
            engine = self._engine_factory(config)
            self._engines[name] = engine
        return engine

    async def run(self, spec: TurnSpec) -> TurnResult:
        """Send ``spec``'s request to its engine with a ContextPack; one turn per role and conversation at a time.

        A resumed native session that the engine no longer knows is dropped and the turn is sent
        again with a fresh one.
        """
        lock = self._locks.setdefault((spec.conversation_id, spec.role), asyncio.Lock())
        async with lock:
            engine, config = self.engine_named(spec.engine_name) if spec.engine_name else self.engine_for(spec.role)
            resume = await asyncio.to_thread(since.session_to_resume, self._host, spec.conversation_id, engine.name,
                                             fresh_session=spec.fresh_session, blind=spec.blind)
            fork = False
            if resume is None and spec.fork_session and not spec.fresh_session and not spec.blind:
                resume, fork = spec.fork_session, True
            result = await self._send(spec, engine, config, resume=resume, fork=fork)
            if resume and result.error is not None and result.error.kind in _STALE_SESSION_ERRORS \
                    and not result.text.strip():
                self._host.emit(NoticeRaised(f"{engine.name} could not resume its session; starting a new one "
                                             "with the conversation's context.", "warning", spec.conversation_id))
                self._host.store.set_native_session(spec.conversation_id, engine.name, None)
                if fork:
                    branching.fork_refused(self._host, spec.conversation_id)
                result = await self._send(spec, engine, config, resume=None, fork=False)
            return result

    async def _send(self, spec: TurnSpec, engine: Engine, config: EngineConfig, *, resume: str | None,
                    fork: bool) -> TurnResult:
        host = self._host
        persona = load_persona(spec.role, host.project_dir)
        # building the prompt reads git and the database: off the event loop, so the UI never stalls
        turn = await asyncio.to_thread(
            since.prepare_turn, host, spec.role, spec.conversation_id, spec.request_text, engine=engine.name,
            resume=resume, fork=fork, plan=spec.plan, findings=spec.findings,
            exclude_message_id=spec.exclude_message_id, system=persona, blind=spec.blind)
        prompt = turn.prompt
        self.last_sent = SentPack(spec.role, spec.conversation_id, turn.pack, resumed=turn.resumed, prompt=prompt)
        request = TurnRequest(
            prompt=prompt,
            cwd=spec.cwd or host.project_dir,
            system=persona,
            role=spec.role,
            profile=ROLE_PROFILES.get(spec.role, PermissionProfile.CHAT),
            resume_session_id=resume,
            fork=fork,
            allow_push=host.settings.workflow.allow_push,
            extra_env=dict(spec.env),
            permissions=self._permissions.broker(spec.conversation_id) if self._permissions is not None else None,
        )
        plan_id = spec.plan.id if spec.plan is not None else None
        for_plan = f"Plan {plan_id}: " if plan_id is not None and spec.role in PLAN_WORK_ROLES else ""
        host.progress(f"{for_plan}{spec.role} ({engine.name}) is working…", plan_id)
        result = await self._runner.run(
            engine=engine, model=config.model, conversation_id=spec.conversation_id, role=spec.role,
            request=request, on_markers=spec.on_markers, plan_id=plan_id,
        )
        if not spec.blind and (result.ok or result.text.strip()):  # the agent read it: its session has it now
            since.remember(host, engine=engine.name, conversation_id=spec.conversation_id,
                           session_id=result.message.native_session_id, resumed_from=resume, fork=fork, turn=turn)
        return result
