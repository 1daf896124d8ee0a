"""A CLI turn's events carry no credential of its environment, however the CLI splits or cuts it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tunaflow_tui.agents.agent_events import EngineError, EngineEvent, FinalMessage, TextDelta
from tunaflow_tui.agents.base import PermissionProfile, Turn, TurnRequest
from tunaflow_tui.agents.claude import ClaudeEngine
from tunaflow_tui.core.settings import EngineConfig

pytestmark = pytest.mark.asyncio

CANARY = "canary-7f3Qx9LmZ2pWv8Rk"
Collect = Callable[[Turn], Awaitable[list[EngineEvent]]]


def _turn(fake_cli: Any, scenario: str) -> Turn:
    env = fake_cli.env(scenario, LEAKY_API_KEY=CANARY)
    engine = ClaudeEngine(EngineConfig(name="claude", type="claude", env=env, timeout_idle_s=3))
    return engine.start(TurnRequest(prompt="what is my key?", cwd=fake_cli.cwd, profile=PermissionProfile.CHAT))


def _pieces(events: list[EngineEvent]) -> list[str]:
    return [CANARY[start:start + 6] for start in range(len(CANARY) - 5) if CANARY[start:start + 6] in repr(events)]


async def test_a_credential_dripped_one_character_per_delta_is_masked(fake_cli: Any, collect: Collect) -> None:
    events = await collect(_turn(fake_cli, "drip"))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Your key is *** - keep it safe."
    assert events[-1] == FinalMessage("Your key is *** - keep it safe.")
    assert _pieces(events) == []


@pytest.mark.parametrize("scenario", ["drip-crash", "drip-hang"])
async def test_a_turn_ending_mid_credential_keeps_no_piece_of_it(
        fake_cli: Any, collect: Collect, scenario: str) -> None:
    events = await collect(_turn(fake_cli, scenario))
    error = events[-1]
    assert isinstance(error, EngineError)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Your key is ***"
    assert error.partial_text == "Your key is ***"
    assert _pieces(events) == []


async def test_a_stderr_tail_that_starts_inside_a_credential_keeps_no_piece_of_it(
        fake_cli: Any, collect: Collect) -> None:
    events = await collect(_turn(fake_cli, "leak-long"))
    error = events[-1]
    assert isinstance(error, EngineError) and error.stderr_tail.endswith("xxxx")
    assert CANARY[-6:] not in error.stderr_tail
    assert _pieces(events) == []


async def test_tool_details_notices_and_errors_are_masked_whole() -> None:
    from collections.abc import AsyncIterator

    from tunaflow_tui.agents.agent_events import ErrorKind, Notice, ToolLine, ToolUse
    from tunaflow_tui.agents.redaction import masked_events
    from tunaflow_tui.core.secret_masking import SecretRegistry

    async def stream() -> AsyncIterator[EngineEvent]:
        yield TextDelta("Calling with can")
        yield ToolUse(ToolLine("Bash", f"curl -H 'x-api-key: {CANARY}' https://api.example"))
        yield Notice(f"retrying with {CANARY}")
        yield EngineError(ErrorKind.CRASHED, f"died holding {CANARY}", stderr_tail=CANARY, partial_text=CANARY)

    events = [event async for event in masked_events(stream(), SecretRegistry.build([CANARY]))]
    assert _pieces(events) == []
    tool_at = next(i for i, event in enumerate(events) if isinstance(event, ToolUse))
    before = "".join(e.text for e in events[:tool_at] if isinstance(e, TextDelta))
    assert before == "Calling with can", "a text block ends at a tool call: what was held back comes first"
    tool = events[tool_at]
    assert isinstance(tool, ToolUse) and tool.tool == ToolLine("Bash", "curl -H 'x-api-key: ***' https://api.example")
