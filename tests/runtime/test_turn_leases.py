"""A step another live process runs is running, not interrupted: no resume is offered beside it."""

from __future__ import annotations

import subprocess
import sys
import time

from runtime_harness import Harness
from seeded_plans import with_branches

from tunaflow_tui.core.processes import start_ticks
from tunaflow_tui.core.storage.leases import LeaseHolder
from tunaflow_tui.core.workflow import Approve
from tunaflow_tui.core.workflow.phases import Waiting
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _other_process() -> subprocess.Popen[bytes]:
    """A live process standing for `tunaflow run` in another terminal (it holds a lease seeded for it)."""
    return subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)


def _holder(proc: subprocess.Popen[bytes]) -> LeaseHolder:
    here = LeaseHolder.this_process()
    deadline = time.monotonic() + 60
    while start_ticks(proc.pid) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return LeaseHolder(here.host, here.boot_id, proc.pid, start_ticks(proc.pid))


def test_a_developer_step_another_process_runs_is_not_offered_for_resume(harness: Harness) -> None:
    rt = WorkflowRuntime(harness.project, harness.settings())
    other = _other_process()
    try:
        plan = rt.service.create_plan_from_proposal(title="Add mul", slug="add-mul", subtasks=[("mul", "")])
        impl, _review = with_branches(rt.store, plan.id, "add-mul")
        rt.service.apply(plan.id, Approve(), actor="user")  # the Developer's step is open
        assert [run.plan_id for run in rt.interrupted_plans()] == [plan.id], "no one runs it: interrupted"
        assert rt.way_on(plan.id).waiting is Waiting.INTERRUPTED
        rt.store.acquire_lease(f"branch:{impl}", role="developer", holder=_holder(other))
        assert rt.interrupted_plans() == (), "the other process's Developer is at work"
        way = rt.way_on(plan.id)
        assert way.waiting is not Waiting.INTERRUPTED and not way.decisions, way
        other.kill()
        other.wait()
        assert [run.plan_id for run in rt.interrupted_plans()] == [plan.id], "its process died: interrupted"
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()
        rt.close()


async def test_turns_of_one_process_share_a_lease_until_the_last_ends(harness: Harness) -> None:
    """The seats of a review round answer in one conversation at once: the first to end keeps it held."""
    import asyncio

    from tunaflow_tui.runtime.turn_leases import LeaseKeeper

    rt = WorkflowRuntime(harness.project, harness.settings())
    lost: list[str] = []
    keeper = LeaseKeeper(rt.store, on_lost=lambda lease: lost.append(lease.conversation_id), interval_s=0.01)
    try:
        first_may_end, second_in, second_may_end = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def seat(entered: asyncio.Event | None, may_end: asyncio.Event) -> None:
            async with keeper.holding("main", "reviewer"):
                if entered is not None:
                    entered.set()
                await may_end.wait()

        first = asyncio.create_task(seat(None, first_may_end))  # takes the lease
        while keeper.lease_of("main") is None:
            await asyncio.sleep(0)
        lease = keeper.lease_of("main")
        second = asyncio.create_task(seat(second_in, second_may_end))  # joins it
        await second_in.wait()
        first_may_end.set()
        await first  # the seat that took the lease ends first
        assert lease is not None and rt.store.holds_lease(lease), "the other seat still writes under it"
        second_may_end.set()
        await second
        assert keeper.lease_of("main") is None and rt.store.live_lease("main") is None, "the last one gave it up"

        async with keeper.holding("main") as taken:
            rt.store.release_lease(taken)  # as if another process had taken it over
            deadline = asyncio.get_running_loop().time() + 60
            while not lost and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)
        assert lost == ["main"], "the heartbeat tells the turn it lost its lease"
    finally:
        rt.close()


async def test_a_seat_starting_while_the_last_turn_gives_the_lease_up_is_not_refused(harness: Harness) -> None:
    """A review seat that starts just as another turn of this process ends in the same conversation takes
    the lease anew: it is never told its own process has a turn in progress (the seat would error)."""
    import asyncio

    from tunaflow_tui.runtime.turn_leases import LeaseKeeper

    rt = WorkflowRuntime(harness.project, harness.settings())
    keeper = LeaseKeeper(rt.store, interval_s=0.01)
    try:
        async def verifier() -> str:
            async with keeper.holding("branch:2", "verifier") as lease:
                return lease.owner_token

        async with keeper.holding("branch:2", "reviewer") as first:
            # runs at the first moment the loop is free: while the block below gives the lease up
            starting = asyncio.create_task(verifier())
        token = await starting
        assert token != first.owner_token, "taken anew, after the first was given up"
        assert keeper.lease_of("branch:2") is None and rt.store.live_lease("branch:2") is None
    finally:
        rt.close()


async def test_a_turn_whose_lease_was_taken_over_stops_and_writes_nothing_more(harness: Harness) -> None:
    """A process that was judged gone (a laptop asleep past its lease) finds its lease taken: its agent is
    stopped and its reply keeps what the new holder found, nothing written after the takeover."""
    import asyncio

    gate = {"after": "Half.\n\n", "started": str(harness.root / "started"), "release": str(harness.root / "release")}
    harness.set_script(architect=[{"text": "Half.\n\nThe rest, too late.", "gate": gate}])
    rt = WorkflowRuntime(harness.project, harness.settings())
    other = _other_process()
    try:
        sending = asyncio.create_task(rt.send_user_message("go on"))
        deadline = asyncio.get_running_loop().time() + 120
        while not (harness.root / "started").exists() and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        lease = rt.runner.leases.lease_of("main")
        assert lease is not None
        rt.store.release_lease(lease)  # what a takeover looks like from here: another token in the row
        rt.store.acquire_lease("main", role="architect", holder=_holder(other))
        result = await asyncio.wait_for(sending, 20)  # stopped at the next heartbeat, long before the idle timeout
        (harness.root / "release").touch()
        assert result is not None and not result.ok
        reply = rt.store.get_message(result.message.id)
        assert reply is not None and "too late" not in reply.content, "nothing written after the takeover"
        assert rt.store.live_lease("main") is not None and rt.store.live_lease("main").holder.pid == other.pid  # type: ignore[union-attr]
    finally:
        (harness.root / "release").touch()
        other.kill()
        other.wait()
        rt.close()
