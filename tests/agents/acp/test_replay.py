"""The ACP engine against the real captures of claude-code-acp, codex-acp and gemini --acp."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_rig import AcpRig, capture, collect

from tunaflow_tui.agents.acp.acp_engine import AcpEngine
from tunaflow_tui.agents.agent_events import (
    EngineError,
    ErrorKind,
    FinalMessage,
    Notice,
    SessionStarted,
    TextDelta,
    ToolLine,
    ToolUse,
    Usage,
)
from tunaflow_tui.agents.base import PermissionProfile, TurnRequest
from tunaflow_tui.core.settings.engines import EngineConfig


async def test_gemini_reply_streams_in_order_with_its_session_and_usage(rig: AcpRig) -> None:
    events = await collect(rig.engine(capture("gemini-ok")).start(rig.request(role="architect",
                                                                              profile=PermissionProfile.CHAT)))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello from the fake model."
    assert events[-1] == FinalMessage("Hello from the fake model.")
    assert SessionStarted("b4c73e80-f463-46e5-b887-94825625634f") in events
    usage = [e for e in events if isinstance(e, Usage)]
    assert (usage[0].input_tokens, usage[0].output_tokens) == (50, 6)
    prompt = next(m for m in rig.received() if m.get("method") == "session/prompt")
    assert prompt["params"]["prompt"][-1] == {"type": "text", "text": "write file"}


async def test_codex_token_deltas_make_the_reply(rig: AcpRig) -> None:
    events = await collect(rig.engine(capture("codex-fake-ok")).start(rig.request()))
    final = events[-1]
    assert isinstance(final, FinalMessage)
    assert final.text.endswith("Hello from the fake model.")


async def test_claude_write_in_the_developer_worktree_is_allowed_by_policy_and_written(rig: AcpRig) -> None:
    target = rig.cwd / "notes.txt"
    rig.subst = {"/opt/scratch": str(target)}
    events = await collect(rig.engine(capture("claude-fake-write-allow")).start(rig.request()))
    assert isinstance(events[-1], FinalMessage), events[-1]
    assert target.read_text() == "written by fake model\n"
    outcome = rig.answers()[0]["result"]["outcome"]
    assert outcome == {"outcome": "selected", "optionId": "allow"}  # claude's allow_once id
    tools = [e for e in events if isinstance(e, ToolUse)]
    assert tools[0] == ToolUse(ToolLine("Edit", "notes.txt (+1 −0)"), "started")
    assert tools[-1].status == "completed"


async def test_gemini_edit_reads_through_the_fence_then_writes(rig: AcpRig) -> None:
    target = rig.cwd / "existing.txt"
    target.write_text("old content\n")
    rig.subst = {"/opt/scratch": str(target)}
    events = await collect(rig.engine(capture("gemini-tool-existing")).start(rig.request()))
    assert isinstance(events[-1], FinalMessage), events[-1]
    answers = rig.answers()
    assert answers[0]["result"] == {"content": "old content\n"}
    assert answers[1]["result"]["outcome"] == {"outcome": "selected", "optionId": "proceed_once"}
    assert target.read_text() == "written by fake model\n"


async def test_a_reviewer_that_asks_to_write_is_refused_without_asking_anyone(rig: AcpRig) -> None:
    target = rig.cwd / "notes.txt"
    rig.subst = {"/opt/scratch": str(target)}
    asked: list[object] = []

    class Anyone:
        async def decide(self, request: object) -> None:
            asked.append(request)

    events = await collect(rig.engine(capture("claude-fake-write-allow")).start(
        rig.request(role="reviewer", profile=PermissionProfile.READ_ONLY, broker=Anyone())))
    assert asked == []
    answers = rig.answers()
    assert answers[0]["result"]["outcome"] == {"outcome": "selected", "optionId": "reject"}
    assert answers[1]["error"]["code"] == -32602  # the write the agent tried anyway is refused too
    assert not target.exists()
    init = next(m for m in rig.received() if m.get("method") == "initialize")
    fs = init["params"]["clientCapabilities"]["fs"]
    assert fs["readTextFile"] is True and not fs.get("writeTextFile")  # writing is not even offered
    modes = [m["params"]["modeId"] for m in rig.received() if m.get("method") == "session/set_mode"]
    assert modes == ["plan"]
    assert any(isinstance(e, Notice) and "refused" in e.message and "reviewer" in e.message for e in events)


async def test_claude_without_credentials_says_how_to_sign_in(rig: AcpRig) -> None:
    events = await collect(rig.engine(capture("claude-nocreds")).start(rig.request()))
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.NOT_LOGGED_IN
    assert "Authentication required" in error.message and "claude /login" in error.message


async def test_codex_without_credentials_names_the_variables_to_set(rig: AcpRig) -> None:
    events = await collect(rig.engine(capture("codex-nocreds")).start(rig.request()))
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.NOT_LOGGED_IN
    assert "set CODEX_API_KEY" in error.message and "set OPENAI_API_KEY" in error.message


async def test_gemini_without_a_key_fails_at_the_session(rig: AcpRig) -> None:
    events = await collect(rig.engine(capture("gemini-nocreds")).start(rig.request()))
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.NOT_LOGGED_IN
    assert "Gemini API key is missing" in error.message and "Gemini API key" in error.message


async def test_a_configured_model_is_said_not_to_reach_the_agent(rig: AcpRig) -> None:
    events = await collect(rig.engine(capture("gemini-ok"), model="gemini-2.5-pro").start(rig.request()))
    assert isinstance(events[-1], FinalMessage)
    assert any(isinstance(e, Notice) and "'gemini-2.5-pro' is not sent" in e.message for e in events)


@pytest.mark.parametrize(("command", "kind", "words"), [
    ("/nonexistent/claude-agent-acp", ErrorKind.BINARY_MISSING, "cannot be run"),
    ("gemini --acp 'unclosed", ErrorKind.BAD_REQUEST, "cannot be read"),
    ("", ErrorKind.BAD_REQUEST, "has no command"),
])
async def test_a_command_that_cannot_start_is_a_clear_error(tmp_path: Path, command: str, kind: ErrorKind,
                                                           words: str) -> None:
    engine = AcpEngine(EngineConfig(name="broken", type="acp", command=command))
    events = await collect(engine.start(TurnRequest(prompt="hi", cwd=tmp_path)))
    assert len(events) == 1 and isinstance(events[0], EngineError)
    assert events[0].kind is kind and words in events[0].message and "[engines.broken]" in events[0].message
