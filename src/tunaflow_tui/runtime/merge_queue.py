"""The merge queue: done plans merge into their base one at a time, in the order the user asked.

Two merges asked at once — two keys in the app, or the app and ``tunaflow run --merge`` in another
terminal — must never interleave their git work. Each request takes a ticket: a ``merge_queued``
event in the plan's history, written in the database every tunaflow process of the project shares,
that names the process holding it (host, boot, pid and the pid's start time, as turn leases do). The
ids of those events are the queue's order. A request merges once no open ticket older than its own
is left; the ticket is closed by a ``merge_unqueued`` event whatever the outcome. A ticket whose
process is gone (killed mid-merge) no longer holds anyone up.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tunaflow_tui.core.storage.leases import LeaseHolder, TurnLease
from tunaflow_tui.core.storage.records import PlanEventRecord
from tunaflow_tui.core.workflow.phases import Actor, Phase, PlanEventType
from tunaflow_tui.runtime.ports import StepContext

POLL_S = 0.05
"""How often a queued merge looks whether its turn has come."""
WAIT_LIMIT_S = 900.0
"""A merge still queued after this long gives up (its ticket is closed; nothing was touched)."""

QueuedBehind = Callable[[int], None]
"""Told the plan a merge waits behind, each time that plan changes."""


class MergeQueueTimeout(RuntimeError):
    """A merge waited too long behind another one; nothing was merged."""


@dataclass(frozen=True)
class Ticket:
    """A merge asked for and not finished: its event id (the queue order), its plan and its process."""

    event_id: int
    plan_id: int
    holder: LeaseHolder
    asked_at: float

    def is_stale(self) -> bool:
        """Whether the process that asked is gone (on another host: silent for too long)."""
        lease = TurnLease("merge-queue", "", 0, self.holder, "merge", None, self.asked_at)
        return lease.is_stale()


def _holder(detail: dict[str, object]) -> LeaseHolder:
    pid_start = detail.get("pid_start")
    pid = detail.get("pid")
    return LeaseHolder(str(detail.get("host") or ""), str(detail.get("boot_id") or ""),
                       int(pid) if isinstance(pid, int) else -1,
                       int(pid_start) if isinstance(pid_start, int) else None)


def _tickets_of(plan_id: int, events: tuple[PlanEventRecord, ...]) -> list[Ticket]:
    closed = {e.detail.get("ticket") for e in events if e.type == PlanEventType.MERGE_UNQUEUED}
    return [Ticket(e.id, plan_id, _holder(dict(e.detail)), e.created_at.timestamp())
            for e in events if e.type == PlanEventType.MERGE_QUEUED and e.id not in closed]


def open_tickets(rt: StepContext) -> tuple[Ticket, ...]:
    """Every merge asked for and not finished by a live process, oldest first."""
    found: list[Ticket] = []
    for plan in rt.store.list_plans():
        if plan.phase != Phase.DONE:  # only a done plan can be merged, and a ticket is closed before it moves
            continue
        found += _tickets_of(plan.id, rt.store.list_plan_events(plan.id))
    return tuple(sorted((t for t in found if not t.is_stale()), key=lambda t: t.event_id))


def ahead_of(rt: StepContext, ticket_id: int) -> tuple[Ticket, ...]:
    """The open tickets older than ``ticket_id``: the merges that go first."""
    return tuple(t for t in open_tickets(rt) if t.event_id < ticket_id)


def _take_ticket(rt: StepContext, plan_id: int) -> int:
    me = LeaseHolder.this_process()
    event = rt.service.record(plan_id, PlanEventType.MERGE_QUEUED, Actor.USER, {
        "host": me.host, "boot_id": me.boot_id, "pid": me.pid, "pid_start": me.pid_start})
    return event.id


def _wait_for_turn(rt: StepContext, plan_id: int, ticket_id: int, on_queued: QueuedBehind | None) -> None:
    told: int | None = None
    deadline = time.monotonic() + WAIT_LIMIT_S
    while ahead := ahead_of(rt, ticket_id):
        first = ahead[0].plan_id
        if first != told:
            told = first
            rt.progress(f"The merge of plan {plan_id} is queued behind plan {first}: it merges when that one "
                        "has landed.")
            if on_queued is not None:
                on_queued(first)
        if time.monotonic() > deadline:
            raise MergeQueueTimeout(f"the merge of plan {plan_id} waited {WAIT_LIMIT_S:.0f} s behind plan {first} "
                                    "and gave up; nothing was merged — merge it again")
        time.sleep(POLL_S)


@contextmanager
def turn_in_queue(rt: StepContext, plan_id: int, on_queued: QueuedBehind | None = None) -> Iterator[dict[str, str]]:
    """Hold the plan's place in the merge queue; the block runs once every merge asked before it is done.

    The block may put its outcome (``merged``, ``conflict``, ``refused: …``) in the dict it is given;
    it goes with the ticket's closing event.
    """
    ticket = _take_ticket(rt, plan_id)
    closing = {"outcome": "refused"}
    try:
        _wait_for_turn(rt, plan_id, ticket, on_queued)
        yield closing
    except BaseException as exc:
        closing["outcome"] = f"refused: {exc}"[:300] if str(exc) else "refused"
        raise
    finally:
        rt.service.record(plan_id, PlanEventType.MERGE_UNQUEUED, Actor.SYSTEM, {"ticket": ticket, **closing})
