"""Reopening an ACP session: resume where the agent offers it, else load without showing the replay twice."""

from __future__ import annotations

from typing import Any

from acp_rig import AcpRig, capture, chunk, collect, expect, result, session_id, until_prompt

from tunaflow_tui.agents.agent_events import EngineError, ErrorKind, FinalMessage, TextDelta, ToolUse
from tunaflow_tui.agents.base import PermissionProfile, TurnRequest


def reopened(name: str, method: str, replay: list[dict[str, Any]], sid: str) -> list[dict[str, Any]]:
    """A capture's ``initialize`` exchange, then ``method`` for ``sid`` (with ``replay`` before its answer),
    then a prompt answered "new answer"."""
    return [*capture(name)[:2], expect(method, 2), *replay, result(2, {}), expect("session/prompt", 3),
            chunk(sid, "new answer"), result(3, {"stopReason": "end_turn"})]


async def test_an_agent_that_offers_resume_is_resumed_without_replay(rig: AcpRig) -> None:
    entries = reopened("claude-fake-ok", "session/resume", [], "stored-1")
    events = await collect(rig.engine(entries).start(rig.request(resume="stored-1")))
    assert events[-1] == FinalMessage("new answer")
    sent = {m.get("method"): m.get("params") for m in rig.received()}
    assert sent["session/resume"]["sessionId"] == "stored-1"
    assert sent["session/resume"]["cwd"] == str(rig.cwd.resolve())
    assert "session/load" not in sent and "session/new" not in sent


async def test_an_agent_that_only_loads_replays_history_that_is_not_shown_again(rig: AcpRig) -> None:
    sid = "stored-2"
    replay = [chunk(sid, "old question", "user_message_chunk"), chunk(sid, "OLD ANSWER"),
              {"t": 0, "dir": "<-", "msg": {"jsonrpc": "2.0", "method": "session/update", "params": {
                  "sessionId": sid, "update": {"sessionUpdate": "tool_call", "toolCallId": "t-old", "title": "Read",
                                               "kind": "read", "status": "completed",
                                               "locations": [{"path": "/old/file.py"}]}}}}]
    entries = reopened("gemini-ok", "session/load", replay, sid)
    events = await collect(rig.engine(entries).start(rig.request(resume=sid)))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["new answer"]
    assert not [e for e in events if isinstance(e, ToolUse)]
    assert events[-1] == FinalMessage("new answer")
    assert "session/resume" not in [m.get("method") for m in rig.received()]


async def test_an_agent_that_cannot_reopen_a_session_says_so_so_a_new_one_is_started(rig: AcpRig) -> None:
    entries = capture("gemini-ok")[:2]
    entries[1]["msg"]["result"]["agentCapabilities"]["loadSession"] = False
    events = await collect(rig.engine(entries).start(rig.request(resume="stored-3")))
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.BAD_REQUEST  # the runtime starts afresh


async def test_a_new_session_gets_the_persona_before_the_prompt(rig: AcpRig) -> None:
    entries = capture("gemini-ok")
    request = TurnRequest(prompt="say hello", cwd=rig.cwd, system="You are the Developer.", role="developer",
                          profile=PermissionProfile.EDIT)
    await collect(rig.engine(entries).start(request))
    prompt = next(m for m in rig.received() if m.get("method") == "session/prompt")["params"]["prompt"]
    assert [block["text"] for block in prompt] == ["You are the Developer.", "say hello"]


async def test_the_role_mode_is_put_back_when_the_agent_leaves_it(rig: AcpRig) -> None:
    entries = until_prompt(capture("claude-fake-ok"))
    sid = session_id(entries)
    entries += [{"t": 0, "dir": "<-", "msg": {"jsonrpc": "2.0", "method": "session/update", "params": {
                    "sessionId": sid, "update": {"sessionUpdate": "current_mode_update",
                                                 "currentModeId": "acceptEdits"}}}},
                expect("session/set_mode", 9), result(9, {}), chunk(sid, "done"),
                result(3, {"stopReason": "end_turn"})]
    events = await collect(rig.engine(entries).start(rig.request(role="reviewer",
                                                                 profile=PermissionProfile.READ_ONLY)))
    assert events[-1] == FinalMessage("done")
    modes = [m["params"]["modeId"] for m in rig.received() if m.get("method") == "session/set_mode"]
    assert modes == ["plan", "plan"]
