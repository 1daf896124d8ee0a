"""A turn ends with its agent, not with its stdout: hostile CLIs that close, or leave behind holders of, stdout."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from tests.support.waiting import until

from tunaflow_tui.agents.agent_events import EngineError, ErrorKind, FinalMessage
from tunaflow_tui.agents.base import TurnRequest
from tunaflow_tui.agents.claude import ClaudeEngine
from tunaflow_tui.agents.process import SubprocessTurn
from tunaflow_tui.core.settings.engines import EngineConfig


def engine(fake_cli: Any, scenario: str, extra_env: dict[str, str] | None = None, **config: Any) -> ClaudeEngine:
    return ClaudeEngine(EngineConfig(name="claude", env={**fake_cli.env(scenario), **(extra_env or {})}, **config))


def request(fake_cli: Any) -> TurnRequest:
    return TurnRequest(prompt="hi", cwd=fake_cli.cwd)


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


async def test_an_agent_that_closes_stdout_and_keeps_running_is_ended_by_the_idle_timeout(fake_cli, collect) -> None:
    t0 = time.monotonic()
    turn = engine(fake_cli, "close-stdout", timeout_idle_s=0.5, timeout_total_s=30).start(request(fake_cli))
    events = await collect(turn)
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.TIMEOUT
    assert "No output for 0.5 s" in err.message
    assert time.monotonic() - t0 < 15  # not the total timeout
    assert isinstance(turn, SubprocessTurn) and turn.pid is not None and not running(turn.pid)


async def test_a_complete_answer_ends_the_turn_while_a_grandchild_holds_stdout(fake_cli, collect, tmp_path) -> None:
    pidfile = tmp_path / "holder.pid"
    t0 = time.monotonic()
    turn = engine(fake_cli, "holder-ok", {"FAKE_CLI_PIDFILE": str(pidfile)}, timeout_idle_s=20).start(
        request(fake_cli))
    events = await collect(turn)
    assert isinstance(events[-1], FinalMessage), events[-1]
    assert events[-1].text == "Hello from the fake model."
    assert time.monotonic() - t0 < 15  # not the idle timeout
    holder = int(pidfile.read_text())
    await until(None, lambda: not running(holder), "the grandchild holding stdout to be killed", limit=10)


async def test_a_grandchild_that_left_the_process_group_ends_with_the_turn(fake_cli, collect, tmp_path) -> None:
    pidfile = tmp_path / "holder.pid"
    turn = engine(fake_cli, "holder-ok", {"FAKE_CLI_PIDFILE": str(pidfile), "FAKE_CLI_DETACH": "setsid"},
                  timeout_idle_s=20).start(request(fake_cli))
    events = await collect(turn)
    assert isinstance(events[-1], FinalMessage), events[-1]
    holder = int(pidfile.read_text())
    assert os.getsid(holder) != turn.pid if running(holder) else True  # it really had left the session
    await until(None, lambda: not running(holder), "the setsid grandchild to be killed", limit=10)


def test_a_command_line_turn_with_a_detached_grandchild_ends_cleanly(fake_cli, tmp_path) -> None:
    """As ``ask`` runs a turn: its own event loop, closed at the end; nothing printed about a closed loop."""
    pidfile = tmp_path / "holder.pid"
    script = textwrap.dedent(f"""
        import asyncio
        from pathlib import Path
        from tunaflow_tui.agents.base import TurnRequest
        from tunaflow_tui.agents.claude import ClaudeEngine
        from tunaflow_tui.core.settings.engines import EngineConfig

        async def main():
            env = {fake_cli.env("holder-ok", FAKE_CLI_PIDFILE=str(pidfile), FAKE_CLI_DETACH="setsid")!r}
            turn = ClaudeEngine(EngineConfig(name="claude", env=env, timeout_idle_s=20)).start(
                TurnRequest(prompt="hi", cwd=Path({str(fake_cli.cwd)!r})))
            async for event in turn:
                last = event
            print(type(last).__name__, getattr(last, "text", ""))

        asyncio.run(main())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "FinalMessage Hello from the fake model."
    assert "Event loop is closed" not in done.stderr
    assert "Exception ignored" not in done.stderr
    assert not running(int(pidfile.read_text()))


async def test_a_reply_read_slowly_after_the_agent_exited_arrives_whole(fake_cli, monkeypatch) -> None:
    """On a loaded machine the caller takes its time over each event while the CLI has long exited: the
    drain window counts only the wait for more output, so the reply and its result are never cut."""
    import asyncio
    import functools

    from tunaflow_tui.agents import claude, process

    monkeypatch.setattr(process, "READ_CHUNK", 64)  # the rest of the reply comes in many small reads
    monkeypatch.setattr(claude, "ProcessSpec", functools.partial(process.ProcessSpec, exit_drain_s=0.05))
    turn = engine(fake_cli, "ok", timeout_idle_s=20).start(request(fake_cli))
    events = []
    async for event in turn:
        events.append(event)
        await asyncio.sleep(0.02)  # a slow caller: together far longer than the drain window
    assert isinstance(events[-1], FinalMessage), events[-1]
    assert events[-1].text == "Hello from the fake model."
