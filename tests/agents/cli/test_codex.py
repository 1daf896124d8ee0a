"""CodexEngine against a fake `codex` that replays real captured `codex exec --json` runs."""

from __future__ import annotations

import tomllib
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
from tunaflow_tui.agents.codex import CodexEngine, toml_string
from tunaflow_tui.core.settings.engines import EngineConfig

NEW_THREAD = "01a22b00-0000-7000-8000-00000000abcd"


def engine(fake_cli: Any, scenario: str = "ok", logged_in: bool = True, **config: Any) -> CodexEngine:
    env = fake_cli.env(scenario, FAKE_CODEX_LOGGED_IN="1" if logged_in else "0", CODEX_API_KEY="")
    return CodexEngine(EngineConfig(name="codex", env=env, **config))


def request(fake_cli: Any, **kw: Any) -> TurnRequest:
    return TurnRequest(prompt=kw.pop("prompt", "say hello"), cwd=fake_cli.cwd, **kw)


def exec_calls(fake_cli: Any) -> list[dict[str, Any]]:
    return [c for c in fake_cli.calls() if c["argv"][:1] == ["exec"]]


async def test_success_with_session_usage_and_text(fake_cli, collect, flags_of) -> None:
    eng = engine(fake_cli, model="gpt-5-codex")
    events = await collect(eng.start(request(fake_cli, system="You are the Developer.")))
    assert SessionStarted(NEW_THREAD) in events
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello from the fake model."]
    assert Usage(input_tokens=120, output_tokens=6, cached_tokens=20, cost_usd=None) in events
    assert events[-1] == FinalMessage("Hello from the fake model.")
    assert any(isinstance(e, Notice) and "Model metadata" in e.message for e in events)

    call = exec_calls(fake_cli)[-1]
    argv = call["argv"]
    assert argv[:3] == ["exec", "--json", "--skip-git-repo-check"]
    assert argv[argv.index("-C") + 1] == str(fake_cli.cwd)
    assert argv[argv.index("-m") + 1] == "gpt-5-codex"
    assert 'developer_instructions="You are the Developer."' in argv
    assert argv[-1] == "-" and call["stdin"] == "say hello"
    assert flags_of(argv[1:]) <= CodexEngine.FLAGS


async def test_tool_items_are_reported_live(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "tool").start(request(fake_cli)))
    tools = [e for e in events if isinstance(e, ToolUse)]
    assert tools == [ToolUse(ToolLine("shell", "/bin/bash -lc 'ls -la'"), "started"),
                     ToolUse(ToolLine("shell", "/bin/bash -lc 'ls -la'"), "completed")]
    assert isinstance(events[-1], FinalMessage)


async def test_resume_puts_flags_before_resume_and_reports_per_turn_usage(fake_cli, collect, flags_of) -> None:
    eng = engine(fake_cli)
    await collect(eng.start(request(fake_cli)))  # first turn: 120 in / 6 out cumulative
    events = await collect(eng.start(request(fake_cli, resume_session_id=NEW_THREAD,
                                             profile=PermissionProfile.READ_ONLY)))
    argv = exec_calls(fake_cli)[-1]["argv"]
    assert argv[-3:] == ["resume", NEW_THREAD, "-"]
    before_resume = argv[: argv.index("resume")]
    assert "--json" in before_resume and "--sandbox" in before_resume
    assert flags_of(argv[argv.index("resume"):]) <= CodexEngine.RESUME_FLAGS
    # the thread's cumulative usage went 120 → 240: this turn used 120
    assert Usage(input_tokens=120, output_tokens=6, cached_tokens=20, cost_usd=None) in events
    assert isinstance(events[-1], FinalMessage)


