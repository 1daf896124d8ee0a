"""The workflow runtime: the Plan → Dev → Review → Rework → Done cycle, headless.

One object per open project. The terminal app and ``tunaflow run`` call the same few methods —
``send_user_message``, ``decide``, ``cancel``, ``resume_interrupted`` — and observe what happens
through runtime events. Every state change goes through the workflow service, so the database
always says where each plan is, even after a crash.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from tunaflow_tui.agents.base import Engine
from tunaflow_tui.agents.registry import create_engine
from tunaflow_tui.core import gitops
from tunaflow_tui.core.markers import PlanProposal
from tunaflow_tui.core.proposal_editing import EditedProposal
from tunaflow_tui.core.settings import EngineConfig, Settings
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.branches import Adoption
from tunaflow_tui.core.storage.records import BranchRecord, MessageRecord, PlanRecord
from tunaflow_tui.core.workflow.decision_words import Decision
from tunaflow_tui.core.workflow.event_text import USER_CANCELLED
from tunaflow_tui.core.workflow.phases import Actor
from tunaflow_tui.core.workflow.service import WaitingDecision, WorkflowService
from tunaflow_tui.core.workflow.ways import WayOn
from tunaflow_tui.runtime import adoption, branching, git_guard, leftovers, planning, record_writer, recovery
from tunaflow_tui.runtime.agent_turn import MarkerProgress, TurnResult, TurnRunner
from tunaflow_tui.runtime.branch_service import BranchService
from tunaflow_tui.runtime.context import SentPack
from tunaflow_tui.runtime.context_builder import ContextBuilder
from tunaflow_tui.runtime.events import (
    MessageAdded,
    MessageFinished,
    NoticeRaised,
    Observer,
    PlanChanged,
    Progress,
    RuntimeEvent,
)
from tunaflow_tui.runtime.memory import ProjectMemory
from tunaflow_tui.runtime.permission_desk import PermissionDesk
from tunaflow_tui.runtime.plan_cycle import PlanCycle
from tunaflow_tui.runtime.plan_slots import PlanSlots, QueuedPlan, queued_plans
from tunaflow_tui.runtime.plans_in_flight import plan_pointer
from tunaflow_tui.runtime.shared_guard import SharedGitGuard
from tunaflow_tui.runtime.turn_service import EngineFactory, TurnService
from tunaflow_tui.runtime.turn_spec import TurnSpec

if TYPE_CHECKING:
    from tunaflow_tui.core.memory.embedding_port import TextEmbedder

class RuntimeError_(Exception):
    """A step of the cycle could not run; the message says what and how to fix it."""


T = TypeVar("T")

class WorkflowRuntime:
    """Runs conversations and the plan cycle for one project."""

    def __init__(
        self,
        project_dir: Path,
        settings: Settings,
        *,
        store: Store | None = None,
        engine_factory: EngineFactory = create_engine,
        observer: Observer | None = None,
        embedder: TextEmbedder | None = None,
    ) -> None:
        self.project_dir = project_dir.resolve()
        self.settings = settings
        self.store = store or Store.open(self.project_dir)
        self.service = WorkflowService(self.store, doom_threshold=settings.workflow.doom_threshold)
        self._observers: list[Observer] = [observer] if observer else []
        self.leftovers = leftovers.Leftovers(self.store, self.service, self.emit)
        """Agents and test runs an earlier tunaflow left running."""
        self.shared_guard = SharedGitGuard(self.project_dir, lambda: self.is_git, self.emit,
                                           lambda: self.slots.working())
        """Puts git's shared hooks and configuration back after turns outside a plan's own guard."""
        self.runner = TurnRunner(self.store, self.emit, self.shared_guard)
        self.permissions = PermissionDesk(self.emit)
        """Questions agents ask before they use a tool (ACP engines), open until answered."""
        self.memory = ProjectMemory(self.store, settings, self.emit, embedder=embedder)
        self.context = ContextBuilder(self)
        self.turns = TurnService(self, self.runner, engine_factory, self.permissions)
        """Role turns: engines, sessions, prompts."""
        self.branches = BranchService(self)
        """Branches: fork, answer in, rename, archive, restore, delete, summarise, adopt."""
        self.slots = PlanSlots(self)
        """How many plans work at once (``max_parallel_plans``), and the queue of plans waiting for a slot."""
        self.cycle = PlanCycle(self)
        """The plan cycle: decisions, reviews, resumed steps, merges; one step at a time per plan."""
        self._is_git: bool | None = None
        self._compressing: set[str] = set()
        self._link_checked: set[str] = set()
        self._background: set[asyncio.Task[None]] = set()

    # ----------------------------------------------------------------- plumbing
    def subscribe(self, observer: Observer) -> None:
        """Receive every runtime event."""
        self._observers.append(observer)

    def emit(self, event: RuntimeEvent) -> None:
        """Send ``event`` to every observer (an observer's failure never stops the cycle)."""
        if isinstance(event, (MessageFinished, MessageAdded)):
            self.memory.message_settled(event.conversation_id, event.message_id)
            if isinstance(event, MessageFinished) and self.memory.started:
                self._schedule_compression(event.conversation_id)
            if self.memory.started and event.conversation_id != "main" \
                    and event.conversation_id not in self._link_checked:
                self._schedule_links(event.conversation_id)
        for observer in list(self._observers):
            try:
                observer(event)
            except Exception:  # observers belong to the UI; the cycle goes on
                continue

    def progress(self, text: str, plan_id: int | None = None) -> None:
        """Report what the runtime does now (for ``plan_id``, when it is about one plan)."""
        self.emit(Progress(text, plan_id))

    def plan_changed(self, plan: PlanRecord) -> None:
        """Tell observers a plan moved."""
        self.emit(PlanChanged(plan.id, plan.phase, plan.pending_decision))

    def _schedule_links(self, conversation_id: str) -> None:
        """Link a new conversation to the earlier ones most like its first message, off the event loop."""
        from tunaflow_tui.runtime.links import link_new_conversation

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._link_checked.add(conversation_id)

        async def link() -> None:
            try:
                await asyncio.to_thread(link_new_conversation, self, conversation_id)
            except Exception:  # a link is a help; the conversation goes on without it
                self._link_checked.discard(conversation_id)

        task = loop.create_task(link())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _schedule_compression(self, conversation_id: str) -> None:
        """Summarise the older part of a long conversation in the background (one task per conversation)."""
        from tunaflow_tui.runtime.compression import compress_conversation

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if conversation_id in self._compressing:
            return
        self._compressing.add(conversation_id)

        async def compress() -> None:
            try:
                await compress_conversation(self, conversation_id)
            except Exception as exc:  # compressed memory is a help, never a reason to stop a turn
                self.emit(NoticeRaised(f"Could not summarise the older part of the conversation: {exc}", "warning",
                                       conversation_id))
            finally:
                self._compressing.discard(conversation_id)

        task = loop.create_task(compress())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def start_memory(self) -> None:
        """Start embedding the project's messages in the background (the backfill, then each new one)."""
        self.memory.start()

    async def with_memory(self, work: Awaitable[T]) -> T:
        """``work`` with memory on, as in the app: then wait for the compression and links it started.

        For the commands that write messages (``ask``, ``run``, ``roundtable``, ``branch adopt``):
        what they write is embedded (or handed to the embedding worker at :meth:`close`), long
        conversations are summarised and new branches linked before the command exits.
        """
        self.start_memory()
        result = await work
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)
        return result

    def close(self) -> None:
        """Stop background memory work and close the database."""
        self.memory.close()
        self.store.close()

    def replace_settings(self, settings: Settings) -> None:
        """Use ``settings`` from the next turn on (e.g. once the user trusted the project's commands)."""
        self.settings = settings
        self.turns.forget_engines()

    def engine_for(self, role: str) -> tuple[Engine, EngineConfig]:
        """The engine configured for ``role`` (one instance per engine name, reused)."""
        return self.turns.engine_for(role)

    def engine_named(self, name: str) -> tuple[Engine, EngineConfig]:
        """The engine configured under ``name`` (one instance per name, reused); KeyError if none."""
        return self.turns.engine_named(name)

    @property
    def last_sent(self) -> SentPack | None:
        """The prompt the latest turn was sent with (a resumed session's: what it had not seen)."""
        return self.turns.last_sent

    @last_sent.setter
    def last_sent(self, sent: SentPack | None) -> None:
        self.turns.last_sent = sent

    def plan_lock(self, plan_id: int) -> asyncio.Lock:
        """One step at a time per plan."""
        return self.cycle.plan_lock(plan_id)

    @property
    def is_git(self) -> bool:
        """Whether the project is a git repository (isolation and merge are available)."""
        if self._is_git is None:
            self._is_git = gitops.is_git_repo(self.project_dir)
        return self._is_git

    def refresh_git(self) -> None:
        """Look again whether the project is a git repository (after the user initialised one)."""
        self._is_git = None

    @property
    def needs_initial_commit(self) -> bool:
        """True for a git repository without a commit: a plan has nothing to branch from yet."""
        return self.is_git and not gitops.has_commits(self.project_dir)

    def create_initial_commit(self) -> str:
        """Commit the project's current files as its first commit (an empty repository only)."""
        return git_guard.create_initial_commit(self.project_dir)

    # ----------------------------------------------------------------- turns
    async def run_role_turn(
        self,
        role: str,
        conversation_id: str,
        request_text: str,
        *,
        cwd: Path | None = None,
        plan: PlanRecord | None = None,
        findings: tuple[str, ...] = (),
        exclude_message_id: int | None = None,
        fresh_session: bool = False,
        blind: bool = False,
        on_markers: MarkerProgress | None = None,
        engine_name: str | None = None,
        fork_session: str | None = None,
    ) -> TurnResult:
        """Send ``request_text`` to ``role``'s engine in ``conversation_id`` (see :class:`.turn_spec.TurnSpec`)."""
        return await self.turns.run(TurnSpec(
            role, conversation_id, request_text, cwd=cwd, plan=plan, findings=findings,
            exclude_message_id=exclude_message_id, fresh_session=fresh_session, blind=blind, on_markers=on_markers,
            engine_name=engine_name, fork_session=fork_session))

    # ----------------------------------------------------------------- public API
    async def send_user_message(self, text: str, conversation_id: str = "main", *,
                                engine: str | None = None, plan_id: int | None = None) -> TurnResult | None:
        """Store the user's message and let the Architect answer; a proposal opens the approval gate.

        ``plan_id`` points the message at a plan (in main only; a message that starts with ``#N`` points at
        plan N too): the pack centres on it and a proposal in the reply revises it (or is refused when the
        plan cannot take a revision now, see :mod:`.planning`). The message is stored starting with ``#N``
        so the chat and the Architect see which plan it is about. A plan that does not exist raises
        :class:`RuntimeError_` and stores nothing.

        In a branch (``branch:{id}``) the branch's engine answers, continuing the parent's native
        session on its first turn where the branch was forked natively. An adopted or archived branch
        refuses the message (:class:`~tunaflow_tui.runtime.branching.BranchReadOnly`) and stores nothing.
        ``engine`` names another configured engine than the Architect's for this turn in main; a branch
        keeps the engine it was forked with.

        While another process writes a turn in the conversation (it holds the lease), or an agent an
        earlier tunaflow left running still works there, the message is refused and nothing is stored
        (:class:`~tunaflow_tui.core.storage.leases.TurnInProgress`, :class:`.leftovers.AgentStillRunning`).
        """
        text = text.strip()
        if not text:
            return None
        if engine is not None and engine not in self.settings.engines:
            raise branching.BranchError(f"there is no engine named {engine!r}")
        if conversation_id != "main":
            branching.writable_branch(self, conversation_id)  # a bad target is named before any lease is taken
            if plan_id is not None:
                raise branching.BranchError("a message in a branch cannot point at a plan; write it in main")
        elif plan_id is None:
            plan_id = plan_pointer(text)  # ``#3 …`` in main is about plan 3, however it was sent
        if plan_id is not None:
            self.get_plan(plan_id)
            if plan_pointer(text) != plan_id:
                text = f"#{plan_id} {text}"
        async with self.runner.leases.holding(conversation_id, "architect"):
            return await self._send_held(text, conversation_id, engine, plan_id)

    async def _send_held(self, text: str, conversation_id: str, engine: str | None,
                         plan_id: int | None = None) -> TurnResult | None:
        branch = None
        if conversation_id == "main":
            self.store.main_conversation()
        else:
            branch = branching.writable_branch(self, conversation_id)  # again: it may have been adopted meanwhile
            if engine is not None and engine != branch.engine:
                raise branching.BranchError(f"branch {branch.id} runs on {branch.engine}; a branch keeps the "
                                            "engine it was forked with (fork it again to use another)")
        found = leftovers.find_leftovers(self.store, conversations=(conversation_id,))
        if found:  # never a second agent beside one an earlier tunaflow left running here
            raise leftovers.AgentStillRunning(found)
        about = self.get_plan(plan_id) if plan_id is not None else None  # (deleted meanwhile: nothing stored)
        user_msg = self.store.add_message(conversation_id, "user", text, status="done")
        self.emit(MessageAdded(conversation_id, user_msg.id, "user"))
        planning.record_user_markers(self, user_msg, about)
        if branch is not None:
            return await self.answer_in_branch(user_msg)
        result = await self.run_role_turn(
            "architect", conversation_id, text,
            plan=about or planning.plan_in_drafting(self) or planning.active_plan(self),
            exclude_message_id=user_msg.id, engine_name=engine,
        )
        if result.ok and conversation_id == "main":
            await planning.handle_architect_reply(self, result, revising=about, feedback=text)
        return result

    async def answer_in_branch(self, user_message: MessageRecord) -> TurnResult:
        """Let the branch's engine answer a user message stored in a branch (see :meth:`.BranchService.answer`)."""
        return await self.branches.answer(user_message)

    # ----------------------------------------------------------------- branches
    def fork(self, conversation_id: str, message_id: int, *, engine: str | None = None,
             label: str | None = None) -> BranchRecord:
        """Fork ``conversation_id`` at its message ``message_id`` (see :func:`.branching.fork`)."""
        return self.branches.fork(conversation_id, message_id, engine=engine, label=label)

    def rename_branch(self, branch_id: int | str, label: str) -> BranchRecord:
        """Give a branch a new label."""
        return self.branches.rename(branch_id, label)

    def archive_branch(self, branch_id: int | str) -> BranchRecord:
        """Move an active branch to the archive (read-only, messages kept)."""
        return self.branches.archive(branch_id)

    def restore_branch(self, branch_id: int | str) -> BranchRecord:
        """Make an archived or adopted branch active again."""
        return self.branches.restore(branch_id)

    def delete_branch(self, branch_id: int | str) -> BranchRecord:
        """Delete a branch (an active one with its messages); the caller has confirmed."""
        return self.branches.delete(branch_id)

    async def summarize_branch(self, branch_id: int | str) -> adoption.BranchSummary:
        """A summary of the branch for adopting it (the summarizer's turn, or the cut last reply)."""
        return await self.branches.summarize(branch_id)

    async def adopt_branch(self, branch_id: int | str, *,
                           summary: str | adoption.BranchSummary | None = None) -> Adoption:
        """Adopt a branch into its parent with ``summary`` (None: the summarizer writes one)."""
        return await self.branches.adopt(branch_id, summary=summary)

    async def retry_message(self, message: MessageRecord) -> TurnResult | None:
        """Re-run the turn that produced a failed or interrupted message (the UI's retry action)."""
        return await recovery.retry_message(self, message)

    async def decide(
        self,
        plan_id: int,
        decision: Decision | str,
        *,
        feedback: str = "",
        seats: tuple[str, ...] = (),
        reason: str = "",
        edited: EditedProposal | None = None,
    ) -> PlanRecord:
        """Apply the user's decision on a plan and run whatever it starts, until the next gate.

        ``decision`` is one of :class:`Decision` (or its name). ``feedback`` goes to the agent (revise,
        rework, redesign, continue); ``reason`` goes to the record (accept partial / override, abandon);
        ``seats`` picks the errored seats to retry; ``edited`` is the proposal for ``edit``. A decision
        that is not available now raises :class:`~tunaflow_tui.core.workflow.IllegalTransition` before
        anything runs (see :meth:`way_on` for what is available). See :class:`.plan_cycle.PlanCycle`.
        """
        return await self.cycle.decide(plan_id, decision, feedback=feedback, seats=seats, reason=reason,
                                       edited=edited)

    async def edit_proposal(self, plan_id: int, edited: EditedProposal) -> PlanRecord:
        """Replace a proposal at the approval gate with the user's edit (recorded as ``plan_edited``).

        The edited version is what approval starts from and what the plan documents are written from.
        A new title also renames the plan's slug (and so its future git branch and documents).
        """
        return await self.cycle.edit_proposal(plan_id, edited)

    def way_on(self, plan_id: int) -> WayOn:
        """What the plan waits on now and the decisions available (the first is the main one)."""
        return self.cycle.way_on(plan_id)

    def waiting(self) -> tuple[WaitingDecision, ...]:
        """Everything waiting for the user, newest first, held plans last (what f2 walks through)."""
        return self.cycle.waiting()

    def busy_plan_ids(self) -> frozenset[int]:
        """Plans the runtime is working on now: a decision or step in progress, or an agent running."""
        return self.cycle.busy_plan_ids()

    async def cancel(self, conversation_id: str | None = None) -> int:
        """Stop the running agents (the user asked): their replies and steps record "cancelled by you"."""
        return await self.runner.cancel(conversation_id, reason=USER_CANCELLED)

    async def start_review(self, plan_id: int) -> PlanRecord:
        """Run a review round now (used when automatic review is off)."""
        return await self.cycle.start_review(plan_id)

    async def resume_interrupted(self, plan_id: int, *, how: str = "resume") -> PlanRecord:
        """Re-run the agent step that a crash or cancel interrupted (``resume`` keeps the session)."""
        return await self.cycle.resume_interrupted(plan_id, how=how)

    def queued_plans(self) -> tuple[QueuedPlan, ...]:
        """Plans approved over ``max_parallel_plans``, waiting for a slot, in the order they start."""
        return queued_plans(self.store)

    def queued_to_start(self) -> tuple[int, ...]:
        """Plans an earlier run left queued that nothing here starts yet, in queue order (see :meth:`start_queued`).

        None while another live process owns the project: its queue is that process's to run.
        """
        if not self.store.is_owner:
            return ()
        here = self.slots.waiting() | self.slots.working() | self.cycle.busy_plan_ids()
        return tuple(queued.plan_id for queued in self.queued_plans() if queued.plan_id not in here)

    async def start_queued(self, plan_id: int) -> PlanRecord:
        """Start a plan an earlier run left queued: it waits for its slot in its place, then its step starts.

        Call it for each of :meth:`queued_to_start` in that order (on open): the slots go in that order.
        """
        return await self.cycle.start_queued(plan_id)

    def interrupted_plans(self) -> tuple[recovery.InterruptedRun, ...]:
        """Plans whose agent was running when the process stopped."""
        return recovery.interrupted_runs(self)

    def leftover_agents(self, plan_id: int | None = None) -> tuple[leftovers.Leftover, ...]:
        """Agents and test runs an earlier tunaflow started (for ``plan_id``, or anywhere) that still run."""
        return self.leftovers.find(plan_id)

    async def stop_leftover_agents(
        self, plan_id: int | None = None, *, agents: bool = True
    ) -> tuple[leftovers.Leftover, ...]:
        """End the leftovers (for ``plan_id``, or all) whose tunaflow is gone (see :meth:`.Leftovers.stop`)."""
        return await self.leftovers.stop(plan_id, agents=agents)

    def catch_up_records(self) -> int:
        """Write the decision records a stop left unwritten (see :func:`.decision_records.catch_up`)."""
        return record_writer.catch_up(self)

    def merge(self, plan_id: int, on_queued: Callable[[int], None] | None = None) -> gitops.MergeResult:
        """Merge a done plan's branch into its base (fast-forward or merge commit; never force), in the
        merge queue: after the merges asked before it, here or in another process (``on_queued`` hears
        which plan it waits behind). A conflict stops the plan at a merge-conflict decision.

        The merge (or the conflict that stopped it) gets its record in the chat.
        """
        return self.cycle.merge(plan_id, on_queued)

    def remove_worktree(self, plan_id: int) -> None:
        """Remove a plan's worktree (its git branch stays)."""
        self.cycle.remove_worktree(plan_id)

    # ----------------------------------------------------------------- helpers for the steps
    def apply(self, plan_id: int, command: object, actor: Actor = Actor.SYSTEM) -> PlanRecord:
        """Apply a workflow command and tell observers; a decision of the user's gets its record in the chat."""
        before = self.store.get_plan(plan_id) if actor == Actor.USER else None
        since = record_writer.last_event_id(self, plan_id) if before is not None else 0
        plan = self.service.apply(plan_id, command, actor=actor)  # type: ignore[arg-type]
        if before is not None:
            record_writer.write_records(self, plan_id, since, before=before)
        self.plan_changed(plan)
        return plan

    def get_plan(self, plan_id: int) -> PlanRecord:
        """The plan, or a clear error when it does not exist."""
        plan = self.store.get_plan(plan_id)
        if plan is None:
            raise RuntimeError_(f"there is no plan {plan_id}")
        return plan

    def proposal_to_plan_fields(self, proposal: PlanProposal) -> dict[str, object]:
        """The plan fields a proposal sets."""
        return {
            "title": proposal.title or "Untitled plan",
            "description": proposal.description,
            "expected_outcome": proposal.expected_outcome,
            "constraints": tuple(proposal.constraints),
            "non_goals": tuple(proposal.non_goals),
        }
