"""Run one agent CLI turn as a subprocess and turn its JSON lines into engine events.

Shared by the claude, codex and gemini adapters. The subprocess runs in its own session (process
group), and its environment carries a per-turn mark (:mod:`tunaflow_tui.core.turn_marks`), so that
cancelling, timing out, hitting the output cap or simply finishing ends every process the CLI
started — those that left the group with ``setsid`` included.

The turn ends with the agent, not with its stdout: once the CLI has exited, what is still in the
pipe is read until nothing more arrives for a short drain window, and the turn ends, even while a
leftover descendant holds stdout open; a CLI that closes stdout and keeps running is stopped by the idle timeout.
Output is read in bounded chunks, so an enormous line without a newline cannot exhaust memory: the
total bytes read are capped by ``max_output_bytes``.
"""

from __future__ import annotations

import abc
import asyncio
import codecs
import contextlib
import os
import signal
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tunaflow_tui.agents.agent_events import (
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    Notice,
    ProcessStarted,
)
from tunaflow_tui.agents.base import Turn
from tunaflow_tui.agents.jsonlines import decode_json_line
from tunaflow_tui.agents.redaction import masked_events
from tunaflow_tui.core.processes import LIVE_GROUPS, identify
from tunaflow_tui.core.secret_masking import SecretRegistry, StreamMasker
from tunaflow_tui.core.turn_marks import MARK_VARIABLE, end_marked, new_mark

#: how much of stderr is kept for error cards
STDERR_TAIL_BYTES = 8192
#: bytes read from stdout per read call
READ_CHUNK = 65536
#: how long a process may take to exit after SIGTERM before the group gets SIGKILL
DEFAULT_KILL_GRACE_S = 2.0
#: how long stdout is still read after the CLI exited (its last lines may still be in the pipe)
DEFAULT_EXIT_DRAIN_S = 1.0
#: how often the reader checks whether the CLI has exited
_EXIT_POLL_S = 0.02

def merged_env(config_env: Mapping[str, str], extra_env: Mapping[str, str]) -> dict[str, str]:
    """The subprocess environment: this process's environment, then the engine's, then the turn's."""
    env = dict(os.environ)
    env.update(config_env)
    env.update(extra_env)
    return env


def tail_text(data: bytes | bytearray, max_lines: int = 40) -> str:
    """Decode (replacing invalid UTF-8) and keep the last ``max_lines`` lines."""
    text = bytes(data).decode("utf-8", errors="replace")
    lines = text.rstrip("\n").splitlines()
    return "\n".join(lines[-max_lines:])


class StreamParser(abc.ABC):
    """Turns one CLI's JSON objects into events; one parser per turn."""

    @abc.abstractmethod
    def on_json(self, obj: dict[str, Any]) -> list[EngineEvent]:
        """Events for one JSON object from stdout (never a terminal event). Unknown types → []."""

    @abc.abstractmethod
    def finish(self, exit_code: int, stderr_tail: str, malformed_lines: int) -> FinalMessage | EngineError:
        """The one terminal event, once stdout closed and the process exited with ``exit_code``."""

    @property
    @abc.abstractmethod
    def partial_text(self) -> str:
        """The reply text received so far (kept on errors, cancel and timeouts)."""