async def test_sandbox_per_profile(fake_cli, collect) -> None:
    eng = engine(fake_cli)
    await collect(eng.start(request(fake_cli, profile=PermissionProfile.READ_ONLY)))
    argv = exec_calls(fake_cli)[-1]["argv"]
    assert argv[argv.index("--sandbox") + 1] == "read-only"
    assert 'approval_policy="never"' in argv
    await collect(eng.start(request(fake_cli, profile=PermissionProfile.EDIT)))
    argv = exec_calls(fake_cli)[-1]["argv"]
    assert argv[argv.index("--sandbox") + 1] == "workspace-write"


async def test_rejected_key_after_reconnects(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "401").start(request(fake_cli)))
    assert sum(isinstance(e, Notice) and "Reconnecting" in e.message for e in events) == 5
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.AUTH_REJECTED
    assert "Incorrect API key" in err.message


async def test_untrusted_folder(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "untrusted").start(request(fake_cli)))
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.UNTRUSTED_FOLDER
    assert "Not inside a trusted directory" in err.stderr_tail


async def test_resume_unknown_thread(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli).start(request(fake_cli, resume_session_id="00000000-dead")))
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.CRASHED
    assert "no rollout found" in err.stderr_tail


async def test_no_credentials_fails_before_starting_the_turn(fake_cli, collect) -> None:
    eng = engine(fake_cli, logged_in=False)
    events = await collect(eng.start(request(fake_cli)))
    assert len(events) == 1
    err = events[0]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.NOT_LOGGED_IN
    assert "codex login" in err.message
    assert exec_calls(fake_cli) == []
    # the answer is cached per engine: a second turn does not ask again
    await collect(eng.start(request(fake_cli)))
    assert sum(c["argv"][:2] == ["login", "status"] for c in fake_cli.calls()) == 1


async def test_codex_api_key_skips_the_login_check(fake_cli, collect) -> None:
    env = fake_cli.env("ok", FAKE_CODEX_LOGGED_IN="0")
    eng = CodexEngine(EngineConfig(name="codex", env=env))
    events = await collect(eng.start(request(fake_cli, extra_env={"CODEX_API_KEY": "sk-test-123456789"})))
    assert isinstance(events[-1], FinalMessage)
    assert not any(c["argv"][:2] == ["login", "status"] for c in fake_cli.calls())


async def test_offline_reconnecting_forever_hits_the_total_timeout(fake_cli, collect) -> None:
    events = await collect(engine(fake_cli, "offline", timeout_total_s=1.0).start(request(fake_cli)))
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.TIMEOUT


def test_persona_is_a_valid_toml_string_whatever_it_contains() -> None:
    tricky = 'Say "hi"\nC:\\path\\to\ttab \u0001 \x7f — 한국어 🎉 \'single\' """triple"""'
    parsed = tomllib.loads(f"developer_instructions={toml_string(tricky)}")
    assert parsed["developer_instructions"] == tricky


async def test_persona_with_quotes_and_newlines_stays_one_argument(fake_cli, collect) -> None:
    persona = 'Line one\nSay "no" to \\ backslashes'
    await collect(engine(fake_cli).start(request(fake_cli, system=persona)))
    argv = exec_calls(fake_cli)[-1]["argv"]
    [setting] = [a for a in argv if a.startswith("developer_instructions=")]
    assert tomllib.loads(setting)["developer_instructions"] == persona


async def test_the_developer_sandbox_has_no_network_to_push_unless_allowed(fake_cli, collect) -> None:
    eng = engine(fake_cli)
    await collect(eng.start(request(fake_cli, profile=PermissionProfile.EDIT)))
    assert "sandbox_workspace_write.network_access=false" in exec_calls(fake_cli)[-1]["argv"]
    await collect(eng.start(request(fake_cli, profile=PermissionProfile.EDIT, allow_push=True)))
    assert "sandbox_workspace_write.network_access=true" in exec_calls(fake_cli)[-1]["argv"]
    await collect(eng.start(request(fake_cli, profile=PermissionProfile.READ_ONLY)))
    assert not any("network_access" in a for a in exec_calls(fake_cli)[-1]["argv"])
