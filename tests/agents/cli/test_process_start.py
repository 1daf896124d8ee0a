"""How a subprocess turn starts and ends: a command that cannot run, a preflight that refuses, the
process group it reports, the clean-ups it runs, a turn iterated once only; and how it ends its agent:
SIGTERM first, with time to save its work, and nothing of it left once the turn is over, not even a
descendant that left the process group.

The agents are real processes replaying a captured ``claude`` stream through the real Claude parser.
"""

from __future__ import annotations

import os
import stat
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from waiting import until_sync

from tunaflow_tui.agents.agent_events import (
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    ProcessStarted,
    SessionStarted,
)
from tunaflow_tui.agents.claude import ClaudeStreamParser
from tunaflow_tui.agents.process import Preflight, ProcessSpec, SubprocessTurn
from tunaflow_tui.core.processes import LIVE_GROUPS, start_ticks

STREAM = Path(__file__).resolve().parents[2] / "fakes" / "streams" / "claude-fake-ok.jsonl"
REPLAY = "import sys; sys.stdout.write(open(sys.argv[1]).read())"


def _turn(tmp_path: Path, argv: list[str] | None = None, *, preflight: Preflight | None = None,
          cleanup: list[Callable[[], None]] | None = None, hint: str = "") -> SubprocessTurn:
    spec = ProcessSpec(argv=argv or [sys.executable, "-c", REPLAY, str(STREAM)], cwd=tmp_path,
                       env=dict(os.environ), config_hint=hint, cleanup=cleanup or [])
    return SubprocessTurn(spec, ClaudeStreamParser(), preflight)


async def _all(turn: SubprocessTurn) -> list[EngineEvent]:
    return [event async for event in turn]


async def test_a_turn_reports_its_process_group_and_ends_with_the_reply(tmp_path: Path) -> None:
    turn = _turn(tmp_path)
    assert turn.pid is None, "nothing runs before the turn is iterated"
    events: list[EngineEvent] = []
    tracked: list[int] = []
    async for event in turn:
        events.append(event)
        if isinstance(event, ProcessStarted):  # tracked while it runs: a signal handler ends it on exit
            tracked = [group.pgid for group in LIVE_GROUPS.snapshot()]
    (started,) = [event for event in events if isinstance(event, ProcessStarted)]
    assert started.pgid in tracked
    assert turn.pid is not None and started.pid == started.pgid == turn.pid, "the CLI leads its own group"
    assert turn.pid not in [group.pgid for group in LIVE_GROUPS.snapshot()], "an ended group is no longer tracked"
    assert events[-1] == FinalMessage("Hello from the fake model.")
    with pytest.raises(RuntimeError) as again:
        turn.__aiter__()
    assert str(again.value) == "a turn can be iterated only once"


async def test_clean_ups_run_when_the_turn_ends_even_after_one_fails(tmp_path: Path) -> None:
    done: list[str] = []

    def failing() -> None:
        done.append("first")
        raise OSError("the prompt file is already gone")

    events = await _all(_turn(tmp_path, cleanup=[failing, lambda: done.append("second")]))
    assert isinstance(events[-1], FinalMessage)
    assert done == ["first", "second"]


async def test_a_command_that_is_not_there_names_itself_and_the_fix(tmp_path: Path) -> None:
    missing = str(tmp_path / "claude-not-here")
    (err,) = await _all(_turn(tmp_path, [missing, "-p"], hint="Install it."))
    assert err == EngineError(ErrorKind.BINARY_MISSING, f"The command {missing!r} was not found. Install it.")
    (err,) = await _all(_turn(tmp_path, [missing]))
    assert err == EngineError(ErrorKind.BINARY_MISSING, f"The command {missing!r} was not found.")


async def test_a_command_that_cannot_be_run_says_why(tmp_path: Path) -> None:
    script = tmp_path / "claude"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(stat.S_IRUSR | stat.S_IWUSR)  # not executable
    (err,) = await _all(_turn(tmp_path, [str(script)]))
    assert isinstance(err, EngineError) and err.kind is ErrorKind.BINARY_MISSING
    assert err.message.startswith(f"The command {str(script)!r} cannot be run: ") and "Permission denied" in err.message
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x7fELF not really a program")
    garbage.chmod(stat.S_IRWXU)
    (err,) = await _all(_turn(tmp_path, [str(garbage)]))
    assert isinstance(err, EngineError) and err.kind is ErrorKind.CRASHED
    assert err.message.startswith(f"Could not start {str(garbage)!r}: ") and "Exec format error" in err.message


async def test_a_preflight_that_refuses_ends_the_turn_before_anything_runs(tmp_path: Path) -> None:
    refusal = EngineError(ErrorKind.NOT_LOGGED_IN, "Not logged in: run `claude /login`.")

    async def refuse() -> EngineError | None:
        return refusal

    turn = _turn(tmp_path, preflight=refuse)
    assert await _all(turn) == [refusal] and turn.pid is None

    async def allow() -> EngineError | None:
        return None

    events = await _all(_turn(tmp_path, preflight=allow))
    assert isinstance(events[-1], FinalMessage)


