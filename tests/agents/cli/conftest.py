"""Fixtures for the CLI adapter tests: fake `claude`/`codex`/`gemini` executables on PATH."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tunaflow_tui.agents.agent_events import EngineEvent
from tunaflow_tui.agents.base import Turn

FAKES_BIN = Path(__file__).resolve().parents[2] / "fakes" / "bin"


@dataclass
class FakeCli:
    """Where the fakes record their invocations, and the env that selects a scenario."""

    log: Path
    cwd: Path

    def env(self, scenario: str = "ok", **extra: str) -> dict[str, str]:
        """Engine env: fakes first on PATH, the scenario, and the invocation log."""
        return {
            "PATH": f"{FAKES_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "FAKE_CLI_SCENARIO": scenario,
            "FAKE_CLI_LOG": str(self.log),
            **extra,
        }

    def calls(self) -> list[dict[str, Any]]:
        """Every recorded invocation, oldest first."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]

    def last_argv(self) -> list[str]:
        """The argv (without the program name) of the latest invocation."""
        return list(self.calls()[-1]["argv"])


@pytest.fixture
def fake_cli(tmp_path: Path) -> FakeCli:
    """A fresh invocation log and working directory."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    return FakeCli(log=tmp_path / "calls.jsonl", cwd=cwd)


async def _collect(turn: Turn) -> list[EngineEvent]:
    """All events of a turn."""
    events: list[EngineEvent] = []
    stream: AsyncIterator[EngineEvent] = turn.__aiter__()
    async for event in stream:
        events.append(event)
    return events


@pytest.fixture
def collect() -> Callable[[Turn], Awaitable[list[EngineEvent]]]:
    """Run a turn to its end and return all of its events."""
    return _collect


@pytest.fixture
def flags_of() -> Callable[[list[str]], set[str]]:
    """The option names in an argv (tokens starting with '-', except a lone '-')."""
    return lambda argv: {a for a in argv if a.startswith("-") and a != "-"}
