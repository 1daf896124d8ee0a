"""ClaudeEngine against a fake `claude` that replays real captured stream-json runs."""

from __future__ import annotations

import uuid
from typing import Any

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
from tunaflow_tui.agents.claude import ClaudeEngine
from tunaflow_tui.core.settings.engines import EngineConfig


def engine(fake_cli: Any, scenario: str = "ok", **config: Any) -> ClaudeEngine:
    return ClaudeEngine(EngineConfig(name="claude", env=fake_cli.env(scenario), **config))


def request(fake_cli: Any, **kw: Any) -> TurnRequest:
    return TurnRequest(prompt=kw.pop("prompt", "say hello"), cwd=fake_cli.cwd, **kw)


async def test_success_streams_deltas_in_order_then_usage_and_final(fake_cli, collect, flags_of) -> None:
    eng = engine(fake_cli, model="claude-sonnet-4-5")
    events = await collect(eng.start(request(fake_cli, system="You are the Architect.")))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas == ["Hello", " from", " the", " fake", " model", "."]
    usage = [e for e in events if isinstance(e, Usage)]
    assert usage == [Usage(input_tokens=25, output_tokens=6, cached_tokens=0, cost_usd=0.000165)]
    assert events[-1] == FinalMessage("Hello from the fake model.")
    assert sum(isinstance(e, FinalMessage | EngineError) for e in events) == 1

    argv = fake_cli.last_argv()
    session = argv[argv.index("--session-id") + 1]
    uuid.UUID(session)
    assert [e for e in events if isinstance(e, SessionStarted)] == [SessionStarted(session)]
    assert argv[:6] == ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
                        "--model"]
    assert argv[argv.index("--append-system-prompt") + 1] == "You are the Architect."
    assert "--resume" not in argv
    assert fake_cli.calls()[-1]["stdin"] == "say hello"
    assert flags_of(argv) <= ClaudeEngine.FLAGS


async def test_prompt_starting_with_a_dash_goes_through_stdin(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli).start(request(fake_cli, prompt="--help me")))
    assert isinstance(events[-1], FinalMessage)
    call = fake_cli.calls()[-1]
    assert call["stdin"] == "--help me"
    assert "--help me" not in call["argv"]
    assert call["cwd"] == str(fake_cli.cwd)


async def test_without_partial_messages_text_comes_from_assistant_blocks(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "nopartial").start(request(fake_cli)))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello from the fake model."]
    assert events[-1] == FinalMessage("Hello from the fake model.")


async def test_tool_use_is_reported_with_the_file_path(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "read").start(request(fake_cli)))
    tools = [e for e in events if isinstance(e, ToolUse)]
    assert tools == [ToolUse(ToolLine("Read", "/home/dev/project/README.md"), "started"),
                     ToolUse(ToolLine("Read", "/home/dev/project/README.md"), "completed")]
    final = events[-1]
    assert isinstance(final, FinalMessage)
    assert final.text == "Let me read the file.\n\nHello from the fake model."


async def test_permission_denial_becomes_a_warning(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "write").start(request(fake_cli)))
    warnings = [e for e in events if isinstance(e, Notice) and e.level == "warning"]
    assert len(warnings) == 1
    assert "Write" in warnings[0].message and "/home/dev/project/new.txt" in warnings[0].message
    assert ToolUse(ToolLine("Write", "/home/dev/project/new.txt"), "failed") in events
    assert isinstance(events[-1], FinalMessage)


async def test_resume_and_fork_argv(fake_cli, collect) -> None:
    sid = "5b2a1c1e-1111-4222-8333-944445555666"
    events = await collect(engine(fake_cli).start(request(fake_cli, resume_session_id=sid)))
    argv = fake_cli.last_argv()
    assert argv[argv.index("--resume") + 1] == sid
    assert "--session-id" not in argv and "--fork-session" not in argv
    assert SessionStarted(sid) in events

    events = await collect(engine(fake_cli).start(request(fake_cli, resume_session_id=sid, fork=True)))
    argv = fake_cli.last_argv()
    assert argv[argv.index("--resume") + 1] == sid and "--fork-session" in argv
    started = [e for e in events if isinstance(e, SessionStarted)]
    assert len(started) == 1 and started[0].session_id != sid
    assert ClaudeEngine(EngineConfig()).supports_native_fork


async def test_profiles_map_to_claude_permission_flags(fake_cli, collect) -> None:
    await collect(engine(fake_cli).start(request(fake_cli, profile=PermissionProfile.READ_ONLY)))
    argv = fake_cli.last_argv()
    assert argv[argv.index("--tools") + 1] == "Read,Grep,Glob"
    assert argv[argv.index("--permission-mode") + 1] == "plan"
    await collect(engine(fake_cli).start(request(fake_cli, profile=PermissionProfile.EDIT)))
    argv = fake_cli.last_argv()
    assert argv[argv.index("--permission-mode") + 1] == "acceptEdits"
    assert "--tools" not in argv
    await collect(engine(fake_cli).start(request(fake_cli, profile=PermissionProfile.CHAT)))
    assert "--permission-mode" not in fake_cli.last_argv()


async def test_not_logged_in(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "notloggedin").start(request(fake_cli)))
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.NOT_LOGGED_IN
    assert "Not logged in" in err.message and err.exit_code == 1
    assert not any(isinstance(e, TextDelta) for e in events)


async def test_rejected_api_key(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "401").start(request(fake_cli)))
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.AUTH_REJECTED
    assert "Invalid API key" in err.message


async def test_max_turns_is_a_crash_with_the_reason(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "maxturns").start(request(fake_cli)))
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.CRASHED
    assert "Reached maximum number of turns (1)" in err.message
    assert "Let me read the file." in err.partial_text
    assert any(isinstance(e, Usage) and e.cost_usd == 0.000525 for e in events)


async def test_api_retry_is_a_notice_and_connection_failure_an_error(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "retry").start(request(fake_cli)))
    assert any(isinstance(e, Notice) and "retry 1 of 1" in e.message for e in events)
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.CRASHED
    assert "Unable to connect to API" in err.message


async def test_resume_unknown_session(fake_cli, collect) -> None:
    sid = "00000000-2222-3333-4444-555555555555"
    events = await collect(engine(fake_cli).start(request(fake_cli, resume_session_id=sid)))
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.BAD_REQUEST
    assert sid in err.message and "No conversation found" in err.stderr_tail
    assert not any(isinstance(e, SessionStarted) for e in events)


async def test_malformed_lines_and_unknown_types_are_ignored(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "malformed").start(request(fake_cli)))
    assert events[-1] == FinalMessage("Hello from the fake model.")
    notices = [e for e in events if isinstance(e, Notice)]
    assert len(notices) == 1 and "not valid JSON" in notices[0].message


async def test_no_result_line_is_malformed_output(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "no-result").start(request(fake_cli)))
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.MALFORMED_OUTPUT


async def test_crash_keeps_the_stderr_tail(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "crash").start(request(fake_cli)))
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.CRASHED
    assert err.exit_code == 3 and "something went badly wrong" in err.stderr_tail


async def test_the_developer_may_not_push_unless_allowed(fake_cli, collect) -> None:
    await collect(engine(fake_cli).start(request(fake_cli, profile=PermissionProfile.EDIT)))
    argv = fake_cli.last_argv()
    assert argv[argv.index("--disallowedTools") + 1] == "Bash(git push:*)", "a deny rule beats --allowedTools Bash"
    await collect(engine(fake_cli).start(request(fake_cli, profile=PermissionProfile.EDIT, allow_push=True)))
    assert "--disallowedTools" not in fake_cli.last_argv()
