"""How a turn reads its agent's output over time: a line that is not JSON, a last line with no newline, a flood
of stderr, pauses just short of a timeout, output written after the agent exited, and the end of a turn.

The agent is a real process replaying a captured ``claude`` stream (tests/fakes/streams) on a schedule the
test gives it (pauses until absolute deadlines on the system's monotonic clock, which every process shares);
its lines go through the real Claude parser.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path
from typing import Any

from tunaflow_tui.agents.agent_events import (
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    Notice,
    TextDelta,
)
from tunaflow_tui.agents.claude import ClaudeStreamParser
from tunaflow_tui.agents.process import ProcessSpec, SubprocessTurn

STREAM = Path(__file__).resolve().parents[2] / "fakes" / "streams" / "claude-fake-ok.jsonl"
LINES = STREAM.read_bytes().splitlines()

# argv[1]: a JSON plan of steps run in order:
#   ["out", hex]            write these bytes to stdout
#   ["err", n]              write about n bytes of log lines to stderr, 1,000 at a time
#   ["until", t]            sleep until time.monotonic() reaches t
#   ["pause", s]            sleep s seconds
#   ["exit", code]          exit now
#   ["late", delay, hex]    fork a helper (same process group, holding stdout) that writes the bytes after
#                           `delay` s, then go on at once
#   ["hold", seconds]       fork a helper that holds stdout open for `seconds` and writes nothing
AGENT = textwrap.dedent("""
    import json, os, sys, time
    for step in json.loads(sys.argv[1]):
        kind = step[0]
        if kind == 'out':
            os.write(1, bytes.fromhex(step[1]))
        elif kind == 'err':
            line = b'retrying: upstream said 529 overloaded, backing off and trying again shortly...\\n'
            data = line * (step[1] // len(line))
            for start in range(0, len(data), 1000):
                os.write(2, data[start:start + 1000])
        elif kind == 'pause':
            time.sleep(step[1])
        elif kind == 'until':
            time.sleep(max(0.0, step[1] - time.monotonic()))
        elif kind == 'exit':
            sys.exit(step[1])
        elif kind in ('late', 'hold'):
            if os.fork() == 0:
                os.close(2)
                time.sleep(step[1])
                if kind == 'late':
                    os.write(1, bytes.fromhex(step[2]))
                os._exit(0)
    sys.exit(0)
""")


def _out(*lines: bytes, newline: bool = True) -> list[Any]:
    data = b"\n".join(lines) + (b"\n" if newline else b"")
    return ["out", data.hex()]


def _turn(tmp_path: Path, steps: list[Any], **spec: Any) -> SubprocessTurn:
    limits = {"timeout_idle_s": 60.0, "timeout_total_s": 120.0, **spec}
    return SubprocessTurn(ProcessSpec(argv=[sys.executable, "-c", AGENT, json.dumps(steps)], cwd=tmp_path,
                                      env=dict(os.environ), **limits), ClaudeStreamParser())


async def _all(turn: SubprocessTurn) -> list[EngineEvent]:
    return [event async for event in turn]


async def test_one_line_that_is_not_json_is_noted_once_before_the_reply_goes_on(tmp_path: Path) -> None:
    events = await _all(_turn(tmp_path, [_out(b"Loading plugins...", *LINES)]))
    notices = [i for i, event in enumerate(events) if isinstance(event, Notice)]
    first_text = next(i for i, event in enumerate(events) if isinstance(event, TextDelta))
    assert len(notices) == 1 and notices[0] < first_text, events
    assert events[-1] == FinalMessage("Hello from the fake model.")


async def test_a_last_line_without_a_newline_is_read_whole(tmp_path: Path) -> None:
    events = await _all(_turn(tmp_path, [_out(*LINES, newline=False)]))
    assert events[-1] == FinalMessage("Hello from the fake model."), events[-1]


async def test_a_flood_of_stderr_keeps_only_its_end_in_memory(tmp_path: Path) -> None:
    """12 MB of retry chatter on stderr: the error shows its end, and the turn holds no more than that end."""
    tracemalloc.start()
    try:
        events = await _all(_turn(tmp_path, [["err", 12_000_000], ["exit", 2]]))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    error = events[-1]
    assert isinstance(error, EngineError) and error.stderr_tail.endswith("trying again shortly..."), error
    assert peak < 3_000_000, f"the turn held {peak / 1e6:.1f} MB of a 12 MB stderr"


async def test_pauses_just_short_of_the_idle_timeout_do_not_stop_the_agent(tmp_path: Path) -> None:
    steps = [_out(*LINES[:3]), ["pause", 2.6], _out(*LINES[3:8]), ["pause", 2.6], _out(*LINES[8:])]
    events = await _all(_turn(tmp_path, steps, timeout_idle_s=3.3))
    assert events[-1] == FinalMessage("Hello from the fake model."), events[-1]


async def test_an_agent_that_ends_just_inside_its_total_time_is_not_stopped(tmp_path: Path) -> None:
    start = time.monotonic()
    events = await _all(_turn(tmp_path, [_out(*LINES[:8]), ["until", start + 5.5], _out(*LINES[8:])],
                              timeout_total_s=6.0))
    assert events[-1] == FinalMessage("Hello from the fake model."), events[-1]


async def test_output_a_helper_writes_just_after_the_agent_exited_arrives_whole(tmp_path: Path) -> None:
    """The CLI exits and its helper, still holding stdout, writes the end of the reply a moment later."""
    rest = b"\n".join(LINES[8:]) + b"\n"
    events = await _all(_turn(tmp_path, [_out(*LINES[:8]), ["late", 0.3, rest.hex()], ["exit", 0]]))
    assert events[-1] == FinalMessage("Hello from the fake model."), events[-1]


async def test_a_turn_ends_once_its_agent_exited_and_closed_its_output_whatever_the_drain_window(
        tmp_path: Path) -> None:
    """The drain window is for output still arriving after the exit; with the output closed there is none."""
    turn = _turn(tmp_path, [_out(*LINES), ["exit", 0]], exit_drain_s=600.0)
    events = await asyncio.wait_for(_all(turn), timeout=60)
    assert events[-1] == FinalMessage("Hello from the fake model."), events[-1]


async def test_waiting_for_a_helper_that_holds_the_output_costs_no_cpu(tmp_path: Path) -> None:
    """After the CLI exited, the turn waits out the drain window for a helper that still holds stdout open:
    asleep, not spinning. (CPU time, not wall time: a loaded machine slows the turn, it does not add to this.)"""
    before = resource.getrusage(resource.RUSAGE_SELF)
    events = await _all(_turn(tmp_path, [_out(*LINES), ["hold", 8.0], ["exit", 0]], exit_drain_s=3.0))
    after = resource.getrusage(resource.RUSAGE_SELF)
    assert events[-1] == FinalMessage("Hello from the fake model."), events[-1]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # the whole turn (start, a 15-line reply, the wait) takes about 0.05 s of CPU; spinning through the
    # wait takes whatever share of a core the machine gives for 3 s
    assert cpu < 0.25, f"{cpu:.2f} s of CPU for a turn that mostly waited 3 s"


async def test_words_on_a_last_line_without_a_newline_are_shown_before_the_crash_is(tmp_path: Path) -> None:
    events = await _all(_turn(tmp_path, [_out(*LINES[:5], newline=False), ["exit", 1]]))
    shown = "".join(event.text for event in events if isinstance(event, TextDelta))
    error = events[-1]
    assert shown == "Hello" and isinstance(error, EngineError) and error.kind is ErrorKind.CRASHED, events
    assert (error.message, error.exit_code, error.partial_text) == (
        "Claude exited with code 1 without a result.", 1, "Hello"), "what the error card shows"


async def test_an_agent_that_exits_after_a_pause_short_of_the_idle_timeout_is_read_to_its_end(tmp_path: Path) -> None:
    """The CLI is silent for most of its idle timeout, then exits; its helper writes the end of the reply
    just after: the exit is no reason to judge the silence early."""
    rest = b"\n".join(LINES[8:]) + b"\n"
    steps = [_out(*LINES[:8]), ["pause", 2.5], ["late", 0.3, rest.hex()], ["exit", 0]]
    events = await _all(_turn(tmp_path, steps, timeout_idle_s=3.3))
    assert events[-1] == FinalMessage("Hello from the fake model."), events[-1]


async def test_a_timed_out_turn_says_what_the_agent_printed_on_stderr_and_how_it_ended(tmp_path: Path) -> None:
    steps = [["err", 300], _out(*LINES[:5]), ["pause", 60]]
    events = await _all(_turn(tmp_path, steps, timeout_idle_s=1.0))
    error = events[-1]
    assert isinstance(error, EngineError) and error.kind is ErrorKind.TIMEOUT, error
    assert error.stderr_tail.endswith("backing off and trying again shortly..."), error
    assert (error.exit_code, error.partial_text) == (-signal.SIGTERM, "Hello"), error