@dataclass(frozen=True, slots=True)
class ProcessSpec:
    """How to start the process for one turn."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]
    stdin_data: bytes | None = None  # None: stdin is /dev/null; else written then closed
    timeout_idle_s: float = 600.0
    timeout_total_s: float = 3600.0
    max_output_bytes: int = 20_000_000
    #: how the user configures this engine's binary (used in the binary-missing message)
    config_hint: str = ""
    kill_grace_s: float = DEFAULT_KILL_GRACE_S
    exit_drain_s: float = DEFAULT_EXIT_DRAIN_S
    cleanup: list[Callable[[], None]] = field(default_factory=list)


#: an async check run before the process starts; returning an EngineError ends the turn there
Preflight = Callable[[], Awaitable[EngineError | None]]


class SubprocessTurn(Turn):
    """A turn backed by one CLI subprocess that prints JSON lines on stdout."""

    def __init__(self, spec: ProcessSpec, parser: StreamParser, preflight: Preflight | None = None) -> None:
        """Prepare the turn; nothing starts until it is iterated."""
        self._spec = spec
        self._parser = parser
        self._preflight = preflight
        self._proc: asyncio.subprocess.Process | None = None
        self._cancelled = False
        self._started = False
        self._registry = SecretRegistry.from_env(spec.env)
        self._mark = new_mark()

    @property
    def pid(self) -> int | None:
        """The process id (also its process group id) once started."""
        return self._proc.pid if self._proc else None

    def __aiter__(self) -> AsyncIterator[EngineEvent]:
        """Run the process and yield its events, ending with exactly one terminal event."""
        if self._started:
            raise RuntimeError("a turn can be iterated only once")
        self._started = True
        return self._events()

    async def cancel(self) -> None:
        """Kill the whole process group; the stream then ends with EngineError(CANCELLED)."""
        self._cancelled = True
        if self._proc is not None and self._proc.returncode is None:
            await self._kill_group()

    async def _events(self) -> AsyncIterator[EngineEvent]:
        try:
            async for event in masked_events(self._run(), self._registry):
                yield event
        finally:
            await self._kill_group()
            for cleanup in self._spec.cleanup:
                with contextlib.suppress(OSError):
                    cleanup()

    def _cancelled_error(self, stderr_tail: str = "") -> EngineError:
        return EngineError(ErrorKind.CANCELLED, "The turn was cancelled.", stderr_tail=stderr_tail,
                           partial_text=self._parser.partial_text)

    async def _run(self) -> AsyncIterator[EngineEvent]:
        spec = self._spec
        if self._cancelled:
            yield self._cancelled_error()
            return
        if self._preflight is not None:
            failure = await self._preflight()
            if failure is not None:
                yield failure
                return
        if self._cancelled:
            yield self._cancelled_error()
            return
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *spec.argv,
                cwd=str(spec.cwd),
                env={**spec.env, MARK_VARIABLE: self._mark},
                stdin=asyncio.subprocess.PIPE if spec.stdin_data is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            hint = f" {spec.config_hint}" if spec.config_hint else ""
            yield EngineError(ErrorKind.BINARY_MISSING,
                              f"The command {spec.argv[0]!r} was not found.{hint}")
            return
        except PermissionError as exc:
            yield EngineError(ErrorKind.BINARY_MISSING, f"The command {spec.argv[0]!r} cannot be run: {exc}.")
            return
        except OSError as exc:
            yield EngineError(ErrorKind.CRASHED, f"Could not start {spec.argv[0]!r}: {exc}.")
            return
        identity = identify(self._proc.pid)
        LIVE_GROUPS.add(identity)
        yield ProcessStarted(identity.pid, identity.pgid, identity.start_ticks)
        if self._cancelled:  # cancelled while the process was starting: stop it before it works
            await self._kill_group()
        async for event in self._pump(self._proc):
            yield event

    async def _pump(self, proc: asyncio.subprocess.Process) -> AsyncIterator[EngineEvent]:
        spec = self._spec
        assert proc.stdout is not None and proc.stderr is not None
        stderr_buf: deque[bytes] = deque()
        stderr_size = [0]
        last_activity = [time.monotonic()]
        started = time.monotonic()

        def keep_stderr(masked: str) -> None:
            data = masked.encode("utf-8")
            stderr_buf.append(data)
            stderr_size[0] += len(data)
            while stderr_size[0] - len(stderr_buf[0]) >= STDERR_TAIL_BYTES:
                stderr_size[0] -= len(stderr_buf.popleft())

        async def drain_stderr() -> None:
            assert proc.stderr is not None
            # masked as one stream before the tail is cut, so the tail never starts inside a secret
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            masker = StreamMasker(self._registry)
            try:
                # stderr is logs and retry chatter, not progress: only stdout resets the idle watchdog
                while chunk := await proc.stderr.read(READ_CHUNK):
                    keep_stderr(masker.feed(decoder.decode(chunk)))
            finally:
                keep_stderr(masker.feed(decoder.decode(b"", final=True)) + masker.flush(final=True))

        async def feed_stdin() -> None:
            assert proc.stdin is not None and spec.stdin_data is not None
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                proc.stdin.write(spec.stdin_data)
                await proc.stdin.drain()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                proc.stdin.close()

        def stderr_tail() -> str:
            return tail_text(b"".join(stderr_buf)[-STDERR_TAIL_BYTES:])

        tasks = [asyncio.create_task(drain_stderr())]
        if spec.stdin_data is not None:
            tasks.append(asyncio.create_task(feed_stdin()))
        exit_watch = asyncio.create_task(_until_exited(proc))
        read: asyncio.Task[bytes] | None = None
        total_bytes = 0
        malformed = 0
        pending = bytearray()
        failure: EngineError | None = None
        read_to_end = False  # False when the consumer stopped early or the task was cancelled
        stdout_closed = False
        drain_until: float | None = None  # set once the CLI has exited
        try:
            while True:
                now = time.monotonic()
                if drain_until is None and proc.returncode is not None:
                    drain_until = now + spec.exit_drain_s
                if stdout_closed and proc.returncode is not None:
                    break
                if drain_until is not None and now >= drain_until:
                    break  # the CLI is gone; whoever still holds its stdout is not the turn
                idle_left = spec.timeout_idle_s - (now - last_activity[0])
                total_left = spec.timeout_total_s - (now - started)
                if total_left <= 0:
                    failure = EngineError(ErrorKind.TIMEOUT,
                                          f"The turn took longer than {spec.timeout_total_s:g} s and was stopped.")
                    break
                if idle_left <= 0:
                    failure = EngineError(ErrorKind.TIMEOUT,
                                          f"No output for {spec.timeout_idle_s:g} s; the agent was stopped.")
                    break
                wait_s = min(idle_left, total_left, *(() if drain_until is None else (drain_until - now,)))
                # one read stays pending across wake-ups (not asyncio.wait_for: on Python 3.11 it swallows a
                # cancellation that arrives while a read completes, and a flooding agent makes that near certain)
                waiters: set[asyncio.Task[Any]] = set() if exit_watch.done() else {exit_watch}
                if not stdout_closed:
                    if read is None:
                        read = asyncio.create_task(proc.stdout.read(READ_CHUNK))
                    waiters.add(read)
                if not waiters:
                    continue
                await asyncio.wait(waiters, timeout=wait_s, return_when=asyncio.FIRST_COMPLETED)
                if read is None or not read.done():
                    continue
                chunk = read.result()
                read = None
                if not chunk:
                    stdout_closed = True  # the CLI may still be running: it has until the idle timeout to exit
                    continue
                last_activity[0] = time.monotonic()
                total_bytes += len(chunk)
                if total_bytes > spec.max_output_bytes:
                    failure = EngineError(
                        ErrorKind.OUTPUT_TOO_LARGE,
                        f"The agent printed more than {spec.max_output_bytes} bytes; it was stopped.")
                    break
                pending.extend(chunk)
                while (newline := pending.find(b"\n")) >= 0:
                    line = bytes(pending[:newline])
                    del pending[: newline + 1]
                    events = self._handle_line(line)
                    if events is None:
                        malformed += 1
                        if malformed == 1:
                            yield Notice("Ignored output from the agent that was not valid JSON.")
                        continue
                    for event in events:
                        yield event
                if drain_until is not None:
                    # output still arriving after the exit is read whole: the window counts only the wait for
                    # the next piece, not the time the caller took over this one (a loaded machine, a long reply)
                    drain_until = time.monotonic() + spec.exit_drain_s
            if failure is None and pending and not self._cancelled:
                events = self._handle_line(bytes(pending))
                if events is None:
                    malformed += 1
                for event in events or []:
                    yield event
            read_to_end = True
        finally:
            if failure is not None or self._cancelled or not read_to_end:
                # a cancelled task or an abandoned stream must not wait for the agent to finish on its own
                await self._kill_group()
            exit_code = await self._wait_exit(proc, spec.timeout_total_s - (time.monotonic() - started))
            await self._kill_group()  # whatever the CLI left running, in its group or not
            await _cancel(read, exit_watch)
            await _discard_rest(proc.stdout)  # reach EOF so the pipe transport closes cleanly
            await _finish_tasks(tasks)
        tail = stderr_tail()
        if self._cancelled:
            yield self._cancelled_error(tail)
        elif failure is not None:
            yield replace(failure, stderr_tail=tail, partial_text=self._parser.partial_text, exit_code=exit_code)
        else:
            terminal = self._parser.finish(exit_code, tail, malformed)
            if isinstance(terminal, EngineError):
                terminal = replace(terminal, stderr_tail=terminal.stderr_tail or tail,
                                   exit_code=exit_code if terminal.exit_code is None else terminal.exit_code,
                                   partial_text=terminal.partial_text or self._parser.partial_text)
            yield terminal

    def _handle_line(self, raw: bytes) -> list[EngineEvent] | None:
        """Events for one stdout line; ``None`` when the line is not usable JSON."""
        line = raw.decode("utf-8", errors="replace").strip()
        if not line:
            return []
        try:
            obj = decode_json_line(line)
        except ValueError:
            return None
        if not isinstance(obj, dict):
            return []
        try:
            return [e for e in self._parser.on_json(obj) if not isinstance(e, FinalMessage | EngineError)]
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            # a known event type with an unexpected shape: skip it rather than lose the turn
            return None

    async def _wait_exit(self, proc: asyncio.subprocess.Process, budget: float) -> int:
        if not await exited(proc, max(budget, 0.1)):
            await self._kill_group()
        return proc.returncode if proc.returncode is not None else -signal.SIGKILL

    async def _kill_group(self) -> None:
        """End the CLI's process group and whatever it started (see :func:`end_turn_group`)."""
        if self._proc is not None:
            await end_turn_group(self._proc, self._mark, self._spec.kill_grace_s)


