"""How many plans work at once: ``[workflow] max_parallel_plans`` slots, and the queue of plans waiting for one.

A plan takes a slot when its Developer or its tests are about to start, and keeps it until the
decision (or resumed step) that started the work reaches its next gate: done, a verdict, a stall, a
failure, a cancel. A plan that finds every slot taken is *queued*: a ``plan_queued`` event says so in
the database, for the board, ``tunaflow status`` and another process to see, and it starts by itself
when a slot frees, in the order the plans were queued (their approval order). Its ``queue_left``
event closes the wait (``started``, or ``withdrawn`` when the user held or abandoned it meanwhile).

A queued plan survives a restart: the events stay, :func:`queued_plans` still lists it, and the
runtime that opens the project starts it again in the same order (see ``WorkflowRuntime.start_queued``).

Another tunaflow process working on the same project (the app beside ``tunaflow run``) counts too: a
plan whose Developer or reviewers hold their conversation's lease in a live process of its own takes a
slot, and a plan waiting here looks again every :data:`ELSEWHERE_POLL_S` seconds whether that one ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from tunaflow_tui.core.storage.leases import LeaseHolder
from tunaflow_tui.core.storage.records import PlanEventRecord
from tunaflow_tui.core.workflow.phases import Actor, Phase, PlanEventType

if TYPE_CHECKING:
    from tunaflow_tui.core.settings import Settings
    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.core.storage.records import PlanRecord
    from tunaflow_tui.core.workflow.service import WorkflowService

QUEUED = PlanEventType.PLAN_QUEUED
LEFT = PlanEventType.QUEUE_LEFT
ELSEWHERE_POLL_S = 1.0
"""How often a plan waiting here looks whether a plan another process works on has freed its slot."""


@dataclass(frozen=True, slots=True)
class QueuedPlan:
    """A plan waiting for a slot: ``position`` 1 starts next; ``queued_event_id`` orders the queue."""

    plan_id: int
    title: str
    position: int
    queued_event_id: int


def open_wait(events: Sequence[PlanEventRecord]) -> PlanEventRecord | None:
    """The plan's ``plan_queued`` event that no ``queue_left`` followed, if any."""
    waiting: PlanEventRecord | None = None
    for event in events:
        if event.type == QUEUED:
            waiting = waiting or event
        elif event.type == LEFT:
            waiting = None
    return waiting


def may_wait(plan: PlanRecord) -> bool:
    """Whether the plan can be in the queue at all: an ended or held plan waits for nobody's slot."""
    return not Phase(plan.phase).is_terminal and plan.phase != Phase.HELD


def queued_plans(store: Store) -> tuple[QueuedPlan, ...]:
    """Every plan waiting for a slot, in the order they will start (read from the database)."""
    return queue_of((plan, store.list_plan_events(plan.id)) for plan in store.list_plans() if may_wait(plan))


def queue_of(plans: Iterable[tuple[PlanRecord, Sequence[PlanEventRecord]]]) -> tuple[QueuedPlan, ...]:
    """The queue among ``plans`` (each with its events, oldest first), in the order they will start."""
    found: list[tuple[int, PlanRecord]] = []
    for plan, events in plans:
        event = open_wait(events) if may_wait(plan) else None
        if event is not None:
            found.append((event.id, plan))
    found.sort(key=lambda pair: pair[0])
    return tuple(QueuedPlan(plan.id, plan.title, n, event_id) for n, (event_id, plan) in enumerate(found, start=1))


class SlotHost(Protocol):
    """What the slots use: the settings (the cap), the database and where to say a plan waits."""

    @property
    def settings(self) -> Settings:
        """The settings the runtime works with now."""

    @property
    def store(self) -> Store:
        """The project's database."""

    def progress(self, text: str, plan_id: int | None = None) -> None:
        """Report what the runtime does now (for ``plan_id``)."""

    @property
    def service(self) -> WorkflowService:
        """Every plan event goes through this."""

    def get_plan(self, plan_id: int) -> PlanRecord:
        """The plan, or a clear error when it does not exist."""

    def plan_changed(self, plan: PlanRecord) -> None:
        """Tell observers a plan moved."""