async def test_a_turn_cancelled_during_its_preflight_never_starts(tmp_path: Path) -> None:
    turn: SubprocessTurn

    async def slow_check() -> EngineError | None:
        await turn.cancel()  # the user pressed Esc while the check ran
        return None

    turn = _turn(tmp_path, preflight=slow_check)
    (err,) = await _all(turn)
    assert isinstance(err, EngineError) and err.kind is ErrorKind.CANCELLED and turn.pid is None


# Saves its session when asked to stop (SIGTERM): the save takes a moment, as writing a file does.
TIDY = textwrap.dedent("""
    import os, signal, sys, time
    stream, saved = sys.argv[1:3]
    def save(signum, frame):
        time.sleep(0.2)
        open(saved, 'w').write('session saved')
        sys.exit(0)
    signal.signal(signal.SIGTERM, save)
    lines = open(stream, 'rb').read().splitlines()
    os.write(1, lines[0] + b'\\n')
    time.sleep(60)
""")

# Leaves a helper behind that left the process group (setsid) and ignores SIGTERM, then answers.
DETACHING = textwrap.dedent("""
    import os, subprocess, sys, time
    stream, pidfile = sys.argv[1:3]
    subprocess.Popen([sys.executable, '-c',
                      'import os, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); '
                      'open(sys.argv[1] + ".part", "w").write(str(os.getpid())); '
                      'os.replace(sys.argv[1] + ".part", sys.argv[1]); time.sleep(600)', pidfile],
                     start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not os.path.exists(pidfile):
        time.sleep(0.01)
    sys.stdout.write(open(stream).read())
""")


def _script_turn(tmp_path: Path, script: str, extra: Path, exit_drain_s: float = 1.0) -> SubprocessTurn:
    spec = ProcessSpec(argv=[sys.executable, "-c", script, str(STREAM), str(extra)], cwd=tmp_path,
                       env=dict(os.environ), timeout_idle_s=60, timeout_total_s=120, kill_grace_s=10,
                       exit_drain_s=exit_drain_s)
    return SubprocessTurn(spec, ClaudeStreamParser())


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


async def test_a_cancelled_agent_is_asked_to_stop_first_and_may_save_its_work(tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    turn = _script_turn(tmp_path, TIDY, saved)
    events: list[EngineEvent] = []
    async for event in turn:
        events.append(event)
        if isinstance(event, ProcessStarted):  # its start time tells it from a later process with its pid
            assert event.start_ticks is not None and event.start_ticks == start_ticks(event.pid)
        if isinstance(event, SessionStarted):
            await turn.cancel()
            assert saved.read_text() == "session saved", "SIGTERM came first, and the grace let it finish"
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.CANCELLED


async def test_a_helper_that_left_the_group_does_not_outlive_the_turn(tmp_path: Path) -> None:
    pidfile = tmp_path / "helper.pid"
    events = [event async for event in _script_turn(tmp_path, DETACHING, pidfile)]
    helper = int(pidfile.read_text())
    try:
        assert events[-1] == FinalMessage("Hello from the fake model.")
        until_sync(lambda: not _alive(helper), "the detached helper ended with the turn", limit=10)
    finally:
        if _alive(helper):
            os.kill(helper, 9)


# Leaves a stranger behind: a helper that left the group and shed the turn's mark (a daemon started with a
# clean environment), holding stdout and stderr open for a minute. No kill reaches it.
STRANGER = textwrap.dedent("""
    import os, subprocess, sys, time
    stream, pidfile = sys.argv[1:3]
    subprocess.Popen([sys.executable, '-c',
                      'import os, sys, time; open(sys.argv[1] + ".part", "w").write(str(os.getpid())); '
                      'os.replace(sys.argv[1] + ".part", sys.argv[1]); time.sleep(60)', pidfile],
                     start_new_session=True, env={})
    while not os.path.exists(pidfile):
        time.sleep(0.01)
    sys.stdout.write(open(stream).read())
""")

# Says where it runs, then answers.
WHERE = textwrap.dedent("""
    import os, sys
    stream, out = sys.argv[1:3]
    open(out, 'w').write(os.getcwd())
    sys.stdout.write(open(stream).read())
""")


async def test_the_turn_ends_with_its_agent_though_a_stranger_holds_its_pipes(tmp_path: Path) -> None:
    pidfile = tmp_path / "stranger.pid"
    try:
        events = [event async for event in _script_turn(tmp_path, STRANGER, pidfile, exit_drain_s=0.2)]
        assert events[-1] == FinalMessage("Hello from the fake model.")
        assert _alive(int(pidfile.read_text())), "the stranger is not the turn's to end"
    finally:
        if pidfile.exists() and _alive(int(pidfile.read_text())):
            os.kill(int(pidfile.read_text()), 9)


async def test_the_agent_runs_in_the_turns_folder(tmp_path: Path) -> None:
    folder = tmp_path / "worktree"
    folder.mkdir()
    events = [event async for event in _script_turn(folder, WHERE, tmp_path / "cwd")]
    assert isinstance(events[-1], FinalMessage)
    assert (tmp_path / "cwd").read_text() == str(folder) != os.getcwd()
