"""GeminiEngine against a fake `gemini` that replays real captured stream-json runs and exit codes."""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest

from tunaflow_tui.agents.agent_events import (
    EngineError,
    ErrorKind,
    FinalMessage,
    SessionStarted,
    TextDelta,
    ToolLine,
    ToolUse,
    Usage,
)
from tunaflow_tui.agents.base import PermissionProfile, TurnRequest
from tunaflow_tui.agents.gemini import GeminiEngine, http_status_from_exit
from tunaflow_tui.core.settings.engines import EngineConfig


def engine(fake_cli: Any, scenario: str = "ok", **config: Any) -> GeminiEngine:
    return GeminiEngine(EngineConfig(name="gemini", env=fake_cli.env(scenario), **config))


def request(fake_cli: Any, **kw: Any) -> TurnRequest:
    return TurnRequest(prompt=kw.pop("prompt", "say hello"), cwd=fake_cli.cwd, **kw)


async def test_success_stream(fake_cli, collect, flags_of) -> None:
    events = await collect(engine(fake_cli, model="flash").start(request(fake_cli, system="You are the Reviewer.")))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", " from", " the", " fake", " model", "."]
    assert Usage(input_tokens=50, output_tokens=6, cached_tokens=0, cost_usd=None) in events
    assert events[-1] == FinalMessage("Hello from the fake model.")
    call = fake_cli.calls()[-1]
    argv = call["argv"]
    session = argv[argv.index("--session-id") + 1]
    uuid.UUID(session)
    assert SessionStarted(session) in events
    assert argv[argv.index("-m") + 1] == "flash"
    assert "--skip-trust" in argv and "-p" not in argv
    assert call["stdin"] == "say hello"
    assert call["persona"] == "You are the Reviewer."
    assert not os.path.exists(call["persona_file"]), "the persona file is removed after the turn"
    assert flags_of(argv) <= GeminiEngine.FLAGS


async def test_tool_use_and_result(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "read").start(request(fake_cli)))
    assert [e for e in events if isinstance(e, ToolUse)] == [
        ToolUse(ToolLine("read_file", "README.md"), "started"), ToolUse(ToolLine("read_file", "README.md"), "completed")]
    assert events[-1] == FinalMessage("Reading.Hello from the fake model.")


async def test_read_only_never_uses_plan_mode(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "write-default").start(
        request(fake_cli, profile=PermissionProfile.READ_ONLY)))
    argv = fake_cli.last_argv()
    assert argv[argv.index("--approval-mode") + 1] == "default"
    assert ToolUse(ToolLine("write_file", "new.txt"), "failed") in events
    await collect(engine(fake_cli).start(request(fake_cli, profile=PermissionProfile.EDIT)))
    argv = fake_cli.last_argv()
    assert argv[argv.index("--approval-mode") + 1] == "auto_edit"


async def test_resume_exact_session(fake_cli, collect) -> None:
    sid = "2cea5a59-bdbd-486c-afc0-e0417828c906"
    events = await collect(engine(fake_cli).start(request(fake_cli, resume_session_id=sid)))
    argv = fake_cli.last_argv()
    assert argv[argv.index("--resume") + 1] == sid and "--session-id" not in argv
    assert SessionStarted(sid) in events and isinstance(events[-1], FinalMessage)
    assert fake_cli.calls()[-1]["persona_file"] is None


@pytest.mark.parametrize(("scenario", "kind", "code", "text"), [
    ("noauth", ErrorKind.NOT_LOGGED_IN, 41, "GEMINI_API_KEY"),
    ("badresume", ErrorKind.BAD_REQUEST, 42, "Invalid session identifier"),
    ("untrusted", ErrorKind.UNTRUSTED_FOLDER, 55, "trusted directory"),
    ("400", ErrorKind.AUTH_REJECTED, 144, "API key not valid"),
    ("401", ErrorKind.AUTH_REJECTED, 145, "invalid authentication"),
    ("429", ErrorKind.RATE_LIMITED, 173, "Quota exceeded"),
    ("turnlimit", ErrorKind.CRASHED, 53, "turn limit"),
])
async def test_failures_map_exit_codes(fake_cli, collect, scenario: str, kind: ErrorKind, code: int,
                                       text: str) -> None:
    sid = "00000000-1111-2222-3333-444444444444" if scenario == "badresume" else None
    events = await collect(engine(fake_cli, scenario).start(request(fake_cli, resume_session_id=sid)))
    err = events[-1]
    assert isinstance(err, EngineError)
    assert err.kind is kind and err.exit_code == code
    assert text in err.message + err.stderr_tail
    assert sum(isinstance(e, EngineError | FinalMessage) for e in events) == 1


def test_http_status_from_exit_code() -> None:
    assert http_status_from_exit(144) == 400
    assert http_status_from_exit(145) == 401
    assert http_status_from_exit(173) == 429
    assert http_status_from_exit(130) is None
    assert http_status_from_exit(1) is None


async def test_the_developer_gets_a_policy_that_denies_git_push(fake_cli, collect) -> None:
    import tomllib
    from pathlib import Path

    await collect(engine(fake_cli).start(request(fake_cli, profile=PermissionProfile.EDIT)))
    argv = fake_cli.last_argv()
    policy = Path(argv[argv.index("--policy") + 1])
    [rule] = tomllib.loads(policy.read_text(encoding="utf-8"))["rule"]
    assert rule == {"toolName": "run_shell_command", "commandPrefix": "git push", "decision": "deny",
                    "priority": rule["priority"]}
    await collect(engine(fake_cli).start(request(fake_cli, profile=PermissionProfile.EDIT, allow_push=True)))
    assert "--policy" not in fake_cli.last_argv()
    await collect(engine(fake_cli).start(request(fake_cli, profile=PermissionProfile.READ_ONLY)))
    assert "--policy" not in fake_cli.last_argv()
