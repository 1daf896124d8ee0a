"""The narrow interfaces the runtime's steps and services are typed against.

A step takes the smallest of these that holds what it uses, never the whole
:class:`~tunaflow_tui.runtime.runtime.WorkflowRuntime` (which implements all of them and wires the
services together). Keeping them here, below every step and service, is what keeps the runtime free
of import circles; the few that name a type of a higher module live beside their one user
(:class:`.since.PackContext`, :class:`.turn_service.TurnHost`, :class:`.plan_cycle.CycleHost`,
:class:`.roundtable_ranking.RankedTable`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tunaflow_tui.agents.base import Engine
    from tunaflow_tui.core.markers import PlanProposal
    from tunaflow_tui.core.settings import EngineConfig, Settings
    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.core.storage.records import MessageRecord, PlanRecord
    from tunaflow_tui.core.workflow.phases import Actor
    from tunaflow_tui.core.workflow.service import WorkflowService
    from tunaflow_tui.runtime.agent_turn import TurnResult, TurnRunner
    from tunaflow_tui.runtime.events import RuntimeEvent
    from tunaflow_tui.runtime.leftovers import Leftover
    from tunaflow_tui.runtime.memory import ProjectMemory
    from tunaflow_tui.runtime.plan_slots import PlanSlots
    from tunaflow_tui.runtime.shared_guard import SharedGitGuard
    from tunaflow_tui.runtime.turn_spec import TurnSpec


class Emitter(Protocol):
    """Where runtime events go."""

    def emit(self, event: RuntimeEvent) -> None:
        """Send ``event`` to every observer."""

    def progress(self, text: str, plan_id: int | None = None) -> None:
        """Report what the runtime does now (for ``plan_id``, when it is about one plan)."""


class ProjectData(Protocol):
    """The project's directory, settings and database."""

    @property
    def project_dir(self) -> Path:
        """The project's root directory (resolved)."""

    @property
    def settings(self) -> Settings:
        """The settings turns run with now."""

    @property
    def store(self) -> Store:
        """The project's database."""


class MemoryData(ProjectData, Protocol):
    """The project's data and its memory (retrieval, vectors)."""

    @property
    def memory(self) -> ProjectMemory:
        """The project memory (hybrid search, embeddings)."""


class PackSourceData(MemoryData, Protocol):
    """What the ContextPack is built from: the project's data, its memory, and whether it is a git repository."""

    @property
    def is_git(self) -> bool:
        """Whether the project is a git repository."""


class Engines(Protocol):
    """The configured engines, one instance per engine name."""

    def engine_for(self, role: str) -> tuple[Engine, EngineConfig]:
        """The engine configured for ``role``."""

    def engine_named(self, name: str) -> tuple[Engine, EngineConfig]:
        """The engine configured under ``name``; KeyError if none."""


class Turns(Engines, Protocol):
    """Runs one agent turn of a role in a conversation."""

    async def run(self, spec: TurnSpec) -> TurnResult:
        """Send the turn ``spec`` describes and wait for its reply."""


class TurnContext(ProjectData, Emitter, Protocol):
    """What a step needs to run turns with a few things around them (summaries, branches, links)."""

    @property
    def is_git(self) -> bool:
        """Whether the project is a git repository."""

    @property
    def turns(self) -> Turns:
        """The role turns."""


class StepContext(TurnContext, Protocol):
    """What a step of the plan cycle uses: data, events, the workflow service, turns."""

    @property
    def service(self) -> WorkflowService:
        """Every plan state change goes through this."""

    def apply(self, plan_id: int, command: object, actor: Actor = ...) -> PlanRecord:
        """Apply a workflow command and tell observers."""

    def get_plan(self, plan_id: int) -> PlanRecord:
        """The plan, or a clear error when it does not exist."""

    def plan_changed(self, plan: PlanRecord) -> None:
        """Tell observers a plan moved."""

    def proposal_to_plan_fields(self, proposal: PlanProposal) -> dict[str, object]:
        """The plan fields a proposal sets."""

    @property
    def slots(self) -> PlanSlots:
        """How many plans work at once, and the queue of plans waiting for a slot."""


class RunningAgents(Protocol):
    """The agents this process runs now."""

    @property
    def runner(self) -> TurnRunner:
        """Runs agent turns and knows which conversations have one running."""


class LeftoverStopper(Protocol):
    """Ends what an earlier tunaflow left running."""

    async def stop_leftover_agents(self, plan_id: int | None = None, *, agents: bool = True) -> tuple[Leftover, ...]:
        """End the leftovers (for ``plan_id``, or all) whose tunaflow is gone; return the ones ended."""


class BranchAnswering(Protocol):
    """Lets a branch's engine answer a user message stored in the branch."""

    async def answer_in_branch(self, user_message: MessageRecord) -> TurnResult:
        """The branch's engine answers ``user_message``."""


class SharedGuarded(Protocol):
    """Turns outside a plan's own guard put git's shared hooks and configuration back with this."""

    @property
    def shared_guard(self) -> SharedGitGuard:
        """The guard of the repository's shared git state."""


class LeftoverContext(ProjectData, LeftoverStopper, Protocol):
    """The project's data and the ending of leftovers."""


class RecordingContext(ProjectData, Emitter, Protocol):
    """The project's data and where to say what was written."""


class QuietTurnContext(ProjectData, SharedGuarded, Protocol):
    """What a quiet turn (a summary nobody watches stream) needs."""

    @property
    def turns(self) -> Turns:
        """The role turns (their engines)."""


class RecoveryContext(StepContext, RunningAgents, LeftoverStopper, BranchAnswering, Protocol):
    """What finding interrupted steps and retrying a failed reply use."""

    def busy_plan_ids(self) -> frozenset[int]:
        """Plans being worked on now."""

    async def resume_interrupted(self, plan_id: int, *, how: str = "resume") -> PlanRecord:
        """Re-run the plan's interrupted step."""