class PlanSlots:
    """The slots of one runtime: which plans work now, which wait, and who is next."""

    def __init__(self, host: SlotHost) -> None:
        self._host = host
        self._working: set[int] = set()
        self._waiting: dict[int, tuple[int, asyncio.Future[bool]]] = {}
        self._granted: list[int] = []  # every plan given a slot or decided on, in order (see working_since)
        self._deciding: dict[int, int] = {}  # plans a decision or step runs for now, and how many

    @property
    def limit(self) -> int:
        """How many plans may work at once (``[workflow] max_parallel_plans``)."""
        return max(1, int(self._host.settings.workflow.max_parallel_plans))

    def working(self) -> frozenset[int]:
        """The plans holding a slot now."""
        return frozenset(self._working)

    def waiting(self) -> frozenset[int]:
        """The plans this runtime has waiting for a slot now."""
        return frozenset(self._waiting)

    def holds(self, plan_id: int) -> bool:
        """Whether ``plan_id`` holds a slot now."""
        return plan_id in self._working

    def mark(self) -> int:
        """A point in time for :meth:`working_since`."""
        return len(self._granted)

    def working_since(self, mark: int) -> frozenset[int]:
        """Every plan tunaflow worked on at some moment since ``mark``: a slot, or a decision or step run for it."""
        return frozenset(self._granted[mark:]) | self.at_work()

    def at_work(self) -> frozenset[int]:
        """The plans tunaflow works on now: holding a slot, or a decision or step in progress (a commit may come)."""
        return frozenset(self._working) | frozenset(self._deciding)

    @contextmanager
    def deciding(self, plan_id: int) -> Iterator[None]:
        """Count ``plan_id`` as at work while a decision or step runs for it (its branch may move)."""
        self._deciding[plan_id] = self._deciding.get(plan_id, 0) + 1
        self._granted.append(plan_id)
        try:
            yield
        finally:
            left = self._deciding.pop(plan_id) - 1
            if left:
                self._deciding[plan_id] = left

    def _give(self, plan_id: int) -> None:
        self._working.add(plan_id)
        self._granted.append(plan_id)

    def working_elsewhere(self) -> frozenset[int]:
        """Plans another live tunaflow process works on now (its Developer or reviewers hold their lease)."""
        store = self._host.store
        here = LeaseHolder.this_process()
        leased = {lease.conversation_id for lease in store.live_leases()
                  if (lease.holder.host, lease.holder.pid) != (here.host, here.pid)}
        if not leased:
            return frozenset()
        mine = self._working | set(self._waiting)
        return frozenset(plan.id for plan in store.list_plans() if plan.id not in mine and leased & {
            f"branch:{plan.impl_branch_id}", f"branch:{plan.review_branch_id}"})

    def _free(self) -> int:
        if len(self._working) >= self.limit:
            return 0
        return self.limit - len(self._working) - len(self.working_elsewhere())

    async def take(self, plan_id: int) -> bool:
        """Wait until ``plan_id`` has a slot (at once when one is free and nobody waits before it).

        While it waits the plan is queued in the database. Returns False when the plan left the queue
        without starting (:meth:`withdraw`); a plan that already holds a slot keeps it (True).
        """
        if plan_id in self._working:
            return True
        earlier = open_wait(self._host.store.list_plan_events(plan_id))
        if earlier is None and not self._waiting and self._free() > 0:
            self._give(plan_id)
            return True
        working = len(self._working) + len(self.working_elsewhere())
        if earlier is None:
            earlier = self._host.service.record(plan_id, QUEUED, Actor.SYSTEM,
                                                {"working": working, "limit": self.limit})
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting[plan_id] = (earlier.id, future)
        self._grant()  # a plan queued before a restart may find a slot free at once
        if not future.done():
            plan = self._host.get_plan(plan_id)
            self._host.progress(f"Plan {plan_id} “{plan.title}” is queued: {working} of "
                                f"{self.limit} plans are working (max_parallel_plans); it starts when one "
                                "reaches a gate.", plan_id)
            self._host.plan_changed(plan)
        try:
            while True:  # released here, or (a plan another process works on) looked at again now and then
                try:
                    started = await asyncio.wait_for(asyncio.shield(future), ELSEWHERE_POLL_S)
                    break
                except TimeoutError:
                    if self._wait_closed(plan_id, earlier.id):  # held (or abandoned) by another process
                        self.withdraw(plan_id)
                    self._grant()
        except asyncio.CancelledError:  # the process stops: the plan stays queued in the database
            self._waiting.pop(plan_id, None)
            if future.done() and not future.cancelled() and future.result():
                self.release(plan_id)
            raise
        started = self._leave(plan_id, earlier.id, started)
        self._host.plan_changed(self._host.get_plan(plan_id))
        if started:
            self._host.progress(f"Plan {plan_id} leaves the queue: its work starts.", plan_id)
        return started

    def _wait_closed(self, plan_id: int, queued_event_id: int) -> bool:
        """Whether the plan's wait that ``queued_event_id`` opened was closed in the database (or it cannot wait)."""
        wait = open_wait(self._host.store.list_plan_events(plan_id))
        return wait is None or wait.id != queued_event_id or not may_wait(self._host.get_plan(plan_id))

    def _leave(self, plan_id: int, queued_event_id: int, started: bool) -> bool:
        """Close the wait in the database; whether the plan starts after all.

        One transaction with the check: a hold in another process either came first (the wait is closed:
        the plan does not start, its slot goes to the next) or comes after (it finds the plan started).
        """
        with self._host.store.transaction():
            closed = self._wait_closed(plan_id, queued_event_id)
            if not closed:
                self._host.service.record(plan_id, LEFT, Actor.SYSTEM, {"why": "started" if started else "withdrawn"})
        if started and closed:
            self.release(plan_id)
        return started and not closed

    def withdraw(self, plan_id: int) -> bool:
        """Take a waiting plan out of the queue without starting it (it is being held or abandoned)."""
        entry = self._waiting.pop(plan_id, None)
        if entry is None or entry[1].done():
            return False
        entry[1].set_result(False)
        return True

    def release(self, plan_id: int) -> None:
        """Free ``plan_id``'s slot (its work reached a gate); the first plan waiting starts."""
        if plan_id in self._working:
            self._working.discard(plan_id)
            self._grant()

    def _grant(self) -> None:
        free = self._free() if self._waiting else 0
        while self._waiting and free > 0:
            plan_id = min(self._waiting, key=lambda p: self._waiting[p][0])
            _order, future = self._waiting.pop(plan_id)
            if future.done():
                continue
            self._give(plan_id)
            future.set_result(True)
            free -= 1


def queue_detail(queued: QueuedPlan) -> Mapping[str, object]:
    """A queued plan as plain data (``status --json``, the board)."""
    return {"plan_id": queued.plan_id, "title": queued.title, "position": queued.position}
