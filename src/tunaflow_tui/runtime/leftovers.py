"""Agents and test runs that an earlier tunaflow started and that still run: find them, say so, end them.

Agents run in their own process groups, so a tunaflow that is killed (``kill -9``, an out-of-memory
kill, a power-cut terminal) leaves them running: an agent in the middle of a long tool call keeps
editing its worktree. Before anything starts an agent in a conversation, or runs a plan's step
again, this module checks the groups recorded in the database: a live one is a *leftover*, and no
second agent is started beside it. The user decides: wait for it, or stop it.

A record whose owner — the tunaflow process that started it — is this process belongs to a turn
that runs now and is never a leftover. A record whose group has ended is deleted on sight.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from dataclasses import dataclass

from tunaflow_tui.core.processes import end_group, group_alive
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.process_records import RunningProcessRecord, this_process
from tunaflow_tui.core.workflow.phases import Actor, PlanEventType
from tunaflow_tui.core.workflow.service import WorkflowService
from tunaflow_tui.runtime.events import NoticeRaised, RuntimeEvent


class AgentStillRunning(Exception):
    """A step cannot start: the agent (or test run) an earlier tunaflow started for it still runs."""

    def __init__(self, leftovers: tuple[Leftover, ...]) -> None:
        self.leftovers = leftovers
        super().__init__(describe(leftovers))


@dataclass(frozen=True, slots=True)
class Leftover:
    """A live process group recorded by another tunaflow process; ``owner_alive`` if that one still runs."""

    record: RunningProcessRecord
    owner_alive: bool

    @property
    def what(self) -> str:
        """``the developer agent (claude)`` / ``the project's tests``."""
        if self.record.kind == "tests":
            return "the project's tests"
        return f"the {self.record.label or 'agent'}"

    @property
    def stoppable(self) -> bool:
        """Only a group whose tunaflow is gone may be stopped from here (a live tunaflow owns its own)."""
        return not self.owner_alive


def describe(leftovers: tuple[Leftover, ...]) -> str:
    """One message for the user: what still runs, and the choice they have."""
    parts = []
    for leftover in leftovers:
        who = (f"by tunaflow process {leftover.record.owner.pid}, which is still running"
               if leftover.owner_alive else "by an earlier tunaflow that ended without stopping it")
        parts.append(f"{leftover.what} (process group {leftover.record.identity.pgid}, started {who})")
    listing = "; ".join(parts)
    if all(not leftover.stoppable for leftover in leftovers):
        return f"Still running: {listing}. Wait for it to finish before starting this step again."
    return (f"Still running: {listing}. No second agent was started beside it: wait for it to finish, "
            "or stop it (“Stop leftover agents” in the app, `tunaflow run --resume --stop-leftovers`).")


def find_leftovers(
    store: Store,
    *,
    conversations: Collection[str] | None = None,
    plan_id: int | None = None,
) -> tuple[Leftover, ...]:
    """Live groups recorded by other tunaflow processes, for ``conversations`` / ``plan_id`` (or all).

    Records of groups that have ended are deleted on the way.
    """
    me = this_process()
    found = []
    for record in store.list_processes():
        if record.owner.pid == me.pid and record.owner.start_ticks == me.start_ticks:
            continue  # a turn of this process: running now, not left over
        if conversations is not None or plan_id is not None:
            in_conversation = conversations is not None and record.conversation_id in conversations
            in_plan = plan_id is not None and record.plan_id == plan_id
            if not (in_conversation or in_plan):
                continue
        if not group_alive(record.identity):
            store.forget_process(record.id)
            continue
        found.append(Leftover(record, owner_alive=group_alive(record.owner)))
    return tuple(found)


def plan_conversations(store: Store, plan_id: int) -> tuple[str, ...]:
    """The conversations a plan's steps run in: main (the Architect), its implementation and review branches."""
    plan = store.get_plan(plan_id)
    names = ["main"]
    if plan is not None:
        names += [f"branch:{b}" for b in (plan.impl_branch_id, plan.review_branch_id) if b is not None]
    return tuple(names)


async def stop_leftovers(store: Store, leftovers: tuple[Leftover, ...]) -> tuple[Leftover, ...]:
    """End the stoppable leftovers' process groups (SIGTERM, then SIGKILL); return the ones that ended."""
    stopped = []
    for leftover in leftovers:
        if not leftover.stoppable:
            continue
        if await asyncio.to_thread(end_group, leftover.record.identity):
            store.forget_process(leftover.record.id)
            stopped.append(leftover)
    return tuple(stopped)


class Leftovers:
    """The project's leftovers: find them, and end the ones the user (or a re-run step) asks to end."""

    def __init__(self, store: Store, service: WorkflowService, emit: Callable[[RuntimeEvent], None]) -> None:
        self._store = store
        self._service = service
        self._emit = emit

    def find(self, plan_id: int | None = None) -> tuple[Leftover, ...]:
        """Agents and test runs an earlier tunaflow started (for ``plan_id``, or anywhere) that still run."""
        if plan_id is None:
            return find_leftovers(self._store)
        return find_leftovers(self._store, conversations=plan_conversations(self._store, plan_id), plan_id=plan_id)

    async def stop(self, plan_id: int | None = None, *, agents: bool = True) -> tuple[Leftover, ...]:
        """End the leftovers (for ``plan_id``, or all) whose tunaflow is gone; return the ones ended.

        Leftover test runs are always ended (nobody can read their result any more, and a second run
        would share their worktree); agents only with ``agents`` — that is the user's call.
        """
        chosen = tuple(leftover for leftover in self.find(plan_id) if agents or leftover.record.kind == "tests")
        stopped = await stop_leftovers(self._store, chosen)
        for leftover in stopped:
            if leftover.record.plan_id is not None:
                actor = Actor.USER if leftover.record.kind == "agent" else Actor.SYSTEM
                self._service.record(leftover.record.plan_id, PlanEventType.LEFTOVER_STOPPED, actor,
                                     {"kind": leftover.record.kind, "pgid": leftover.record.identity.pgid,
                                      "what": leftover.what})
            if leftover.record.kind == "tests":
                self._emit(NoticeRaised("Stopped the project's tests that an earlier tunaflow left running.",
                                        "warning"))
        return stopped
