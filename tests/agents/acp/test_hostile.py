"""An ACP agent that floods, dies, hangs on a question or will not stop: the turn still ends cleanly."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from acp_rig import (
    AcpRig,
    act,
    answer_from_client,
    capture,
    chunk,
    collect,
    expect,
    result,
    session_id,
    until_prompt,
)
from waiting import until

from tunaflow_tui.agents.agent_events import (
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    ProcessStarted,
    TextDelta,
)
from tunaflow_tui.agents.base import PermissionProfile
from tunaflow_tui.agents.permissions import PermissionAnswer, PermissionRequest


def until_permission(name: str = "claude-fake-write-allow") -> list[dict[str, Any]]:
    """A capture's lines up to and including the agent's permission request."""
    entries = capture(name)
    for i, entry in enumerate(entries):
        if entry["msg"].get("method") == "session/request_permission":
            return entries[: i + 1]
    raise AssertionError("no permission request in the capture")


class NobodyAnswers:
    """A user who sees the question and never answers; remembers whether the question was withdrawn."""

    def __init__(self) -> None:
        self.asked: list[PermissionRequest] = []
        self.withdrawn = False

    async def decide(self, request: PermissionRequest) -> PermissionAnswer | None:
        self.asked.append(request)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.withdrawn = True
            raise
        return None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie no one has reaped yet is gone for every purpose here
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def test_two_hundred_chunks_arrive_in_order(rig: AcpRig) -> None:
    entries = until_prompt(capture("codex-fake-ok"))
    sid = session_id(entries)
    entries += [chunk(sid, f"{i} ") for i in range(200)] + [result(3, {"stopReason": "end_turn"})]
    events = await collect(rig.engine(entries).start(rig.request()))
    assert [e.text for e in events if isinstance(e, TextDelta)] == [f"{i} " for i in range(200)]
    assert events[-1] == FinalMessage("".join(f"{i} " for i in range(200)))


async def test_cancel_while_a_permission_is_open_tells_the_agent_and_withdraws_the_question(rig: AcpRig) -> None:
    entries = [*until_permission(), expect("session/cancel"), answer_from_client(0), result(3, {"stopReason": "cancelled"})]
    user = NobodyAnswers()
    turn = rig.engine(entries).start(rig.request(role="architect", profile=PermissionProfile.CHAT, broker=user))
    events: list[EngineEvent] = []

    async def run() -> None:
        events.extend([e async for e in turn])

    task = asyncio.create_task(run())
    await until(None, lambda: user.asked, "the permission question")
    assert user.asked[0].title == "Write /opt/scratch" and user.asked[0].kind == "edit"
    assert "+written by fake model" in user.asked[0].diff
    await turn.cancel()
    await asyncio.wait_for(task, 60)
    final = events[-1]
    assert isinstance(final, EngineError) and final.kind is ErrorKind.CANCELLED
    assert final.partial_text == "Let me read the file."
    methods = [m.get("method") for m in rig.received()]
    assert "session/cancel" in methods
    assert rig.answers()[0]["result"] == {"outcome": {"outcome": "cancelled"}}
    assert user.withdrawn


async def test_a_question_nobody_answers_ends_with_the_idle_timeout_as_cancelled(rig: AcpRig) -> None:
    entries = [*until_permission(), act("hang")]
    user = NobodyAnswers()
    events = await collect(rig.engine(entries, timeout_idle_s=1).start(
        rig.request(role="architect", profile=PermissionProfile.CHAT, broker=user)))
    final = events[-1]
    assert isinstance(final, EngineError) and final.kind is ErrorKind.TIMEOUT
    assert "permission request nobody answered was cancelled" in final.message
    await until(None, lambda: rig.answers(), "the agent to log the answer")
    assert rig.answers()[0]["result"] == {"outcome": {"outcome": "cancelled"}}
    assert user.withdrawn


async def test_without_anyone_to_ask_the_request_is_cancelled_at_once(rig: AcpRig) -> None:
    entries = [*until_permission(), answer_from_client(0), result(3, {"stopReason": "end_turn"})]
    events = await collect(rig.engine(entries).start(rig.request(role="architect", profile=PermissionProfile.CHAT)))
    assert isinstance(events[-1], FinalMessage)
    assert rig.answers()[0]["result"] == {"outcome": {"outcome": "cancelled"}}


async def test_two_megabytes_of_stderr_do_not_stall_the_protocol(rig: AcpRig) -> None:
    entries = capture("gemini-ok")
    entries.insert(1, act("stderr", bytes=2_000_000))
    events = await asyncio.wait_for(collect(rig.engine(entries).start(rig.request())), 120)
    assert events[-1] == FinalMessage("Hello from the fake model.")


async def test_an_agent_that_dies_mid_turn_gives_a_clear_error_with_its_last_words(rig: AcpRig) -> None:
    entries = until_prompt(capture("codex-fake-ok"))
    sid = session_id(entries)
    entries += [chunk(sid, "Hello"), chunk(sid, " from"),
                act("stderr_text", text="thread 'main' panicked: bubblewrap is unavailable"), act("exit", code=101)]
    events = await asyncio.wait_for(collect(rig.engine(entries).start(rig.request())), 120)
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.CRASHED
    assert "101" in error.message
    assert "bubblewrap is unavailable" in error.stderr_tail
    assert error.partial_text == "Hello from"


async def test_cancel_ends_an_agent_that_ignores_sigterm_and_its_children(rig: AcpRig) -> None:
    entries = [*until_prompt(capture("codex-fake-ok")), act("spawn_child"), act("ignore_term"), act("hang")]
    turn = rig.engine(entries).start(rig.request())
    events: list[EngineEvent] = []

    async def run() -> None:
        events.extend([e async for e in turn])

    task = asyncio.create_task(run())
    await until(None, lambda: rig.logged("child"), "the agent's child")
    await turn.cancel()
    await asyncio.wait_for(task, 60)
    agent = next(e.pid for e in events if isinstance(e, ProcessStarted))
    child = rig.logged("child")[0]
    await until(None, lambda: not alive(agent) and not alive(child), "the agent and its child to be gone", 30)
    assert isinstance(events[-1], EngineError) and events[-1].kind is ErrorKind.CANCELLED


async def test_closing_the_stream_early_leaves_no_process_behind(rig: AcpRig) -> None:
    entries = until_prompt(capture("codex-fake-ok"))
    entries += [chunk(session_id(entries), "Hi"), act("spawn_child"), act("hang")]
    turn = rig.engine(entries).start(rig.request())
    stream = aiter(turn)
    agent = None
    async for event in stream:
        if isinstance(event, ProcessStarted):
            agent = event.pid
        if isinstance(event, TextDelta):
            break
    assert agent is not None
    await until(None, lambda: rig.logged("child"), "the agent's child")
    await stream.aclose()  # type: ignore[attr-defined]
    child = rig.logged("child")[0]
    await until(None, lambda: not alive(agent) and not alive(child), "the agent and its child to be gone", 30)


async def test_an_endless_line_is_cut_off_not_held(rig: AcpRig) -> None:
    entries = until_prompt(capture("codex-fake-ok"))
    entries += [chunk(session_id(entries), "x" * 1_500_000), act("hang")]
    events = await asyncio.wait_for(collect(rig.engine(entries, max_output_bytes=100_000).start(rig.request())), 120)
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.OUTPUT_TOO_LARGE
    assert "longer than 1048576 bytes" in error.message
    assert not [e for e in events if isinstance(e, TextDelta)]


async def test_a_reply_over_the_cap_stops_the_agent(rig: AcpRig) -> None:
    entries = until_prompt(capture("codex-fake-ok"))
    sid = session_id(entries)
    entries += [chunk(sid, "y" * 60_000) for _ in range(3)] + [act("hang")]
    events = await asyncio.wait_for(collect(rig.engine(entries, max_output_bytes=100_000).start(rig.request())), 120)
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.OUTPUT_TOO_LARGE
    assert len(error.partial_text) <= 180_000


async def test_cancelling_the_task_that_reads_the_turn_also_tells_the_agent(rig: AcpRig) -> None:
    entries = [*until_permission(), expect("session/cancel"), answer_from_client(0),
               result(3, {"stopReason": "cancelled"})]
    user = NobodyAnswers()
    turn = rig.engine(entries).start(rig.request(role="architect", profile=PermissionProfile.CHAT, broker=user))

    async def read() -> None:
        async for _event in turn:
            pass

    task = asyncio.create_task(read())
    await until(None, lambda: user.asked, "the permission question")
    task.cancel()  # what the app does when the user stops the turn
    await asyncio.gather(task, return_exceptions=True)
    await turn.cancel()
    assert "session/cancel" in [m.get("method") for m in rig.received()]
    assert rig.answers()[0]["result"] == {"outcome": {"outcome": "cancelled"}}
    assert user.withdrawn


async def test_the_stream_ends_only_once_the_cancelled_agent_is_gone(rig: AcpRig) -> None:
    entries = [*until_prompt(capture("codex-fake-ok")), act("ignore_term"), act("spawn_child"), act("hang")]
    turn = rig.engine(entries).start(rig.request())
    events: list[EngineEvent] = []

    async def read() -> None:
        events.extend([e async for e in turn])

    reading = asyncio.create_task(read())
    await until(None, lambda: rig.logged("child"), "the agent's child")
    cancelling = asyncio.create_task(turn.cancel())  # the stop takes seconds: the agent ignores both asks
    await asyncio.wait_for(reading, 60)
    agent = next(e.pid for e in events if isinstance(e, ProcessStarted))
    assert not alive(agent) and not alive(rig.logged("child")[0])  # at once, no waiting
    await cancelling
