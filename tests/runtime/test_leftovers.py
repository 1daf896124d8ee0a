"""What an earlier, crashed tunaflow left running blocks its conversation until it ends or is stopped."""

from __future__ import annotations

import os

import pytest
from run_phases import group_alive, kill_groups, leave_agent_running
from runtime_harness import PROPOSAL, Harness
from waiting import until_sync

from tunaflow_tui.core.processes import ProcessIdentity, identify, start_ticks
from tunaflow_tui.core.storage import Store
from tunaflow_tui.runtime.leftovers import AgentStillRunning
from tunaflow_tui.runtime.runtime import WorkflowRuntime


async def test_no_second_agent_starts_in_a_conversation_where_one_still_runs(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}])
    pid = leave_agent_running(harness.project)
    rt = WorkflowRuntime(harness.project, harness.settings())
    try:
        [leftover] = rt.leftover_agents()
        assert leftover.record.identity.pid == pid and leftover.stoppable
        with pytest.raises(AgentStillRunning) as info:
            await rt.send_user_message("Please add multiplication")
        message = str(info.value)
        assert "architect agent (fclaude)" in message and f"process group {pid}" in message
        assert "Stop leftover agents" in message and "wait" in message
        assert harness.calls() == []  # no agent was started
        assert [m.role for m in rt.store.list_messages("main", limit=10)] == ["assistant"]  # refused: nothing stored

        [stopped] = await rt.stop_leftover_agents()
        assert stopped.record.identity.pid == pid
        assert not group_alive(pid)  # it ignored SIGTERM: SIGKILL ended it
        assert rt.leftover_agents() == ()
        result = await rt.send_user_message("Please add multiplication")
        assert result is not None and result.ok and rt.store.list_plans() != ()
    finally:
        rt.close()
        kill_groups([pid])


async def test_an_agent_that_ended_on_its_own_is_forgotten(harness: Harness) -> None:
    pid = leave_agent_running(harness.project)
    kill_groups([pid])
    until_sync(lambda: not group_alive(pid), "the agent's process group to end")
    with Store.open(harness.project) as store:
        assert len(store.list_processes()) == 1
        rt = WorkflowRuntime(harness.project, harness.settings(), store=store)
        assert rt.leftover_agents() == ()
        assert store.list_processes() == ()


def test_a_reused_pid_is_not_the_recorded_process() -> None:
    """The start time tells the recorded leader from a later process that got the same pid."""
    me = identify(os.getpid())
    assert me.start_ticks == start_ticks(os.getpid()) and me.start_ticks is not None
    from tunaflow_tui.core.processes import group_alive as alive

    assert alive(me)
    assert not alive(ProcessIdentity(me.pid, me.pgid, me.start_ticks - 1))