async def end_turn_group(proc: asyncio.subprocess.Process, mark: str, grace_s: float) -> None:
    """End a turn's agent: SIGTERM its process group, SIGKILL it after ``grace_s``, wait until the leader
    is reaped and the group is gone, then kill the descendants that left the group (they carry ``mark``)."""
    pgid = proc.pid
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
        await exited(proc, grace_s)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    await exited(proc, 10.0)
    await _wait_group_gone(pgid)
    # descendants that left the group (setsid) still carry the turn's mark
    await asyncio.to_thread(end_marked, mark)
    LIVE_GROUPS.discard(pgid)


async def exited(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    """Wait (bounded) until the process has exited and been reaped; True if it has.

    Not ``proc.wait()``: on Python 3.11 that also waits until every pipe of the process is closed,
    which never happens while a pipe that an agent flooded is full and nobody reads it — a
    cancelled turn of a flooding agent would wait forever.
    """
    deadline = time.monotonic() + timeout
    while proc.returncode is None:
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def _until_exited(proc: asyncio.subprocess.Process) -> None:
    """Return once the process has exited (its pipes may still be held open by its descendants)."""
    while proc.returncode is None:
        await asyncio.sleep(_EXIT_POLL_S)


async def _cancel(*tasks: asyncio.Task[Any] | None) -> None:
    """Cancel helper tasks that may still be pending and wait until they are done."""
    for task in tasks:
        if task is not None and not task.done():
            task.cancel()
    for task in tasks:
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def _wait_group_gone(pgid: int, timeout: float = 2.0) -> None:
    """Wait (bounded) until no process of the group is left: SIGKILL is delivered asynchronously."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        await asyncio.sleep(0.01)


async def _discard_rest(stream: asyncio.StreamReader, timeout: float = 1.0) -> None:
    """Read and drop whatever is left in a pipe whose writers are dead (bounded in time)."""
    with contextlib.suppress(TimeoutError, OSError):
        async with asyncio.timeout(timeout):
            while await stream.read(READ_CHUNK):
                pass


async def _finish_tasks(tasks: list[asyncio.Task[None]]) -> None:
    """Let the stderr/stdin helpers end (the pipes close once the group is dead); never hang."""
    done, still = await asyncio.wait(tasks, timeout=2.0)
    for task in still:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    del done


def shorten(text: str, limit: int = 120) -> str:
    """One line of at most ``limit`` characters (ellipsis when cut)."""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


_SUMMARY_KEYS = ("file_path", "path", "notebook_path", "command", "pattern", "url", "query",
                 "description", "prompt", "dir_path", "absolute_path")


def tool_summary(params: object, limit: int = 120) -> str:
    """A short human summary of a tool call's input: its file path, command, pattern or URL."""
    if not isinstance(params, dict):
        return ""
    for key in _SUMMARY_KEYS:
        value = params.get(key)
        if isinstance(value, str) and value:
            return shorten(value, limit)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return shorten(" ".join(value), limit)
    return ""


def binary_hint(engine_name: str, default_command: str) -> str:
    """How to fix a missing CLI: install it or set its ``command`` in the engine's configuration."""
    return (f"Install it, or set command = \"/absolute/path/to/{default_command}\" under "
            f"[engines.{engine_name or default_command}] in your tunaflow configuration.")
